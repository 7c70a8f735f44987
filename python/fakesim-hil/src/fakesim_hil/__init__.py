"""Python client of the fakesim-hil daemon: a typed client, connection settings, a Gymnasium env."""

import os

# This package starts daemons and emulators by fork and exec (`daemon.LocalDaemon`). gRPC's
# fork handlers, which its core turns on unless told otherwise, are for processes that fork
# without exec, and a fork made while a channel's threads poll can hang in them for good; so
# they are off unless the caller chose, before gRPC is first imported.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

from .client import ChunkResult, ChunkStop, Client, ImageTiming, Observation, TickResult, mode_name  # noqa: E402
from .connection import Connection  # noqa: E402
from .errors import FakesimError  # noqa: E402

__all__ = ["ChunkResult", "ChunkStop", "Client", "Connection", "FakesimError", "ImageTiming", "Observation", "TickResult", "mode_name"]
