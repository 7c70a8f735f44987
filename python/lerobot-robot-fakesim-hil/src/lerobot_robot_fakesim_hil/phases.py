"""The phases of LeRobot's ``lerobot-record``, as its loop announces them.

LeRobot 0.6.1's ``record`` gives a robot nothing but ``get_observation`` and ``send_action``
calls; it announces each phase with ``log_say`` on the root logger before running it:
``Recording episode N`` (N: the dataset's episode count, so the same N again after a re-record),
``Reset the environment`` (between episodes, not after the last) and ``Re-record episode``
(the episode just recorded is discarded). A filter on the root logger hears them and hands each
to the robot at once, before the phase's loop starts its clock (so a run's reset is not taken
from the episode's first frame).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

_EPISODE = re.compile(r"Recording episode (\d+)")
_RESET = "Reset the environment"
_RERECORD = "Re-record episode"


@dataclass(frozen=True)
class Phase:
    """One announcement: ``episode`` (with its dataset index), ``reset`` or ``rerecord``."""

    kind: str
    episode: int | None = None


class RecordPhases(logging.Filter):
    """Hands lerobot-record's phase announcements to ``follow`` while installed; lets every
    record through."""

    def __init__(self, follow: Callable[[Phase], None]) -> None:
        super().__init__()
        self._follow = follow

    def filter(self, record: logging.LogRecord) -> bool:
        """Follows an announcement (records are never dropped)."""
        if isinstance(record.msg, str):
            phase = _phase(record.msg)
            if phase is not None:
                self._follow(phase)
        return True

    def install(self) -> None:
        """Starts listening on the root logger, where LeRobot's ``log_say`` logs."""
        logging.getLogger().addFilter(self)

    def remove(self) -> None:
        """Stops listening."""
        logging.getLogger().removeFilter(self)


def _phase(message: str) -> Phase | None:
    """The phase a log message announces, if it is one."""
    if message == _RESET:
        return Phase("reset")
    if message == _RERECORD:
        return Phase("rerecord")
    matched = _EPISODE.fullmatch(message)
    return Phase("episode", int(matched.group(1))) if matched else None
