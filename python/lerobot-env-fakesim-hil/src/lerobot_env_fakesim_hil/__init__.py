"""LeRobot env plugin: ``--env.type=fakesim_hil`` runs ``lerobot-eval`` on the fakesim-hil twin."""

from .config import FakesimHilEnvConfig
from .env import LeRobotFakesimEnv

__all__ = ["FakesimHilEnvConfig", "LeRobotFakesimEnv"]
