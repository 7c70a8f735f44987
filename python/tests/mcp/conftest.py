"""Fixtures of the MCP tests: the fakesim-hil binary, and processes it runs (a daemon, the
virtual servo bus) whose stderr is read for the lines announcing their addresses; a throw-away
CA with a server certificate and a token."""

import os
import queue
import re
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from pki import write_pki


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="session")
def fakesim_bin() -> str:
    path = os.environ.get("FAKESIM_HIL_BIN")
    assert path, "FAKESIM_HIL_BIN must name the fakesim-hil binary (scripts/test-all sets it)"
    assert Path(path).is_file(), path
    return path


class Process:
    """A child process whose output lines are collected by a thread, so its pipe never fills."""

    def __init__(self, args: list[str], stream: str, stop_signal: int):
        self.stop_signal = stop_signal
        self.popen = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if stream == "stdout" else subprocess.DEVNULL,
            stderr=subprocess.PIPE if stream == "stderr" else None,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        pipe = self.popen.stdout if stream == "stdout" else self.popen.stderr
        threading.Thread(target=self._read, args=(pipe,), daemon=True).start()

    def _read(self, pipe) -> None:
        for line in pipe:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, pattern: str) -> re.Match:
        """The first output line matching `pattern`; fails if the process ends first."""
        regex = re.compile(pattern)
        while True:
            line = self.lines.get(timeout=120)
            if line is None:
                raise AssertionError(f"{self.popen.args[1:]} ended ({self.popen.wait()}) before {pattern!r}:\n"
                                     + "".join(self.seen))
            self.seen.append(line)
            found = regex.search(line)
            if found:
                return found

    def stop(self) -> int:
        if self.popen.poll() is None:
            self.popen.send_signal(self.stop_signal)
        return self.popen.wait(timeout=60)


@pytest.fixture
def spawn():
    """Starts processes and stops every one still running at the end of the test."""
    started: list[Process] = []

    def start(args: list[str], stream: str = "stderr", stop_signal: int = signal.SIGTERM) -> Process:
        process = Process(args, stream, stop_signal)
        started.append(process)
        return process

    yield start
    for process in reversed(started):
        process.stop()


@pytest.fixture
def daemon(fakesim_bin, spawn, tmp_path):
    """Starts the daemon with `extra` options on loopback ports; answers its gRPC address, its
    MCP URL (when --mcp-listen is among the options), the process, and the runs directory."""

    def start(*extra: str) -> dict:
        runs = tmp_path / "runs"
        args = [fakesim_bin, "--listen", "127.0.0.1:0", "--runs-dir", str(runs), "--image-size", "32",
                "--log-level", "info", *extra]
        process = spawn(args)
        found = {"process": process, "runs": runs}
        if "--mcp-listen" in extra:
            found["mcp_url"] = process.wait_for(r"MCP endpoint at (https?://\S+)").group(1)
        found["address"] = process.wait_for(r"listening on (\S+)").group(1)
        return found

    return start


@pytest.fixture
def virtual_arm(emulate):
    """A virtual SO-101 on a pseudo-terminal (`fakesim-hil emulate`, the suite's own fixture): its
    ``follower_args`` are the daemon's arguments for it."""
    return emulate()


@pytest.fixture
def pki(tmp_path):
    """A throw-away CA, a server certificate for 127.0.0.1 signed by it, and a token file."""
    return write_pki(tmp_path)
