"""LeRobot robot plugin for fakesim-hil: robot type ``fakesim_hil``."""

from .config_fakesim_hil import FakesimHilConfig
from .fakesim_hil import FakesimHil

__all__ = ["FakesimHil", "FakesimHilConfig"]
