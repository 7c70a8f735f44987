"""How close `python -m fakesim_hil.align_camera` puts a hidden camera, by number of frames: the test's two
rigs (python/tests/test_align_camera.py: a front camera with the board in the gripper, a wrist
camera with the board on the table; the frames drawn by the daemon given the hidden camera's
profile and the board, noise of 3 grey levels), solved from the first 5, 8 and all 16 of their
poses:

    FAKESIM_HIL_BIN=target/debug/fakesim-hil python python/bench/align_camera_accuracy.py

Prints, per rig and frame count, the position error (mm), rotation error (degrees), the larger
focal length error (%) and the reprojection error the command reports. Not a timing: the figures
are the same on every machine up to the renderer's rasterisation.
"""

from __future__ import annotations

import re
import sys
import tempfile
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_align_camera import FRONT, SCENE, WRIST, align, camera_errors, write_frames  # noqa: E402


def main() -> None:
    """Prints the table."""
    print("| rig | frames | position mm | rotation deg | focal % | reprojection px |")
    print("|---|---|---|---|---|---|")
    for name, rig in (("front", FRONT), ("wrist", WRIST)):
        for count in (5, 8, 16):
            with tempfile.TemporaryDirectory() as scratch:
                directory = Path(scratch)
                frames = write_frames(directory, rig, count)
                profile = directory / "camera.toml"
                run = align("solve", frames, "--name", name, "--profile", profile, "--mount", rig.mount, "--model", SCENE)
                if run.returncode != 0:
                    print(f"| {name} | {count} | failed: {run.stderr.strip()} | | | |")
                    continue
                position_mm, angle_deg, focal = camera_errors(tomllib.loads(profile.read_text()), rig)
                reprojection = re.search(r"reprojection error: ([0-9.]+) px", run.stdout)
                print(f"| {name} | {count} | {position_mm:.2f} | {angle_deg:.3f} | {100 * focal:.3f} | {reprojection.group(1) if reprojection else '?'} |")


if __name__ == "__main__":
    main()
