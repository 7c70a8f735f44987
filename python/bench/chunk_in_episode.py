"""Benchmark: a `TickChunk` of 8 per tick inside an episode (every tick journaled) against the
same chunks outside one, side by side on one release daemon, rounds taking turns:

    FAKESIM_HIL_BIN=target/release/fakesim-hil python python/bench/chunk_in_episode.py
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import numpy as np

from fakesim_hil import Client
from fakesim_hil.daemon import LocalDaemon

CHUNK = 8


def per_tick_us(client: Client, actions: list[list[float]], chunks: int) -> float:
    """Median wall time of a chunk over ``chunks`` calls, per tick, in µs."""
    times = []
    for _ in range(chunks):
        start = time.perf_counter()
        client.tick_chunk(actions)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6 / CHUNK


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chunks", type=int, default=200, help="chunks per side of a round")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as runs:
        daemon = LocalDaemon.start(runs)
        try:
            with Client(daemon.address) as client:
                actions = [list(np.array(client.robot_state().ctrl_targets))] * CHUNK
                for round_ in range(1, args.rounds + 1):
                    outside = per_tick_us(client, actions, args.chunks)
                    client.reset("so101_tabletop", 0, 0, max_steps=0)
                    inside = per_tick_us(client, actions, args.chunks)
                    client.stop()
                    print(f"round {round_}: per tick outside an episode {outside:.1f} µs, inside {inside:.1f} µs ({inside / outside:.2f})")
        finally:
            daemon.stop()


if __name__ == "__main__":
    main()
