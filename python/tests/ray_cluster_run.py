"""Runs the Ray evaluation of test_ray_eval.py on a one-node cluster of its own and writes the
report as JSON: ``python ray_cluster_run.py OUT.json [--kill-first-daemon]``. The test runs it in
a network namespace holding only loopback, so Ray, which binds every interface, sends nothing off
the machine."""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

import numpy as np
import ray

from fakesim_hil.evaluation import EpisodeOptions, jobs_grid
from fakesim_hil.ray_eval import DAEMON_RESOURCE, evaluate

#: The episodes of the test: short, one small camera, the model's 20 Hz.
OPTIONS = EpisodeOptions(episode_ticks=15, cameras=("agentview",), image_size=(32, 24), control_period_s=0.05)
#: 2 tasks × 3 layouts × 2 seeds.
JOBS = jobs_grid(["lift_cube", "push_to_target"], [0, 1, 2], [0, 1])


class Drift:
    """A deterministic policy: every joint a little further along a fixed direction each tick."""

    def __call__(self, observation: dict[str, Any]) -> np.ndarray:
        return observation["joint_pos"] + np.array([0.04, -0.03, 0.05, 0.02, -0.04, 0.06])


def main() -> None:
    out, kill = sys.argv[1], "--kill-first-daemon" in sys.argv[2:]
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    ray.init(num_cpus=2, resources={DAEMON_RESOURCE: 2}, include_dashboard=False, log_to_driver=False)
    killed: list[int] = []

    def kill_first(summary: dict[str, Any], actor: Any) -> None:
        if kill and not killed:
            killed.append(ray.get(actor.daemon_pid.remote()))
            os.kill(killed[0], signal.SIGKILL)

    try:
        report = evaluate(Drift(), JOBS, n_actors=2, options=OPTIONS, on_result=kill_first)
    finally:
        ray.shutdown()
    with open(out, "w", encoding="utf-8") as file:
        json.dump({"report": report, "killed": killed}, file)


if __name__ == "__main__":
    main()
