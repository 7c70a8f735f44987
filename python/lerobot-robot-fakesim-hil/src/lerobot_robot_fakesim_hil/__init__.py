"""LeRobot robot plugin for fakesim-hil: robot types ``fakesim_hil`` and ``bi_fakesim_hil``, and
the ``fakesim_intervention`` teleoperator of HIL-SERL on them."""

from .bi_fakesim_hil import BiFakesimHil
from .config_bi_fakesim_hil import BiFakesimHilConfig
from .config_fakesim_hil import FakesimHilConfig
from .config_fakesim_intervention import FakesimInterventionConfig
from .fakesim_hil import FakesimHil
from .fakesim_intervention import FakesimIntervention

__all__ = [
    "BiFakesimHil",
    "BiFakesimHilConfig",
    "FakesimHil",
    "FakesimHilConfig",
    "FakesimIntervention",
    "FakesimInterventionConfig",
]
