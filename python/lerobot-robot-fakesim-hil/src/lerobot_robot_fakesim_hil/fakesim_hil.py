"""The ``fakesim_hil`` robot: LeRobot's SO-101 follower interface over the fakesim-hil daemon."""

from __future__ import annotations

import logging
import time
from functools import cached_property
from typing import Any

import numpy as np
from lerobot.robots.robot import Robot
from lerobot.utils.errors import DeviceAlreadyConnectedError, DeviceNotConnectedError

from fakesim.v1 import session_pb2
from fakesim_hil import Client

from .config_fakesim_hil import FakesimHilConfig

logger = logging.getLogger(__name__)

#: Motor names of LeRobot's SO-101 follower, in the daemon's action-key order.
MOTORS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")

#: Time to live asked for the control lease; it is renewed after a third of it.
LEASE_TTL_MS = 5000


class FakesimHil(Robot):
    """Each action is one daemon control tick (lock-step on the twin, 50 ms of real time in hil);
    joint values are in LeRobot's units, converted by the daemon through the calibration."""

    config_class = FakesimHilConfig
    name = "fakesim_hil"

    def __init__(self, config: FakesimHilConfig) -> None:
        super().__init__(config)
        self.config = config
        self.unit = "lerobot_degrees" if config.use_degrees else "lerobot_range"
        # The daemon renders the frames; LeRobot's scripts only count the cameras.
        self.cameras: dict[str, str] = {name: name for name in config.camera_names}
        self.client: Client | None = None
        self.run: str | None = None
        self._targets: list[float] | None = None
        self._last: dict[str, Any] | None = None
        self._lease_renewed: float | None = None

    @property
    def _motors_ft(self) -> dict[str, type]:
        return {f"{motor}.pos": float for motor in MOTORS}

    @cached_property
    def observation_features(self) -> dict[str, type | tuple]:
        cameras = {name: (self.config.image_height, self.config.image_width, 3) for name in self.config.camera_names}
        return {**self._motors_ft, **cameras}

    @cached_property
    def action_features(self) -> dict[str, type]:
        return self._motors_ft

    @property
    def is_connected(self) -> bool:
        return self.client is not None

    def connect(self, calibrate: bool = True) -> None:
        """Connects, switches to the configured mode and starts the configured episode."""
        if self.client is not None:
            raise DeviceAlreadyConnectedError(f"{self} is already connected")
        config = self.config
        client = Client(
            config.address, token_file=config.token_file, tls_ca=config.tls_ca, tls_cert=config.tls_cert, tls_key=config.tls_key
        )
        client.wait_ready()
        status = client.status()
        if status.lease_required or status.port:
            client.acquire_lease(config.lease_holder, ttl_ms=LEASE_TTL_MS)
            self._lease_renewed = time.monotonic()
        if client.mode() != config.mode:
            client.set_mode(config.mode, sync=config.sync)
        if config.task_index >= 0:
            if client.session_info().status == session_pb2.EPISODE_STATUS_RUNNING:
                client.stop()
            self.run = client.reset(config.suite, config.task_index, config.init_state_index).run
        self.client = client
        self._targets = list(client.robot_state(self.unit).ctrl_targets)
        logger.info("%s connected to %s (%s mode, run %s)", self, config.address, config.mode, self.run)

    @property
    def is_calibrated(self) -> bool:
        return True

    def calibrate(self) -> None:
        """Nothing to do: the daemon holds the arm's calibration."""

    def configure(self) -> None:
        """Nothing to do: the daemon configures the servos."""

    def _tick(self, targets: list[float]) -> dict[str, Any]:
        assert self.client is not None
        if self._lease_renewed is not None and time.monotonic() - self._lease_renewed > LEASE_TTL_MS / 3000:
            self.client.renew_lease()
            self._lease_renewed = time.monotonic()
        result = self.client.tick(
            targets,
            images=bool(self.config.camera_names),
            cameras=self.config.camera_names,
            width=self.config.image_width,
            height=self.config.image_height,
            unit=self.unit,
        )
        observation: dict[str, Any] = {f"{motor}.pos": float(v) for motor, v in zip(MOTORS, result.observation[: len(MOTORS)])}
        observation.update(result.images)
        return observation

    def get_observation(self) -> dict[str, Any]:
        """Joint positions (LeRobot units) and frames after the last action; before the first
        action, one tick holding the current targets."""
        if self.client is None:
            raise DeviceNotConnectedError(f"{self} is not connected")
        if self._last is None:
            assert self._targets is not None
            self._last = self._tick(self._targets)
        observation, self._last = self._last, None
        return observation

    def send_action(self, action: dict[str, Any]) -> dict[str, Any]:
        """Runs one control tick toward the targets; joints the action leaves out keep theirs."""
        if self.client is None or self._targets is None:
            raise DeviceNotConnectedError(f"{self} is not connected")
        targets = [float(np.asarray(action.get(f"{motor}.pos", old))) for motor, old in zip(MOTORS, self._targets)]
        self._last = self._tick(targets)
        self._targets = targets
        return {f"{motor}.pos": value for motor, value in zip(MOTORS, targets)}

    def disconnect(self) -> None:
        """Stops the episode (writing its summary.json) and closes the connection."""
        if self.client is None:
            raise DeviceNotConnectedError(f"{self} is not connected")
        if self.run is not None and self.client.session_info().status == session_pb2.EPISODE_STATUS_RUNNING:
            summary = self.client.stop().artifacts.summary
            logger.info("%s: run %s ended, report in %s", self, self.run, summary)
        if self.client.lease_id is not None:
            self.client.release_lease()
            self._lease_renewed = None
        self.client.close()
        self.client = None
