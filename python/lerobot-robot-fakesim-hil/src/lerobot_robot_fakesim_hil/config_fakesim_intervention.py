"""Configuration of the ``fakesim_intervention`` teleoperator (``--env.teleop.type=fakesim_intervention``)."""

from __future__ import annotations

from dataclasses import dataclass

from lerobot.teleoperators.config import TeleoperatorConfig
from lerobot.teleoperators.so_leader import SOLeaderConfig


@TeleoperatorConfig.register_subclass("fakesim_intervention")
@dataclass
class FakesimInterventionConfig(TeleoperatorConfig, SOLeaderConfig):
    """The person's SO-101 (or SO-100) leader arm, as so101_leader takes it (port, id,
    calibration_dir; it is read in range units whatever use_degrees says), and when moving it
    takes over from the policy."""

    # A reading this far from the one before on any driven joint (a fraction of the joint's
    # calibrated range; 0.01 is about 2 degrees): the person is moving the leader, and takes over.
    engage: float = 0.01
    # Readings in a row without such a move that hand the robot back to the policy.
    release_frames: int = 5

    def __post_init__(self) -> None:
        if self.engage <= 0 or self.release_frames < 1:
            raise ValueError(f"engage must be positive and release_frames at least 1, not {self.engage}, {self.release_frames}")
