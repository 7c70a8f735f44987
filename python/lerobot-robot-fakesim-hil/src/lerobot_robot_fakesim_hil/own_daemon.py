"""The daemon a robot starts for itself when it is given no ``--robot.address``: the bundled
``fakesim-hil`` on 127.0.0.1:0, sim-only, or driving the arm on ``--robot.port``; stopped when
the robot disconnects (or with this process). Its runs (each episode's journal, frames and
summary.json) stay after it: in ``--robot.runs_dir``, else in a directory of its own under
LeRobot's home (:func:`kept_runs_dir`)."""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from fakesim_hil.daemon import LocalDaemon
from lerobot.utils.constants import HF_LEROBOT_HOME

from .config_fakesim_hil import FakesimHilConfig


def kept_runs_dir() -> str:
    """A new directory for one daemon's runs under ``$HF_LEROBOT_HOME/fakesim_hil/runs`` (LeRobot's
    home: ``~/.cache/huggingface/lerobot`` unless set), named by its start time, UTC."""
    home = Path(os.environ.get("HF_LEROBOT_HOME", HF_LEROBOT_HOME)).expanduser()
    parent = home / "fakesim_hil" / "runs"
    parent.mkdir(parents=True, exist_ok=True)
    return tempfile.mkdtemp(prefix=time.strftime("%Y%m%dT%H%M%SZ-", time.gmtime()), dir=parent)


@dataclass
class OwnDaemon:
    """A started daemon and the directory its runs are kept in."""

    daemon: LocalDaemon
    runs_dir: str

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
        for profile in config.camera_profiles:
            args += ["--camera", profile]
        runs_dir = config.runs_dir if config.runs_dir is not None else kept_runs_dir()
        return cls(LocalDaemon.start(runs_dir, *args, binary=config.daemon_bin), runs_dir)

    @property
    def address(self) -> str:
        """The address the daemon bound."""
        return self.daemon.address

    def stop(self) -> None:
        """Stops the daemon (SIGTERM: it ends its episode and the arm's torque as it does on
        Ctrl-C); its runs stay."""
        self.daemon.stop()
