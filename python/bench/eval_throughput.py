"""Benchmark: evaluation episodes per minute on this machine with 1, 2 and 4 daemons on Ray.

Each count of daemons runs the same jobs (tasks × layouts × seeds, a drifting scripted policy,
one 64×48 camera per tick) through `fakesim_hil.ray_eval.evaluate` on a one-node cluster of that
many daemon actors; the sequential run (one daemon, no Ray) is the baseline beside it. Run it in
a network namespace with only loopback, as the test does (Ray binds every interface):

    FAKESIM_HIL_BIN=target/release/fakesim-hil unshare --net sh -c \\
        'ip link set lo up && exec python python/bench/eval_throughput.py'
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any

import numpy as np
import ray

from fakesim_hil import Client
from fakesim_hil.daemon import LocalDaemon
from fakesim_hil.evaluation import EpisodeOptions, evaluate_sequential, jobs_grid
from fakesim_hil.ray_eval import DAEMON_RESOURCE, evaluate


class Drift:
    """A deterministic scripted policy: every joint a little further along a fixed direction."""

    def __call__(self, observation: dict[str, Any]) -> np.ndarray:
        return observation["joint_pos"] + np.array([0.02, -0.015, 0.025, 0.01, -0.02, 0.03])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=200, help="control ticks per episode")
    parser.add_argument("--daemons", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    options = EpisodeOptions(episode_ticks=args.ticks, cameras=("agentview",), image_size=(64, 48), control_period_s=0.05)
    jobs = jobs_grid(["lift_cube", "push_to_target"], range(6), [0, 1])
    with tempfile.TemporaryDirectory() as runs:
        daemon = LocalDaemon.start(runs)
        try:
            with Client(daemon.address) as client:
                start = time.perf_counter()
                evaluate_sequential(client, Drift(), jobs, options)
                sequential_s = time.perf_counter() - start
        finally:
            daemon.stop()
    print(f"{len(jobs)} episodes of {args.ticks} ticks; load {os.getloadavg()[0]:.2f}")
    print(f"sequential, 1 daemon, no Ray: {60 * len(jobs) / sequential_s:.1f} episodes/min ({sequential_s:.1f} s)")
    most = max(args.daemons)
    ray.init(num_cpus=most, resources={DAEMON_RESOURCE: most}, include_dashboard=False, log_to_driver=False)
    try:
        for n in args.daemons:
            start = time.perf_counter()
            report = evaluate(Drift(), jobs, n_actors=n, options=options)
            wall_s = time.perf_counter() - start
            assert report["overall"]["episodes"] == len(jobs)
            print(
                f"Ray, {n} daemon(s): {60 * len(jobs) / wall_s:.1f} episodes/min ({wall_s:.1f} s, "
                f"{wall_s / sequential_s:.2f} × sequential, actor start-up included)"
            )
    finally:
        ray.shutdown()
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
