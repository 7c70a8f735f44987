"""Soak: mixed traffic against a daemon whose arm's adapter is unplugged and plugged back.

A virtual SO-101 (`fakesim-hil emulate`) is served behind a symbolic link, as udev's
/dev/serial/by-id links are; the daemon opens the link and runs in `sim`, so the client's
traffic runs on the twin while the mirror loop keeps reading the arm. Every --replug-every-s the
emulator is stopped (the adapter is gone: its pty and the link vanish) and, --outage-s later, a
new one is started on the same link (the adapter plugged back). Meanwhile, from threads of their
own: ticks at 30 Hz with both cameras on every 10th, the hardware status polled at 50 Hz, a
joint-state stream at 30 Hz, and an episode a minute. Per window it prints the daemon's RSS and
open descriptors, each call's p50/p99 latency and errors, and the bus's losses and recoveries:

    FAKESIM_HIL_BIN=target/debug/fakesim-hil python python/bench/field_soak.py --minutes 30
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

from fakesim_hil import Client, FakesimError
from fakesim_hil.daemon import LocalDaemon, find_binary


class Recorder:
    """Latencies and errors per call kind, for the window in progress."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)

    def timed(self, kind: str, call) -> None:  # noqa: ANN001 - any zero-argument callable
        started = time.perf_counter()
        try:
            call()
        except FakesimError as error:
            with self.lock:
                self.errors[f"{kind} {error.reason}"] += 1
            return
        with self.lock:
            self.latencies[kind].append(time.perf_counter() - started)

    def take(self) -> tuple[dict[str, list[float]], dict[str, int]]:
        with self.lock:
            taken = (dict(self.latencies), dict(self.errors))
            self.latencies.clear()
            self.errors.clear()
        return taken


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def process_figures(pid: int) -> tuple[float, int]:
    """The process's resident memory (MB) and open file descriptors."""
    rss_kb = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("VmRSS:"))
    return rss_kb / 1024, len(os.listdir(f"/proc/{pid}/fd"))


class Adapter:
    """The emulated arm behind `link`: started, stopped and started again on the same link."""

    def __init__(self, binary: str, link: Path, calibration: Path) -> None:
        self.binary, self.link, self.calibration = binary, link, calibration
        self.process: subprocess.Popen[bytes] | None = None

    def plug(self) -> None:
        command = [self.binary, "emulate", "--link", str(self.link), "--write-calibration", str(self.calibration)]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not self.link.exists():
            if self.process.poll() is not None:
                raise RuntimeError(f"emulate ended ({self.process.returncode}) before serving {self.link}")
            time.sleep(0.01)

    def unplug(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--window-s", type=float, default=300.0)
    parser.add_argument("--replug-every-s", type=float, default=300.0)
    parser.add_argument("--outage-s", type=float, default=2.0)
    args = parser.parse_args()

    binary = find_binary(None)
    work = Path(tempfile.mkdtemp(prefix="field-soak-"))
    adapter = Adapter(binary, work / "ttyARM", work / "virtual.json")
    adapter.plug()
    daemon = LocalDaemon.start(work / "runs", "--port", str(adapter.link), "--calibration", str(adapter.calibration), "--mode", "sim", binary=binary)
    recorder = Recorder()
    stop = threading.Event()
    client = Client(daemon.address)
    client.wait_ready()
    cameras = list(client.model_info().cameras)

    def ticks() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            images = n % 10 == 0
            options = {"cameras": cameras} if images else {}
            recorder.timed("tick+images" if images else "tick", lambda: client.tick([0.0] * 6, **options))
            time.sleep(1 / 30)

    def polls() -> None:
        while not stop.is_set():
            recorder.timed("status", client.status)
            time.sleep(1 / 50)

    def stream() -> None:
        try:
            for _ in client.joint_states(30.0):
                if stop.is_set():
                    return
        except (FakesimError, ValueError):
            if not stop.is_set():
                raise

    def episodes() -> None:
        while not stop.is_set():
            recorder.timed("reset", lambda: client.reset(cameras=(), max_steps=0))
            if stop.wait(55.0):
                return
            recorder.timed("stop_episode", client.stop)

    threads = [threading.Thread(target=target, daemon=True) for target in (ticks, polls, stream, episodes)]
    for thread in threads:
        thread.start()

    started = time.monotonic()
    next_window, next_replug = started + args.window_s, started + args.replug_every_s
    replugs = 0
    rss0, fds0 = process_figures(daemon.process.pid)
    print(f"start: rss {rss0:.1f} MB, fds {fds0}")
    try:
        while time.monotonic() - started < args.minutes * 60 - 0.5:
            time.sleep(0.5)
            now = time.monotonic()
            if now >= next_replug:
                adapter.unplug()
                time.sleep(args.outage_s)
                adapter.plug()
                replugs += 1
                next_replug += args.replug_every_s
            if now >= next_window:
                next_window += args.window_s
                latencies, errors = recorder.take()
                rss, fds = process_figures(daemon.process.pid)
                link = client.status().link
                calls = ", ".join(
                    f"{kind} n={len(values)} p50={percentile(values, 0.5) * 1e3:.1f} ms p99={percentile(values, 0.99) * 1e3:.1f} ms"
                    for kind, values in sorted(latencies.items())
                )
                print(
                    f"t={now - started:6.0f} s: rss {rss:.1f} MB, fds {fds}, replugs {replugs}, "
                    f"losses {link.losses}, recoveries {link.recoveries}, time lost {link.time_lost_s:.1f} s; "
                    f"{calls}; errors {dict(errors) or 'none'}",
                    flush=True,
                )
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=2.0)
        client.close()
        daemon.stop()
        adapter.unplug()


if __name__ == "__main__":
    main()
