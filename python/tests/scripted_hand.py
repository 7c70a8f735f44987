"""The scripted hand the person-in-the-loop tests move a virtual leader with (`fakesim-hil emulate
--script`): waypoint files in LeRobot's units, how far a pose lies off such a path, and LeRobot's
so101_leader flags for a virtual bus."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from lerobot_support import MOTORS

# How far (LeRobot units) a reading may lie off the script's path: whole servo steps (0.09 degree,
# 0.08 gripper unit) and LeRobot's float32 actions.
ON_PATH = 0.3


def write_waypoints(path: Path, waypoints: np.ndarray) -> Path:
    """Rows of ``time_s`` then the six joints (LeRobot units) as a waypoint file for `emulate --script`."""
    header = ",".join(["time_s", *(f"{motor}.pos" for motor in MOTORS)])
    rows = [",".join(f"{value:g}" for value in row) for row in waypoints]
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def off_path(points: np.ndarray, path: np.ndarray) -> np.ndarray:
    """For each point (rows, LeRobot units), its largest joint distance from the polyline through `path`."""
    shares = np.linspace(0.0, 1.0, 1001)[:, None]
    dense = np.concatenate([start + shares * (end - start) for start, end in zip(path[:-1], path[1:])])
    return np.array([np.abs(dense - point).max(axis=1).min() for point in points])


def assert_follows(points: np.ndarray, path: np.ndarray, what: str) -> None:
    """Every point lies on the path, and together they go through most of it on every joint."""
    distances = off_path(points, path)
    worst = int(distances.argmax())
    assert distances[worst] <= ON_PATH, f"{what}: {points[worst]} is {distances[worst]:.2f} off the script"
    spread = points.max(axis=0) - points.min(axis=0)
    scripted = path.max(axis=0) - path.min(axis=0)
    assert np.all(spread >= 0.6 * scripted), f"{what} cover {spread} of the script's {scripted}"


def leader_flags(bus) -> list[str]:
    """lerobot-* flags for LeRobot's so101_leader on a virtual bus, with the calibration it wrote."""
    return [
        "--teleop.type=so101_leader",
        f"--teleop.port={bus.device}",
        f"--teleop.id={bus.calibration_path.stem}",
        f"--teleop.calibration_dir={bus.calibration_path.parent}",
    ]
