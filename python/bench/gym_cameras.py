"""Benchmark: steps per second of the Gym env (`fakesim_hil.gym.FakesimEnv` on a release daemon
of its own, the published meshes) with cameras, at the `fast` level: the scene's two cameras at
256x256 (the issue's bound: 30 steps/s or more), and the standard profile cameras `front` and
`wrist` at their 640x480, one case after the other in each round (min / median of the rounds):

    FAKESIM_HIL_BIN=target/release/fakesim-hil python python/bench/gym_cameras.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from fakesim_hil.daemon import LocalDaemon
from fakesim_hil.gym import FakesimEnv

#: Each case: its name, the cameras, and the size the scene's cameras are drawn at.
CASES = (
    ("agentview + robot0_eye_in_hand, 256x256", ["agentview", "robot0_eye_in_hand"], (256, 256)),
    ("front + wrist profiles, 640x480", ["front", "wrist"], (256, 256)),
)


def steps_per_s(env: FakesimEnv, steps: int) -> float:
    """Steps a second over ``steps`` steps holding the arm where it is, after a reset."""
    obs, _ = env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        obs, *_ = env.step(obs["joint_pos"])
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    binary = os.environ.get("FAKESIM_HIL_BIN", "target/release/fakesim-hil")
    # A daemon per case: a daemon runs one episode at a time.
    daemons = [LocalDaemon.start(tempfile.mkdtemp(prefix="gym-cameras-"), binary=binary) for _ in CASES]
    try:
        envs = [
            FakesimEnv(
                0, address=daemon.address, cameras=cameras, image_size=size, render_quality="fast",
                episode_ticks=args.steps + 1,
            )  # fmt: skip
            for daemon, (_, cameras, size) in zip(daemons, CASES, strict=True)
        ]
        rates: list[list[float]] = [[] for _ in CASES]
        load = os.getloadavg()[0]
        for _ in range(args.rounds):
            for rate, env in zip(rates, envs, strict=True):
                rate.append(steps_per_s(env, args.steps))
        for env in envs:
            env.close()
    finally:
        for daemon in daemons:
            daemon.stop()
    print(f"Gym env, {args.rounds} rounds of {args.steps} steps, load {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    for (name, _, _), rate in zip(CASES, rates, strict=True):
        print(f"  {name}: {min(rate):.1f} / {statistics.median(rate):.1f} steps/s (min / median)")


if __name__ == "__main__":
    main()
