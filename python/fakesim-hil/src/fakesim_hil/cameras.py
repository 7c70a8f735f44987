"""The frame size of the daemon's camera profiles, known before a daemon runs: the standard
`front` and `wrist`, and those of profile files (what `fakesim-hil --camera FILE` reads)."""

from __future__ import annotations

import tomllib
from pathlib import Path


#: Frame size (height, width) of the daemon's standard camera profiles, by camera name: the front
#: webcam and the wrist camera (each arm's in a pair), 640x480 as LeRobot's OpenCV cameras
#: usually record (crates/fakesim-twin/src/cameras/standard.rs).
STANDARD_SIZES = {name: (480, 640) for name in ("front", "wrist", "left/wrist", "right/wrist")}


def profile_sizes(paths: list[str]) -> dict[str, tuple[int, int]]:
    """The frame size (height, width) of each camera profile file, by its camera's name: the
    standard profiles', with the files' over them (a profile named front replaces that one)."""
    sizes = dict(STANDARD_SIZES)
    for path in paths:
        with open(Path(path).expanduser(), "rb") as file:
            profile = tomllib.load(file)
        try:
            sizes[str(profile["name"])] = (int(profile["height"]), int(profile["width"]))
        except (KeyError, TypeError, ValueError) as bad:
            raise ValueError(f"camera profile {path}: needs name, width and height ({bad!r})") from None
    return sizes
