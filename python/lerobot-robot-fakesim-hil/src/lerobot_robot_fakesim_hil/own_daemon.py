"""The daemon a robot starts for itself when it is given no ``--robot.address``: the bundled
``fakesim-hil`` on 127.0.0.1:0, sim-only, or driving the arm on ``--robot.port``; stopped when
the robot disconnects (or with this process)."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass

from fakesim_hil.daemon import LocalDaemon

from .config_fakesim_hil import FakesimHilConfig


@dataclass
class OwnDaemon:
    """A started daemon and the runs directory made for it (removed with it), if one was made."""

    daemon: LocalDaemon
    scratch: str | None

    @classmethod
    def start(cls, config: FakesimHilConfig, pair: bool) -> OwnDaemon:
        """Starts the daemon ``config`` asks for: ``--pair`` for a pair robot, ``--port`` and
        ``--robot-id`` (the robot's ``id``) for an arm on a port."""
        if config.arm:
            raise ValueError(
                f"--robot.arm={config.arm} drives one arm of a running pair daemon: give its --robot.address"
            )
        args: list[str] = []
        if pair:
            if config.port:
                raise ValueError(
                    "bi_fakesim_hil starts a twin-only pair; for two real arms start fakesim-hil --left-port ... "
                    "--right-port ... and give its --robot.address"
                )
            args.append("--pair")
        elif config.port:
            args += ["--port", config.port]
            if config.id:
                args += ["--robot-id", config.id]
        scratch = None
        runs_dir = config.runs_dir
        if runs_dir is None:
            runs_dir = scratch = tempfile.mkdtemp(prefix="fakesim-robot-")
        try:
            daemon = LocalDaemon.start(runs_dir, *args, binary=config.daemon_bin)
        except BaseException:
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
            raise
        return cls(daemon, scratch)

    @property
    def address(self) -> str:
        """The address the daemon bound."""
        return self.daemon.address

    def stop(self) -> None:
        """Stops the daemon (SIGTERM: it ends its episode and the arm's torque as it does on
        Ctrl-C) and removes the runs directory made for it."""
        self.daemon.stop()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
