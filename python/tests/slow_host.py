"""LeRobot's Feetech SDK on a busy test host. The virtual bus (`fakesim-hil emulate`) shares these
2 cores with the host under test: at a load average of 8 to 13 its replies took up to 130 ms to
leave it (most under 20 ms), where a real servo answers within a millisecond whatever the host
does. LeRobot 0.6 waits 50 ms beyond a reply's bytes (its own `patch_setPacketTimeout`, which it
puts on every port it opens, in place of the SDK's twice-the-adapter-latency window), so a reply
sent late is missed, and the replies left behind then answer the next requests ("There is no
status packet"). The tests' LeRobot processes, in-process and the commands they start, wait
longer; a reply that arrives returns at once, so only a reply that never comes costs the wait."""

from __future__ import annotations

import os
from pathlib import Path

#: How long the tests' LeRobot buses wait for a reply beyond its bytes' time, in ms (LeRobot's own: 50).
TEST_REPLY_WINDOW_MS = 500
#: The adapter latency the bare SDK assumes in the tests, in ms (its own: 16; it waits twice this).
TEST_LATENCY_MS = TEST_REPLY_WINDOW_MS // 2
#: A directory whose ``sitecustomize`` widens the window in every Python process started with it
#: on ``PYTHONPATH``.
SITE_DIR = Path(__file__).with_name("site")


def set_packet_timeout(port, packet_length: int) -> None:
    """A port's reply deadline from now: the bytes of a reply of ``packet_length`` and 3 more
    (LeRobot's margin) at the port's rate, then `TEST_REPLY_WINDOW_MS`."""
    port.packet_start_time = port.getCurrentTime()
    port.packet_timeout = port.tx_time_per_byte * (packet_length + 3) + TEST_REPLY_WINDOW_MS


def widen_reply_window() -> None:
    """Widens the reply window of the SDK and of LeRobot's Feetech buses made from now on."""
    import scservo_sdk.port_handler as port_handler
    from lerobot.motors.feetech import feetech

    port_handler.LATENCY_TIMER = TEST_LATENCY_MS
    # LeRobot binds this function to each bus's port when it makes the bus.
    feetech.patch_setPacketTimeout = set_packet_timeout


def lerobot_environment() -> dict[str, str]:
    """This process's environment with `SITE_DIR` (and this directory) first on ``PYTHONPATH``."""
    paths = [str(SITE_DIR), str(SITE_DIR.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
