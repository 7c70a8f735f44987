"""The joints LeRobot's HIL-SERL environment drives, shaped as the motor bus it reads them from."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from fakesim_hil.errors import FakesimError

if TYPE_CHECKING:
    from .fakesim_hil import FakesimHil

#: A HIL-SERL action of 1 is this many of LeRobot's range units (``use_degrees=false``): the
#: policy's actions, in the [-1, 1] ``RobotEnv`` declares, span each joint's calibrated range.
ACTION_SCALE = 100.0
#: The daemon's refusals of an action for where it would take the arm (the table, a joint's
#: range, a contact the twin's preview foresees): nothing moved.
REFUSED_TARGETS = frozenset({"below_table", "out_of_range", "preview_refused"})


class JointBus:
    """What ``lerobot.rl.gym_manipulator.RobotEnv`` asks of a Feetech robot's ``bus``: ``motors``,
    the joints its actions drive in their order, and the two registers its reset reads and
    writes. A write is one control tick toward the goals; joints left out keep their targets."""

    def __init__(self, robot: FakesimHil, names: list[str]) -> None:
        self._robot = robot
        #: The driven joints by name, in action order (the value is the joint's place).
        self.motors = {name: index for index, name in enumerate(names)}

    def sync_read(self, register: str) -> dict[str, float]:
        """``Present_Position``: each driven joint's target, where the twin's joint settles."""
        if register != "Present_Position":
            raise ValueError(f"the fakesim_hil robot reads only Present_Position, not {register}")
        targets = self._robot.targets()
        return {name: targets[f"{name}.pos"] for name in self.motors}

    def sync_write(self, register: str, values: dict[str, float]) -> None:
        """``Goal_Position``: one control tick toward these goals. Only LeRobot's reset writes
        them, in a straight line of joint goals that may pass through the table: a goal the
        daemon refuses for where it would take the arm is skipped (logged), the next tried."""
        if register != "Goal_Position":
            raise ValueError(f"the fakesim_hil robot writes only Goal_Position, not {register}")
        try:
            self._robot.send_action({f"{name}.pos": value for name, value in values.items()})
        except FakesimError as refusal:
            if refusal.reason not in REFUSED_TARGETS:
                raise
            logging.warning("a reset goal was refused and skipped: %s", refusal)
