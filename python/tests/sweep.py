"""The motion the identification tests record: each joint steps or ramps to a new level every
0.7 s, the levels and the kind of move different per joint, so a fit sees steps and ramps of a
few sizes."""

from __future__ import annotations

import math

#: Seconds between moves.
MOVE_S = 0.7


def offset(joint: int, t: float, swing: float) -> float:
    """Joint ``joint``'s goal at time ``t``, relative to where it started, within ``swing``
    either way (in the caller's units)."""
    move = int(t / MOVE_S)
    phase = (t - MOVE_S * move) / MOVE_S
    level = math.sin(1.7 * move + 2.3 * joint) * swing
    previous = math.sin(1.7 * (move - 1) + 2.3 * joint) * swing if move else 0.0
    ramp = (move + joint) % 3 == 0
    return previous + (level - previous) * min(phase / 0.6, 1.0) if ramp else level
