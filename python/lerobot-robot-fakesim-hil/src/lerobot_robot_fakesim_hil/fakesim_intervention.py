"""The ``fakesim_intervention`` teleoperator: a person's leader arm and the daemon's judgement as
the teleop events of LeRobot's HIL-SERL (``lerobot.rl.actor``)."""

from __future__ import annotations

import logging
from functools import cached_property
from typing import Any

import numpy as np
from lerobot.teleoperators.so_leader import SO101Leader, SO101LeaderConfig
from lerobot.teleoperators.teleoperator import Teleoperator
from lerobot.teleoperators.utils import TeleopEvents

from .config_fakesim_intervention import FakesimInterventionConfig
from .fakesim_hil import connected_robot
from .joint_bus import ACTION_SCALE

logger = logging.getLogger(__name__)

#: Tries at connecting the leader: LeRobot's leader writes each register once as it configures
#: the servos, so one status packet missed (a busy machine, a long USB latency) fails the whole
#: connect, and with it the actor's start.
CONNECT_TRIES = 3


class FakesimIntervention(Teleoperator):
    """Its action is the leader's pose on the joints the robot's HIL-SERL environment drives
    (``--env.robot.rl_joints``), in their order, as HIL-SERL's actions are: -1..1 across each
    joint's calibrated range (the leader is read in LeRobot's range units). Moving the leader takes over: ``is_intervention``
    holds from a reading ``engage`` away from the one before until ``release_frames`` readings
    without such a move. ``success`` is the daemon's judgement of the running task, read from the
    fakesim_hil robot connected in the same process."""

    config_class = FakesimInterventionConfig
    name = "fakesim_intervention"

    def __init__(self, config: FakesimInterventionConfig) -> None:
        super().__init__(config)
        self.config = config
        self.leader = SO101Leader(
            SO101LeaderConfig(
                port=config.port,
                use_degrees=False,
                num_read_retries=config.num_read_retries,
                id=config.id,
                calibration_dir=config.calibration_dir,
            )
        )
        self._last: np.ndarray | None = None
        self._still = 0
        self._engaged = False

    @cached_property
    def action_features(self) -> dict[str, type]:
        return self.leader.action_features

    @cached_property
    def feedback_features(self) -> dict[str, type]:
        return {}

    @property
    def is_connected(self) -> bool:
        return self.leader.is_connected

    def connect(self, calibrate: bool = True) -> None:
        """Connects the leader, again after a missed reply (the port closed in between), at most
        ``CONNECT_TRIES`` times."""
        for attempt in range(1, CONNECT_TRIES + 1):
            try:
                self.leader.connect(calibrate)
                return
            except ConnectionError as missed:
                if attempt == CONNECT_TRIES:
                    raise
                logger.warning("%s: connecting the leader failed (%s); trying again", self, missed)
                if self.leader.is_connected:
                    self.leader.bus.disconnect(disable_torque=False)

    @property
    def is_calibrated(self) -> bool:
        return self.leader.is_calibrated

    def calibrate(self) -> None:
        """Calibrates the leader."""
        self.leader.calibrate()

    def configure(self) -> None:
        """Configures the leader."""
        self.leader.configure()

    def get_action(self) -> np.ndarray:
        """The leader's pose on the driven joints; notes whether the person is moving it."""
        reading = self.leader.get_action()
        pose = np.array([reading[f"{name}.pos"] / ACTION_SCALE for name in connected_robot().bus.motors], dtype=np.float32)
        moved = self._last is not None and float(np.abs(pose - self._last).max()) > self.config.engage
        self._last = pose
        if moved:
            if not self._engaged:
                logger.info("%s: the person takes over", self)
            self._engaged, self._still = True, 0
        elif self._engaged:
            self._still += 1
            if self._still >= self.config.release_frames:
                self._engaged = False
                logger.info("%s: back to the policy", self)
        return pose

    def get_teleop_events(self) -> dict[TeleopEvents, bool]:
        """Intervention as the leader moves; success as the daemon judges the task now."""
        return {
            TeleopEvents.IS_INTERVENTION: self._engaged,
            TeleopEvents.SUCCESS: connected_robot().judgement(),
            TeleopEvents.TERMINATE_EPISODE: False,
            TeleopEvents.RERECORD_EPISODE: False,
        }

    def send_feedback(self, feedback: dict[str, Any]) -> None:
        """Nothing: the leader gets no feedback here."""

    def disconnect(self) -> None:
        """Disconnects the leader."""
        self.leader.disconnect()
