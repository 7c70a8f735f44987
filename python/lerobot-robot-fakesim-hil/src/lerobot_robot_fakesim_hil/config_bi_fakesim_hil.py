"""Configuration of the ``bi_fakesim_hil`` robot type (``--robot.type=bi_fakesim_hil``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from lerobot.robots.config import RobotConfig

from .config_fakesim_hil import FakesimHilConfig


@RobotConfig.register_subclass("bi_fakesim_hil")
@dataclass
class BiFakesimHilConfig(FakesimHilConfig):
    """The settings of ``fakesim_hil`` for a daemon running a pair of arms (``fakesim-hil
    --pair``, or ``--left-port`` and ``--right-port``); only the defaults below differ, and
    ``arm`` stays empty (this robot drives both arms)."""

    lease_holder: str = "lerobot bi_fakesim_hil"
    # The pair's suite and its task lift_both: lift the red cube with the left arm and the blue
    # cube with the right.
    suite: str = "pair_tabletop"
    task_index: int = 0
    # The pair's twin cameras: the shared agentview and each arm's wrist camera. Their features
    # are agentview, left_robot0_eye_in_hand and right_robot0_eye_in_hand ("/" becomes "_",
    # as LeRobot makes file paths of feature names; the prefix is bi_so_follower's for an
    # arm's camera).
    camera_names: list[str] = field(
        default_factory=lambda: ["agentview", "left/robot0_eye_in_hand", "right/robot0_eye_in_hand"]
    )

    def __post_init__(self) -> None:
        if self.arm:
            raise ValueError(
                f"bi_fakesim_hil drives both arms of the pair, not arm {self.arm!r}: fakesim_hil with --robot.arm drives one"
            )
        super().__post_init__()
