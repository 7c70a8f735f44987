"""A sim-only daemon of this process's own: started on a Unix socket of its own (or 127.0.0.1:0),
stopped with the object, or with this process if it dies first (on Linux, when started from the
main thread)."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: Environment variable naming the fakesim-hil binary to start.
BINARY_ENV = "FAKESIM_HIL_BIN"


def bundled_binary() -> str | None:
    """The ``fakesim-hil`` the ``fakesim-hil`` wheel installed into this Python environment's
    scripts directory (or the user's, for ``pip install --user``), if there is one."""
    for scheme in (None, f"{os.name}_user"):
        try:
            scripts = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
        except KeyError:
            continue
        candidate = Path(scripts) / "fakesim-hil"
        if candidate.is_file():
            return str(candidate)
    return None


def find_binary(binary: str | os.PathLike[str] | None = None) -> str:
    """The daemon binary: ``binary``, else ``$FAKESIM_HIL_BIN``, else the one the wheel installed
    beside this Python (`bundled_binary`), else ``fakesim-hil`` on PATH."""
    found = binary or os.environ.get(BINARY_ENV) or bundled_binary() or shutil.which("fakesim-hil")
    if not found or not Path(found).is_file():
        raise FileNotFoundError(
            f"no fakesim-hil binary to start (given {binary!r}, ${BINARY_ENV}={os.environ.get(BINARY_ENV)!r}, "
            "none installed with this Python, none on PATH): pip install fakesim-hil, or pass its path or "
            "an address of a running daemon"
        )
    return str(found)


#: prctl option: the signal a process gets when the thread that started it ends.
PR_SET_PDEATHSIG = 1


def _stop_with_parent() -> Callable[[], None] | None:
    """What a child runs before exec so that it gets SIGTERM when this process dies (a Ray
    actor killed outright, say) instead of living on: on Linux, from the main thread only, as
    the kernel sends the signal when the *thread* that started the child ends; ``None``
    otherwise. The function is looked up here, in the parent, so the child only calls it."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    return lambda: prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


#: ``LocalDaemon.start``'s ``listen`` for a Unix domain socket of the daemon's own.
UNIX_SOCKET = "unix"


@dataclass
class LocalDaemon:
    """A running daemon: its process, bound address and runs directory."""

    process: subprocess.Popen[str]
    address: str
    runs_dir: Path
    #: The directory holding its Unix socket, removed on `stop` (None on TCP).
    socket_dir: Path | None = None

    @classmethod
    def start(
        cls,
        runs_dir: str | os.PathLike[str],
        *args: str,
        binary: str | os.PathLike[str] | None = None,
        listen: str = UNIX_SOCKET,
    ) -> LocalDaemon:
        """Starts ``fakesim-hil --listen LISTEN --runs-dir RUNS_DIR ARGS...`` and waits for the
        bound address it prints first; its log goes to ``RUNS_DIR/daemon.log``. ``listen`` is
        ``unix`` (the default: a Unix domain socket in a private temporary directory, the
        cheapest round trip for this process's own client), ``127.0.0.1:0`` for a free TCP port
        other hosts' tools can be told, or any ``--listen`` value. Started from the main thread
        on Linux, the daemon is terminated when this process dies."""
        runs = Path(runs_dir)
        runs.mkdir(parents=True, exist_ok=True)
        socket_dir = Path(tempfile.mkdtemp(prefix="fakesim-")) if listen == UNIX_SOCKET else None
        if socket_dir is not None:
            listen = f"unix:{socket_dir / 'daemon.sock'}"
        with open(runs / "daemon.log", "w", encoding="utf-8") as log:
            process = subprocess.Popen(
                [find_binary(binary), "--listen", listen, "--runs-dir", str(runs), *args],
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                preexec_fn=_stop_with_parent(),
            )
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line:
            process.wait()
            log_text = (runs / "daemon.log").read_text(encoding="utf-8")
            if socket_dir is not None:
                shutil.rmtree(socket_dir, ignore_errors=True)
            raise RuntimeError(f"the daemon ended ({process.returncode}) before listening:\n{log_text}")
        return cls(process, line, runs, socket_dir)

    def stop(self) -> None:
        """Terminates the daemon (SIGTERM) and waits for it, killing it after 30 s."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        if self.socket_dir is not None:
            shutil.rmtree(self.socket_dir, ignore_errors=True)
