"""`LocalDaemon`: a daemon started from Python does not outlive the process that started it, and
one started off the main thread does not end with its thread."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from processes import wait_gone

#: A process that starts a daemon, prints its pid and waits to be killed.
STARTER = """
import sys
from fakesim_hil.daemon import LocalDaemon
daemon = LocalDaemon.start(sys.argv[1], binary=sys.argv[2])
print(daemon.process.pid, flush=True)
sys.stdin.read()
"""


def test_a_daemon_ends_when_the_process_that_started_it_is_killed(fakesim_bin: str, tmp_path: Path) -> None:
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, str(tmp_path / "runs"), fakesim_bin], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert starter.stdout is not None
        pid = int(starter.stdout.readline())
    finally:
        starter.kill()  # SIGKILL: no atexit, no cleanup of its own
        starter.wait()
    assert wait_gone(pid), f"daemon {pid} outlived the process that started it"


def test_a_daemon_started_off_the_main_thread_is_not_tied_to_that_thread() -> None:
    # The kernel signals a child when the thread that started it ends, so only the main thread,
    # which ends with the process, asks for the signal.
    from fakesim_hil.daemon import _stop_with_parent

    assert _stop_with_parent() is not None
    asked: list[object] = []
    thread = threading.Thread(target=lambda: asked.append(_stop_with_parent()))
    thread.start()
    thread.join()
    assert asked == [None]
