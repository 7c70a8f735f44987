"""Processes the tests and benches start or wait for: a virtual servo bus from `fakesim-hil
emulate`, and waiting for a process the test did not start to end."""

from __future__ import annotations

import os
import select
import subprocess
from pathlib import Path

#: The first line `fakesim-hil emulate` prints: this, then the bus's device and more.
BUS_ANNOUNCEMENT = "Virtual servo bus on "


def wait_gone(pid: int, timeout_s: float = 30.0) -> bool:
    """Whether process ``pid`` has ended within ``timeout_s`` (woken by its pidfd, not polled)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout_s)[0])
    finally:
        os.close(fd)


def start_emulator(binary: str, calibration: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    """Starts `fakesim-hil emulate --write-calibration CALIBRATION ARGS...` and returns it with the
    device of its bus, read from its announcement; raises if it announces something else."""
    process = subprocess.Popen(
        [binary, "emulate", "--write-calibration", str(calibration), *args], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    if not first.startswith(BUS_ANNOUNCEMENT):
        process.kill()
        process.wait()
        raise RuntimeError(f"emulate did not announce its bus: {first!r}")
    return process, first.removeprefix(BUS_ANNOUNCEMENT).split(":")[0]
