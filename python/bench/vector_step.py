"""Benchmark: lerobot-eval's batch of N slots stepped by the env plugin's `FakesimVectorEnv` (every
slot's tick sent before any answer is read) against gymnasium's `SyncVectorEnv` of the same slots
(the plugin's route before: one round trip per slot, one after the other), each slot on a release
daemon of its own, the two taking turns in each round (min / median reported):

    FAKESIM_HIL_BIN=/work/target-release/release/fakesim-hil python python/bench/vector_step.py

The slots are the plugin's `LeRobotFakesimEnv` as ``--env.type=fakesim_hil`` makes them
(LeRobot degrees, 30 fps), without cameras and with one 128x96 camera (the plugin's default size).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from lerobot_env_fakesim_hil import FakesimHilEnvConfig
from lerobot_env_fakesim_hil.env import LeRobotFakesimEnv


def batch(route: str, n: int, cameras: list[str], steps: int) -> Any:
    """The N-slot vector env of a route, its episodes longer than the timed steps."""
    config = FakesimHilEnvConfig(cameras=cameras, episode_length=10 * steps + 100)
    if route == "batched":
        return config.create_envs(n, use_async_envs=False)[config.type][0]
    makers = [lambda i=i: LeRobotFakesimEnv(**config.slot_kwargs(i)) for i in range(n)]
    return gym.vector.SyncVectorEnv(makers, autoreset_mode=AutoresetMode.SAME_STEP)


def batch_steps_per_s(vector: Any, steps: int) -> float:
    """Batch steps per second over a sweep of joint targets around the first observation's pose."""
    low, high = vector.single_action_space.low, vector.single_action_space.high
    centre, swing = (low + high) / 2, (high - low) * 0.05
    actions = [np.tile(centre + swing * np.sin(0.3 * k), (vector.num_envs, 1)) for k in range(steps)]
    start = time.perf_counter()
    for action in actions:
        vector.step(action)
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=300, help="batch steps a route runs per round")
    parser.add_argument("--envs", type=int, nargs="+", default=[2, 4])
    args = parser.parse_args()
    if not os.environ.get("FAKESIM_HIL_BIN"):
        parser.error("name the release daemon with FAKESIM_HIL_BIN")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    for n in args.envs:
        for cameras in ([], ["agentview"]):
            vectors = {route: batch(route, n, cameras, args.steps * args.rounds) for route in ("sync", "batched")}
            try:
                figures: dict[str, list[float]] = {route: [] for route in vectors}
                for route, vector in vectors.items():
                    vector.reset(seed=0)
                    batch_steps_per_s(vector, 20)  # warm-up
                for round_ in range(args.rounds):
                    for route in ("sync", "batched") if round_ % 2 == 0 else ("batched", "sync"):
                        figures[route].append(batch_steps_per_s(vectors[route], args.steps))
            finally:
                for vector in vectors.values():
                    vector.close()
            gains = [b / s for b, s in zip(figures["batched"], figures["sync"])]
            spread = lambda values: f"{min(values):7.1f} / {statistics.median(values):7.1f}"  # noqa: E731
            print(
                f"{n} slots, {'1 camera 128x96' if cameras else 'no images':<15} batch steps/s: "
                f"SyncVectorEnv {spread(figures['sync'])}   FakesimVectorEnv {spread(figures['batched'])}"
                f"   gain {min(gains):.2f} / {statistics.median(gains):.2f}"
            )
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
