"""LeRobot feature names of the daemon's joints and cameras, for one arm or a pair."""

from __future__ import annotations

from dataclasses import dataclass

#: Motor names of LeRobot's SO-101 follower, in the daemon's action-key order.
MOTORS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")
#: The arms of a pair daemon (``fakesim-hil --pair``), as GetModelInfo's ``arms`` names them.
PAIR = ("left", "right")


@dataclass(frozen=True)
class Joint:
    """One joint: its LeRobot feature and the daemon's observation key of its position."""

    feature: str
    observation_key: str


def joints(arms: tuple[str, ...]) -> list[Joint]:
    """The joints of a lone arm (``arms`` empty: ``shoulder_pan.pos``, observed as
    ``pos.shoulder_pan``) or of each named arm in turn, as LeRobot's bi_so_follower names them
    (``left_shoulder_pan.pos``, observed as ``left/pos.shoulder_pan``), in action order."""
    if not arms:
        return [Joint(f"{motor}.pos", f"pos.{motor}") for motor in MOTORS]
    return [Joint(f"{arm}_{motor}.pos", f"{arm}/pos.{motor}") for arm in arms for motor in MOTORS]


def arm_joints(arm: str) -> list[Joint]:
    """One arm of a pair's joints: so101_follower's features, observed as ``{arm}/pos.{motor}``."""
    return [Joint(f"{motor}.pos", f"{arm}/pos.{motor}") for motor in MOTORS]


def camera_feature(camera: str) -> str:
    """The feature of a twin camera: its name with each ``/`` an ``_`` (an arm's camera of a pair,
    ``left/robot0_eye_in_hand``, is ``left_robot0_eye_in_hand``), as LeRobot makes paths of
    feature names."""
    return camera.replace("/", "_")

