"""The ``bi_fakesim_hil`` robot: LeRobot's bimanual SO follower interface over a pair daemon."""

from __future__ import annotations

from .config_bi_fakesim_hil import BiFakesimHilConfig
from .fakesim_hil import FakesimHil
from .features import PAIR


class BiFakesimHil(FakesimHil):
    """The ``fakesim_hil`` robot on a daemon running two arms: bi_so_follower's features
    (``left_shoulder_pan.pos`` ... ``right_gripper.pos``, left first), each action one tick of
    both arms, each arm's joints converted through its own calibration by the daemon."""

    config_class = BiFakesimHilConfig
    name = "bi_fakesim_hil"
    arms = PAIR
