"""Benchmark: the Python client's `Tick` and `GetRobotState` round trips beside the Rust client's,
on the same release daemon in the same run, over a Unix socket and TCP 127.0.0.1. Four sides take
turns round by round (the order rotating), each timing its own calls: the Python client as it
is (its direct route for these calls, `fakesim_hil.direct` on the ``fakesim_hil._native``
extension), the same client through grpcio (``direct=False``), grpcio's bare stub with a request
made once (the floor of any grpcio client), and the Rust client; with ``--before SRC`` a fifth,
the client package of another checkout (``SRC`` its ``python/fakesim-hil/src``, say the commit
before a change, loaded as ``fakesim_hil_before``). Each side's CPU time per call (its whole
process's) is printed beside the round trips:

    FAKESIM_HIL_BIN=target/release/fakesim-hil python python/bench/client_round_trip.py [--profile] [--before SRC]

It first times `--starts` daemons of this process's own from their spawn to their first answer,
with the marks of their start-up between (from their log).

The Rust side is the `rtt_client` bench of the fakesim-hil crate (`cargo bench -p fakesim-hil
--bench rtt_client --no-run` builds it; this script finds it, or takes the executable's path from
``$FAKESIM_RTT_CLIENT``). ``--profile`` then profiles the
Python client's ticks on both routes with cProfile and prints where the time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import io
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import numpy as np

from fakesim.v1 import robot_pb2
from fakesim_hil import Client
from fakesim_hil.daemon import LocalDaemon

REPO = Path(__file__).resolve().parents[2]


def rust_client() -> str:
    """The path of the built `rtt_client` bench: ``$FAKESIM_RTT_CLIENT``, else built (release)
    by cargo in this checkout (``CARGO_TARGET_DIR`` applies)."""
    if os.environ.get("FAKESIM_RTT_CLIENT"):
        return os.environ["FAKESIM_RTT_CLIENT"]
    built = subprocess.run(
        ["cargo", "bench", "-p", "fakesim-hil", "--bench", "rtt_client", "--no-run", "--message-format=json"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    for line in built.stdout.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message["target"]["name"] == "rtt_client" and message.get("executable"):
            return message["executable"]
    raise RuntimeError("cargo built no rtt_client executable")


#: The Python sides of a round (``before`` too with ``--before``).
PYTHON_SIDES = ("direct", "grpcio", "bare")


def client_before(source: Path) -> type[Client]:
    """The `Client` class of the client package under ``source`` (another checkout's
    ``python/fakesim-hil/src``), imported as the package ``fakesim_hil_before``."""
    package = source / "fakesim_hil"
    spec = importlib.util.spec_from_file_location("fakesim_hil_before", package / "__init__.py", submodule_search_locations=[str(package)])
    if spec is None or spec.loader is None:
        raise RuntimeError(f"no client package in {source}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["fakesim_hil_before"] = module
    spec.loader.exec_module(module)
    return module.Client


def python_medians(tick: Callable[[], object], state: Callable[[], object], calls: int) -> tuple[float, float, float]:
    """Median µs of ``calls`` ticks and state reads, taking turns, and the µs of CPU this
    process spent per call (every thread's, grpcio's own included)."""
    ticks, states = [], []
    clock = time.perf_counter_ns
    cpu = time.process_time()
    for _ in range(calls):
        start = clock()
        tick()
        ticks.append(clock() - start)
        start = clock()
        state()
        states.append(clock() - start)
    cpu = (time.process_time() - cpu) / (2 * calls) * 1e6
    return statistics.median(ticks) / 1e3, statistics.median(states) / 1e3, cpu


def python_sides(
    address: str, action: np.ndarray, before: type[Client] | None
) -> tuple[dict[str, tuple[Callable[[], object], Callable[[], object]]], list[Client]]:
    """The Python sides' tick and state calls on ``address`` and the clients they use: the
    client (direct route), the client through grpcio, grpcio's bare stub (the client's
    channel, a request made once, no timeout or metadata), and ``before``'s client if given."""
    direct, through_grpcio = Client(address), Client(address, direct=False)
    tick_request = robot_pb2.TickRequest(action=action.tolist())
    state_request = robot_pb2.GetRobotStateRequest()
    bare_tick, bare_state = through_grpcio.robot.Tick, through_grpcio.robot.GetRobotState
    sides = {
        "direct": (lambda: direct.tick(action), direct.robot_state),
        "grpcio": (lambda: through_grpcio.tick(action), through_grpcio.robot_state),
        "bare": (lambda: bare_tick(tick_request), lambda: bare_state(state_request)),
    }
    if before is None:
        return sides, [direct, through_grpcio]
    older = before(address)
    sides["before"] = (lambda: older.tick(action), older.robot_state)
    return sides, [direct, through_grpcio, older]


def rust_medians(binary: str, address: str, calls: int) -> tuple[float, float, float]:
    """Median µs of the Rust client's ticks and state reads on ``address``, and the µs of CPU
    its process spent per call (its start and connection included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([binary, address, str(calls)], check=True, capture_output=True, text=True).stdout.split()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / (2 * calls) * 1e6
    return float(out[0]), float(out[1]), cpu


def profile(client: Client, action: np.ndarray, calls: int) -> str:
    """cProfile of ``calls`` ticks: the top functions by their own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        client.tick(action)
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(14)
    return text.getvalue()


#: Start-up marks of the daemon's log (at ``--log-level info``): the line's text, its label.
START_MARKS = (("twin loaded", "twin loaded"), ("serving ", "serving"))


def start_phases(runs: Path, starts: int) -> dict[str, list[float]]:
    """Milliseconds from spawning a daemon of this process's own (`LocalDaemon.start`, on a Unix
    socket, logging at info) to each mark of its start-up, ``starts`` times: the twin loaded and
    serving (the times its log gives them), its address read, its first answer (`GetModelInfo`
    on a new channel)."""
    phases: dict[str, list[float]] = {}
    for i in range(starts):
        wall, start = time.time(), time.perf_counter()
        daemon = LocalDaemon.start(runs / f"start-{i}", "--log-level", "info")
        marks = {"address read": time.perf_counter() - start}
        try:
            with Client(daemon.address) as client:
                client.model_info()
                marks["first answer"] = time.perf_counter() - start
        finally:
            daemon.stop()
        for line in (runs / f"start-{i}" / "daemon.log").read_text(encoding="utf-8").splitlines():
            for text, label in START_MARKS:
                if text in line and label not in marks:
                    stamp = datetime.fromisoformat(line.split()[0].replace("Z", "+00:00")).timestamp()
                    marks[label] = stamp - wall
        for label in ("twin loaded", "serving", "address read", "first answer"):
            if label in marks:
                phases.setdefault(label, []).append(marks[label] * 1e3)
    return phases


def spread(values: list[float]) -> str:
    """min / median of a list of µs."""
    return f"{min(values):7.1f} / {statistics.median(values):7.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=1000, help="calls of each kind per side of a round")
    parser.add_argument("--profile", action="store_true", help="profile the Python client's ticks afterwards")
    parser.add_argument("--starts", type=int, default=10, help="daemon starts timed to their first answer")
    parser.add_argument("--before", type=Path, help="another checkout's python/fakesim-hil/src: its client as a fifth side")
    parser.add_argument(
        "--address", action="append", default=[], help="a running daemon to use instead of starting two (repeatable)"
    )
    args = parser.parse_args()
    binary = rust_client()
    before = client_before(args.before) if args.before else None
    python_labels = (*PYTHON_SIDES, "before") if before else PYTHON_SIDES
    with tempfile.TemporaryDirectory() as runs:
        if args.starts:
            print(f"a daemon of this process's own, ms from its spawn, min / median of {args.starts}:")
            for label, times in start_phases(Path(runs), args.starts).items():
                print(f"  {label:<14} {spread(times)}")
        if args.address:
            addresses = {address: address for address in args.address}
            daemons = {}
        else:
            daemons = {
                "Unix socket": LocalDaemon.start(Path(runs) / "unix"),
                "TCP 127.0.0.1": LocalDaemon.start(Path(runs) / "tcp", listen="127.0.0.1:0"),
            }
            addresses = {transport: daemon.address for transport, daemon in daemons.items()}
        try:
            for transport, address in addresses.items():
                with Client(address) as probe:
                    action = np.array(probe.robot_state().ctrl_targets)
                sides, clients = python_sides(address, action, before)
                try:
                    for tick, state in sides.values():
                        python_medians(tick, state, 100)  # warm-up
                    order = [*python_labels, "rust"]
                    calls = ("tick", "state", "cpu")
                    figures: dict[str, list[float]] = {f"{side} {call}": [] for side in order for call in calls}
                    for round_ in range(args.rounds):
                        for side in order[round_ % len(order) :] + order[: round_ % len(order)]:
                            if side == "rust":
                                measured = rust_medians(binary, address, args.calls)
                            else:
                                measured = python_medians(*sides[side], args.calls)
                            for call, value in zip(calls, measured):
                                figures[f"{side} {call}"].append(value)
                    print(f"{transport} ({address}); median µs per round, min / median of {args.rounds} rounds:")
                    for call, name in (("tick", "Tick"), ("state", "GetRobotState"), ("cpu", "CPU per call")):
                        rust = figures[f"rust {call}"]
                        print(f"  {name:<14} Rust {spread(rust)}")
                        for side in python_labels:
                            ratio = [p / r for p, r in zip(figures[f"{side} {call}"], rust)]
                            print(
                                f"    Python {side:<7} {spread(figures[f'{side} {call}'])}"
                                f"   / Rust {min(ratio):.2f} / {statistics.median(ratio):.2f}"
                            )
                    if args.profile and address.startswith("unix:"):
                        for label, client in zip(("direct route", "through grpcio"), clients):
                            print(f"cProfile of 3000 ticks, {label}:")
                            print(profile(client, action, 3000))
                finally:
                    for client in clients:
                        client.close()
        finally:
            for daemon in daemons.values():
                daemon.stop()


if __name__ == "__main__":
    main()
