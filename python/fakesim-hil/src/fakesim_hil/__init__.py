"""Python client of the fakesim-hil daemon: a typed client, connection settings, a Gymnasium env."""

from .client import ChunkResult, ChunkStop, Client, ImageTiming, Observation, TickResult, mode_name
from .connection import Connection
from .errors import FakesimError

__all__ = ["ChunkResult", "ChunkStop", "Client", "Connection", "FakesimError", "ImageTiming", "Observation", "TickResult", "mode_name"]
