"""LeRobot robot plugin for fakesim-hil: robot types ``fakesim_hil`` and ``bi_fakesim_hil``."""

from .bi_fakesim_hil import BiFakesimHil
from .config_bi_fakesim_hil import BiFakesimHilConfig
from .config_fakesim_hil import FakesimHilConfig
from .fakesim_hil import FakesimHil

__all__ = ["BiFakesimHil", "BiFakesimHilConfig", "FakesimHil", "FakesimHilConfig"]
