"""Shared fixtures: real sim-only daemons started from $FAKESIM_HIL_BIN on 127.0.0.1:0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fakesim.v1 import session_pb2
from fakesim_hil import Client
from fakesim_hil.daemon import LocalDaemon
from processes import start_emulator
from slow_host import widen_reply_window

# LeRobot buses in the test process get the tests' wider reply window (see slow_host.py).
widen_reply_window()

#: A running daemon of the tests (process, address, runs directory).
Daemon = LocalDaemon


def daemon_binary() -> str:
    """Path of the fakesim-hil binary under test (scripts/test-all exports it)."""
    binary = os.environ.get("FAKESIM_HIL_BIN")
    if not binary or not Path(binary).is_file():
        pytest.fail("FAKESIM_HIL_BIN must name the fakesim-hil binary (scripts/test-all sets it)")
    return binary


def start_daemon(runs_dir: Path, *args: str) -> Daemon:
    """Starts a sim-only daemon on 127.0.0.1:0 (its bound address read from stdout's first line;
    TCP, as the LeRobot commands and other processes of the tests are given it)."""
    try:
        return LocalDaemon.start(runs_dir, *args, binary=daemon_binary(), listen="127.0.0.1:0")
    except RuntimeError as ended:
        pytest.fail(str(ended))


@pytest.fixture(scope="session")
def fakesim_bin() -> str:
    """Path of the fakesim-hil binary under test."""
    return daemon_binary()


@pytest.fixture(scope="session")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One sim-only daemon for the whole test session."""
    running = start_daemon(tmp_path_factory.mktemp("daemon") / "runs")
    yield running
    running.stop()


@pytest.fixture(scope="session")
def daemon_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Daemon]]:
    """Starts extra daemons with their own arguments; all are stopped at the end of the session."""
    started: list[Daemon] = []

    def factory(*args: str) -> Daemon:
        running = start_daemon(tmp_path_factory.mktemp("daemon") / "runs", *args)
        started.append(running)
        return running

    yield factory
    for running in started:
        running.stop()


@dataclass
class VirtualBus:
    """A virtual servo bus (`fakesim-hil emulate`, an SO-101 unless `--arm` says otherwise): its device
    and the calibration it holds."""

    device: str
    calibration_path: Path
    process: subprocess.Popen[str]

    def stop(self) -> None:
        """Stops the bus (SIGINT) and checks it exited cleanly, writing its files (e.g. --write-log)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        assert self.process.wait(timeout=30) == 0

    @property
    def calibration(self) -> dict:
        """The calibration file's contents (LeRobot's format)."""
        return json.loads(self.calibration_path.read_text())

    @property
    def follower_args(self) -> tuple[str, ...]:
        """The daemon's arguments for this bus as its follower. The virtual servos share the test
        machine's cores, and a starved machine leaves them unscheduled for longer than a real
        arm's silence: the daemon's reply-timeout floor is 250 ms rather than its 10 ms default
        (a lost bus is then six timeouts, at least 1.5 s of silence, not some 60 ms). The Rust
        end-to-end tests measure the default's detection (tests/tests/e2e/silence.rs)."""
        return ("--port", self.device, "--calibration", str(self.calibration_path), "--reply-timeout", "250")


@pytest.fixture
def emulate(fakesim_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., VirtualBus]]:
    """Starts virtual buses with extra `emulate` arguments, each writing its calibration to
    ``calibration`` (by default a file of its own); each is stopped (SIGINT, exit 0) after the test."""
    started: list[VirtualBus] = []

    def start(*args: str, calibration: Path | None = None) -> VirtualBus:
        calibration = calibration or tmp_path_factory.mktemp("emulate") / "virtual.json"
        process, device = start_emulator(fakesim_bin, calibration, *args)
        bus = VirtualBus(device, calibration, process)
        started.append(bus)
        return bus

    yield start
    for bus in started:
        bus.stop()


@pytest.fixture
def client(daemon: Daemon) -> Iterator[Client]:
    """A client of the session daemon; an episode left running by the test is stopped after it."""
    with Client(daemon.address) as connected:
        connected.wait_ready()
        yield connected
        if connected.session_info().status == session_pb2.EPISODE_STATUS_RUNNING:
            connected.stop()
