"""Benchmark: the rate of a LeRobot control loop through the fakesim_hil plugin.

Each iteration is what lerobot-record does per frame: get_observation(), then send_action()
(here: hold the observed joints), i.e. one daemon control tick with the twin's cameras rendered.
``--paced`` runs it as lerobot-record does, sleeping to 1/fps with LeRobot's own precise_sleep,
and counts the frames a 4 s episode gets (LeRobot's 30 fps: 120); unpaced it runs flat out.
Run against a release daemon, e.g. `target/release/fakesim-hil --listen 127.0.0.1:50051`:

    python python/bench/lerobot_loop.py --address 127.0.0.1:50051 [--paced]

``--mode hil`` drives a daemon in hil (e.g. on the virtual bus: `fakesim-hil emulate
--write-calibration cal.json`, then `fakesim-hil --port DEVICE --calibration cal.json --mode hil`),
where each tick writes the goals through the safety layers and returns.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from lerobot.utils.robot_utils import precise_sleep

from lerobot_robot_fakesim_hil import FakesimHil, FakesimHilConfig

#: LeRobot's default recording rate, frames per second.
LEROBOT_FPS = 30
#: Frame sizes measured: the plugin's default and what real SO-101 setups record.
SIZES = ((256, 256), (640, 480))
CAMERAS = (["agentview"], ["agentview", "robot0_eye_in_hand"])


def loop(
    address: str, mode: str, cameras: list[str], size: tuple[int, int], quality: str, seconds: float, paced: bool
) -> list[float]:
    """Durations of the loop's iterations (get_observation + send_action), seconds."""
    width, height = size
    config = FakesimHilConfig(
        address=address,
        mode=mode,
        camera_names=cameras,
        image_width=width,
        image_height=height,
        render_quality=quality,
        fps=LEROBOT_FPS,
        calibration_dir=Path(tempfile.mkdtemp()),
    )
    robot = FakesimHil(config)
    robot.connect()
    try:
        keys = list(robot.action_features)
        for _ in range(3):  # the first frames at a new size allocate the renderer's buffers
            robot.send_action({key: robot.get_observation()[key] for key in keys})
        durations = []
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            start = time.perf_counter()
            observation = robot.get_observation()
            robot.send_action({key: observation[key] for key in keys})
            durations.append(time.perf_counter() - start)
            if paced:
                precise_sleep(max(1 / LEROBOT_FPS - (time.perf_counter() - start), 0.0))
    finally:
        robot.disconnect()
    return durations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--paced", action="store_true", help="sleep to 1/fps per frame as lerobot-record does")
    parser.add_argument("--mode", choices=("sim", "hil"), default="sim")
    args = parser.parse_args()
    print(f"LeRobot's default rate: {LEROBOT_FPS} fps ({1000 / LEROBOT_FPS:.1f} ms per frame); load {os.getloadavg()}")
    print(f"{args.mode}, {'paced to 30 fps as lerobot-record' if args.paced else 'unthrottled'}, {args.seconds:g} s each")
    print("| cameras | size | render | loop rate | vs 30 fps | p50 | p99 |")
    print("|---|---|---|---|---|---|---|")
    # Joints only, then each size, camera set and render level.
    runs = [([], SIZES[0], "fast")] + [(c, size, q) for size in SIZES for c in CAMERAS for q in ("fast", "full")]
    for cameras, size, quality in runs:
        durations = loop(args.address, args.mode, cameras, size, quality, args.seconds, args.paced)
        rate = len(durations) / args.seconds if args.paced else len(durations) / sum(durations)
        ordered = sorted(durations)
        p50 = statistics.median(ordered) * 1e3
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e3
        shown = f"{size[0]}x{size[1]} | {quality}" if cameras else "- | -"
        print(f"| {len(cameras)} | {shown} | {rate:.1f} Hz | {rate / LEROBOT_FPS:.2f}x | {p50:.1f} ms | {p99:.1f} ms |")
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()
