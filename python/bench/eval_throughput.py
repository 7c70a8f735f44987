"""Benchmark: evaluation episodes per minute on this machine with 1, 2 and 4 daemons on Ray.

Each count of daemons runs the same jobs (tasks × layouts × seeds, a drifting scripted policy,
one 64×48 camera per tick) through `fakesim_hil.ray_eval.evaluate` on a one-node cluster of that
many daemon actors; the sequential run (one daemon, no Ray) is the baseline beside it, and the
routes take turns for ``--rounds`` rounds so each ratio is measured side by side. Ray's workers
run at niceness 0 (`RAY_worker_niceness`, unless set). Run it in a network namespace with only
loopback, as the test does (Ray binds every interface):

    FAKESIM_HIL_BIN=target/release/fakesim-hil unshare --net sh -c \\
        'ip link set lo up && exec python python/bench/eval_throughput.py'
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Any

import numpy as np
import ray

from fakesim_hil import Client
from fakesim_hil.daemon import LocalDaemon
from fakesim_hil.evaluation import EpisodeOptions, evaluate_sequential, jobs_grid
from fakesim_hil.ray_eval import DAEMON_RESOURCE, WORKER_NICENESS, evaluate


class Drift:
    """A deterministic scripted policy: every joint a little further along a fixed direction."""

    def __call__(self, observation: dict[str, Any]) -> np.ndarray:
        return observation["joint_pos"] + np.array([0.02, -0.015, 0.025, 0.01, -0.02, 0.03])


def sequential_s(jobs: list, options: EpisodeOptions) -> float:
    """Wall time of the jobs one after another on one daemon started for them (start-up excluded)."""
    with tempfile.TemporaryDirectory() as runs:
        daemon = LocalDaemon.start(runs)
        try:
            with Client(daemon.address) as client:
                start = time.perf_counter()
                evaluate_sequential(client, Drift(), jobs, options)
                return time.perf_counter() - start
        finally:
            daemon.stop()


def ray_s(jobs: list, options: EpisodeOptions, n: int) -> float:
    """Wall time of the jobs on a pool of ``n`` daemon actors, actor start-up included."""
    start = time.perf_counter()
    report = evaluate(Drift(), jobs, n_actors=n, options=options)
    wall_s = time.perf_counter() - start
    assert report["overall"]["episodes"] == len(jobs)
    return wall_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=200, help="control ticks per episode")
    parser.add_argument("--daemons", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every route, taking turns")
    args = parser.parse_args()
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    # Ray starts its workers at niceness 15 unless told otherwise; the daemons an actor starts
    # would inherit it and lose the cores to anything else running.
    os.environ.setdefault(WORKER_NICENESS, "0")
    options = EpisodeOptions(episode_ticks=args.ticks, cameras=("agentview",), image_size=(64, 48), control_period_s=0.05)
    jobs = jobs_grid(["lift_cube", "push_to_target"], range(6), [0, 1])
    print(f"{len(jobs)} episodes of {args.ticks} ticks; load {os.getloadavg()[0]:.2f}; {WORKER_NICENESS}={os.environ[WORKER_NICENESS]}")
    most = max(args.daemons)
    ray.init(num_cpus=most, resources={DAEMON_RESOURCE: most}, include_dashboard=False, log_to_driver=False)
    ratios: dict[int, list[float]] = {n: [] for n in args.daemons}
    try:
        for round_ in range(1, args.rounds + 1):
            alone = sequential_s(jobs, options)
            line = [f"round {round_}: sequential {60 * len(jobs) / alone:.1f} episodes/min ({alone:.1f} s)"]
            for n in args.daemons:
                wall = ray_s(jobs, options, n)
                ratios[n].append(wall / alone)
                line.append(f"Ray {n}: {60 * len(jobs) / wall:.1f}/min ({wall / alone:.2f} x)")
            print("; ".join(line), flush=True)
    finally:
        ray.shutdown()
    for n, values in ratios.items():
        print(f"Ray, {n} daemon(s): median {statistics.median(values):.2f} x sequential wall time over {len(values)} rounds")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
