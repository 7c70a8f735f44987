"""The control lease (of every arm, or of one arm of a pair) held for as long as the robot is connected."""

from __future__ import annotations

import logging
import threading

from fakesim_hil import Client, FakesimError

logger = logging.getLogger(__name__)

#: Time to live asked for the lease; it is renewed after a third of it.
LEASE_TTL_MS = 5000


class LeaseKeeper:
    """Takes the lease and renews it from a thread of its own, so LeRobot's pauses between
    calls (saving an episode, encoding its videos) do not lose it; it lapses within
    `LEASE_TTL_MS` of the process ending. On a pair, ``arm`` (``left``, ``right``) takes that
    arm's lease only; empty takes every arm's."""

    def __init__(self, client: Client, holder: str, arm: str = "") -> None:
        client.acquire_lease(holder, ttl_ms=LEASE_TTL_MS, arm=arm)
        self._client = client
        self._released = threading.Event()
        self._thread = threading.Thread(target=self._renew, name="fakesim_hil lease", daemon=True)
        self._thread.start()

    def _renew(self) -> None:
        while not self._released.wait(LEASE_TTL_MS / 3000):
            try:
                self._client.renew_lease()
            except FakesimError as lost:
                logger.error("fakesim_hil lost the control lease: %s", lost)
                return

    def release(self) -> None:
        """Stops renewing and gives the lease back."""
        self._released.set()
        self._thread.join()
        self._client.release_lease()
