"""Benchmark: what LeRobot's own `lerobot-record` gets through the fakesim_hil plugin, end to end.

Starts a daemon of its own (`$FAKESIM_HIL_BIN`, a release build for figures), a virtual
so101_leader (`fakesim-hil emulate`) and, for ``--mode hil``, a virtual follower arm the daemon
drives; records ``--episodes`` episodes of ``--seconds`` at ``--fps`` with the plugin's defaults
(its two cameras at the `fast` level, 256x256 unless ``--size``, none with ``--no-cameras``), then prints, per episode,
the frames the dataset holds, the rate that is (frames / seconds) and the twin time its run's
ticks advanced, beside the dataset time (frames / fps):

    FAKESIM_HIL_BIN=target/release/fakesim-hil python python/bench/lerobot_record.py [--mode hil]

Run it from the venv `scripts/test-all` builds (LeRobot 0.6.1). LeRobot's loop counts frames by
wall time, so the count is the machine's: compare it with the load average printed beside it.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from lerobot.datasets import LeRobotDataset  # noqa: E402
from lerobot_support import lerobot_record, runs_of  # noqa: E402
from processes import start_emulator  # noqa: E402

from fakesim_hil.daemon import LocalDaemon  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["sim", "hil"], default="sim")
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--fps", type=int, default=30)
    parser.add_argument("--no-cameras", action="store_true", help="record the joints only")
    parser.add_argument("--size", default="256x256", help="the twin's camera frames, WIDTHxHEIGHT")
    parser.add_argument(
        "--cameras", default="", help="the twin's cameras, comma-separated (front,wrist: the standard profiles, 640x480)"
    )
    args = parser.parse_args()

    binary = os.environ.get("FAKESIM_HIL_BIN", "target/release/fakesim-hil")
    home = Path(tempfile.mkdtemp(prefix="lerobot-record-bench-"))
    os.environ.update(
        HF_LEROBOT_CALIBRATION=str(home / "calibration"), HF_LEROBOT_HOME=str(home / "home"), HF_HUB_OFFLINE="1"
    )
    buses = []
    daemon_args: list[str] = []
    try:
        leader, leader_port = start_emulator(binary, home / "calibration" / "teleoperators" / "so_leader" / "virtual.json")
        buses.append(leader)
        width, height = args.size.split("x")
        robot = [f"--robot.fps={args.fps}", f"--robot.image_width={width}", f"--robot.image_height={height}"]
        if args.mode == "hil":
            follower, follower_port = start_emulator(binary, home / "follower.json")
            buses.append(follower)
            daemon_args = ["--port", follower_port, "--calibration", str(home / "follower.json"), "--mode", "hil"]
            robot.append("--robot.mode=hil")
        if args.no_cameras:
            robot.append("--robot.camera_names=[]")
        elif args.cameras:
            robot.append(f"--robot.camera_names=[{args.cameras}]")
        daemon = LocalDaemon.start(home / "runs", *daemon_args, binary=binary)
        try:
            lerobot_record(
                daemon.address, leader_port, home / "dataset", "local/bench", *robot,
                episodes=args.episodes, seconds=args.seconds, fps=args.fps,
            )  # fmt: skip
        finally:
            daemon.stop()
        dataset = LeRobotDataset("local/bench", root=home / "dataset", video_backend="pyav")
        lengths = [int(episode["length"]) for episode in dataset.meta.episodes]
        load = os.getloadavg()[0]
        cameras = "no cameras" if args.no_cameras else f"cameras {args.cameras}" if args.cameras else f"the default cameras at {args.size}"
        print(f"lerobot-record, {args.mode}, {cameras}, {args.episodes} x {args.seconds} s at {args.fps} fps, load {load:.1f}")
        for index, (length, run) in enumerate(zip(lengths, runs_of(home / "runs"), strict=False)):
            print(
                f"  episode {index}: {length} frames ({length / args.seconds:.1f} fps), "
                f"dataset time {length / args.fps:.4f} s, twin time {run.twin_time_s:.4f} s"
            )
    finally:
        for bus in buses:
            bus.send_signal(signal.SIGINT)
            bus.wait(timeout=30)


if __name__ == "__main__":
    main()
