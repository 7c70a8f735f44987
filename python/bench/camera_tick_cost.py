"""Benchmark: what a Gym env step with the standard `front` and `wrist` cameras (640x480 each,
`fast`) costs the daemon, side by side for one or more daemon builds:

    python python/bench/camera_tick_cost.py DAEMON [DAEMON ...] [--rounds 3] [--steps 150]

Each DAEMON is a `fakesim-hil` launcher (its `fakesim-hil-daemon` beside it), e.g. release builds
of two commits copied to directories of their own. Per round and daemon, in turn: steps per
second holding the arm, and the CPU time per step of the daemon's process (every thread, from
/proc) and of this process (the env and the client).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from fakesim_hil.daemon import LocalDaemon
from fakesim_hil.gym import FakesimEnv


def process_cpu(pid: int) -> float:
    """Seconds of CPU a process used so far (user and system, every thread)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(binary: str, steps: int) -> tuple[float, float, float]:
    """Steps/s, the daemon's and the client's CPU milliseconds per step, over ``steps`` steps."""
    daemon = LocalDaemon.start(tempfile.mkdtemp(prefix="camera-tick-"), binary=binary)
    try:
        env = FakesimEnv(
            0, address=daemon.address, cameras=["front", "wrist"], render_quality="fast", episode_ticks=steps + 40
        )
        obs, _ = env.reset(seed=0)
        for _ in range(20):  # the render model and the first frames
            obs, *_ = env.step(obs["joint_pos"])
        client0, daemon0, start = time.process_time(), process_cpu(daemon.process.pid), time.perf_counter()
        for _ in range(steps):
            obs, *_ = env.step(obs["joint_pos"])
        wall = time.perf_counter() - start
        daemon_ms = (process_cpu(daemon.process.pid) - daemon0) / steps * 1e3
        client_ms = (time.process_time() - client0) / steps * 1e3
        env.close()
        return steps / wall, daemon_ms, client_ms
    finally:
        daemon.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("daemons", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=150)
    args = parser.parse_args()
    for round_number in range(args.rounds):
        for binary in args.daemons:
            rate, daemon_ms, client_ms = measure(binary, args.steps)
            print(
                f"round {round_number} {binary}: {rate:.1f} steps/s, daemon {daemon_ms:.1f} ms CPU/step, "
                f"client {client_ms:.1f} ms CPU/step, load {os.getloadavg()[0]:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
