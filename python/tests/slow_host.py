"""LeRobot's Feetech SDK on a busy test host. The SDK gives a servo's reply a window of twice its
USB adapter latency (16 ms) plus the bytes' time, and it reads only while that window lasts: a
test process descheduled for longer on these shared 2 cores misses a reply the virtual bus sent
in time. The tests' LeRobot processes, in-process and the commands they start, get a wider one."""

from __future__ import annotations

import os
from pathlib import Path

#: The adapter latency the SDK assumes in the tests, in ms (its own: 16).
TEST_LATENCY_MS = 50
#: A directory whose ``sitecustomize`` widens the window in every Python process started with it
#: on ``PYTHONPATH``.
SITE_DIR = Path(__file__).with_name("site")


def widen_reply_window() -> None:
    """Sets the SDK's adapter latency in this process to `TEST_LATENCY_MS`."""
    import scservo_sdk.port_handler as port_handler

    port_handler.LATENCY_TIMER = TEST_LATENCY_MS


def lerobot_environment() -> dict[str, str]:
    """This process's environment with `SITE_DIR` (and this directory) first on ``PYTHONPATH``."""
    paths = [str(SITE_DIR), str(SITE_DIR.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
