"""Benchmark: the rate of a LeRobot control loop through the fakesim_hil plugin, unthrottled.

Each iteration is what lerobot-record and lerobot-teleoperate do per frame: get_observation(),
then send_action() (here: hold the observed joints), i.e. one daemon control tick. Run against
a daemon, e.g. `target/release/fakesim-hil --listen 127.0.0.1:50051`:

    python python/bench/lerobot_loop.py --address 127.0.0.1:50051
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from lerobot_robot_fakesim_hil import FakesimHil, FakesimHilConfig

#: LeRobot's default recording rate, frames per second.
LEROBOT_FPS = 30


def loop_rate(address: str, cameras: list[str], size: int, seconds: float) -> tuple[float, float, float]:
    """Iterations per second, p50 and p99 of one iteration (ms)."""
    config = FakesimHilConfig(
        address=address, camera_names=cameras, image_width=size, image_height=size, calibration_dir=Path(tempfile.mkdtemp())
    )
    robot = FakesimHil(config)
    robot.connect()
    try:
        keys = list(robot.action_features)
        durations = []
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            start = time.perf_counter()
            observation = robot.get_observation()
            robot.send_action({key: observation[key] for key in keys})
            durations.append(time.perf_counter() - start)
    finally:
        robot.disconnect()
    durations.sort()
    p99 = durations[min(len(durations) - 1, int(len(durations) * 0.99))]
    return len(durations) / sum(durations), statistics.median(durations) * 1e3, p99 * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--size", type=int, default=256, help="frame width and height, pixels")
    args = parser.parse_args()
    print(f"LeRobot's default rate: {LEROBOT_FPS} fps ({1000 / LEROBOT_FPS:.1f} ms per frame)")
    print("| cameras | loop rate | vs 30 fps | p50 | p99 |")
    print("|---|---|---|---|---|")
    for cameras in ([], ["agentview"], ["agentview", "robot0_eye_in_hand"]):
        rate, p50, p99 = loop_rate(args.address, cameras, args.size, args.seconds)
        label = ", ".join(cameras) if cameras else "none (joints only)"
        size = f" at {args.size}x{args.size}" if cameras else ""
        print(f"| {label}{size} | {rate:.1f} Hz | {rate / LEROBOT_FPS:.2f}x | {p50:.2f} ms | {p99:.2f} ms |")


if __name__ == "__main__":
    main()
