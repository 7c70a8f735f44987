"""`python -m fakesim_hil.align_camera capture`: writes a frames file live, each frame taken from the camera
as LeRobot's OpenCV camera opens it (an index or a device path, width, height, fps) together with
the joint positions the daemon reports at that moment (in mirror mode, the real arm's)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np

from .client import Client
from .connection import DEFAULT_ADDRESS
from .errors import FakesimError

#: Frames read and dropped before each one kept, so that none waits in the driver's buffer from
#: before the arm was settled.
STALE_FRAMES = 5


class CaptureError(RuntimeError):
    """The camera cannot be opened or read, or the daemon cannot be reached."""


def open_camera(index_or_path: str, width: int | None, height: int | None, fps: float | None) -> cv2.VideoCapture:
    """Opens the camera as LeRobot's OpenCVCamera does: a number is a device index, anything
    else a path; the size asked for must be the size of the frames it gives, the rate the one it
    reports."""
    source: int | str = int(index_or_path) if index_or_path.isdigit() else index_or_path
    camera = cv2.VideoCapture(source)
    if not camera.isOpened():
        raise CaptureError(f"cannot open the camera {index_or_path!r}")
    for prop, value in ((cv2.CAP_PROP_FRAME_WIDTH, width), (cv2.CAP_PROP_FRAME_HEIGHT, height), (cv2.CAP_PROP_FPS, fps)):
        if value is not None:
            camera.set(prop, value)
    try:
        given_height, given_width = read_frame(camera).shape[:2]
        if (width or given_width, height or given_height) != (given_width, given_height):
            raise CaptureError(f"the camera {index_or_path!r} gives {given_width}x{given_height} frames, not {width or given_width}x{height or given_height}")
        if fps is not None and round(camera.get(cv2.CAP_PROP_FPS)) != round(fps):
            raise CaptureError(f"the camera {index_or_path!r} gives {camera.get(cv2.CAP_PROP_FPS):g} fps, not {fps:g}")
    except CaptureError:
        camera.release()
        raise
    return camera


def read_frame(camera: cv2.VideoCapture) -> np.ndarray:
    """A fresh frame: a few buffered ones dropped first."""
    for _ in range(STALE_FRAMES):
        camera.grab()
    ok, image = camera.read()
    if not ok or image is None:
        raise CaptureError("the camera gave no frame")
    return image


def capture(args: argparse.Namespace) -> None:
    """Takes a frame and the joints at each Enter on stdin, until `q` or the end of input;
    rewrites the frames file after each, so that what was taken is kept if it stops early."""
    args.directory.mkdir(parents=True, exist_ok=True)
    camera = open_camera(args.camera, args.width, args.height, args.fps)
    entries: list[dict[str, object]] = []
    try:
        with Client(args.address, token_file=args.token_file, timeout_s=10.0) as client:
            print("Enter: take a frame (hold the arm still); q then Enter: stop", flush=True)
            for line in sys.stdin:
                if line.strip().lower() == "q":
                    break
                image = read_frame(camera)
                state = client.robot_state("rad")
                name = f"frame{len(entries):02d}.png"
                cv2.imwrite(str(args.directory / name), image)
                entries.append({"image": name, "joints": dict(zip(state.joint_ids, state.positions, strict=True))})
                frames = args.directory / "frames.json"
                frames.write_text(json.dumps({"unit": "rad", "frames": entries}, indent=1) + "\n")
                print(f"{name}: taken ({len(entries)} frames in {frames})", flush=True)
    except FakesimError as error:
        raise CaptureError(f"the daemon at {args.address}: {error}") from None
    finally:
        camera.release()


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `capture` subcommand's options."""
    command = commands.add_parser("capture", help="take frames live: the camera's image and the daemon's joint positions at each Enter")
    command.add_argument("directory", type=Path, help="where to write the images and frames.json")
    command.add_argument("--camera", required=True, help="the camera as LeRobot names it: an index (0) or a path (/dev/video0)")
    command.add_argument("--width", type=int, help="frame width the camera must give, pixels")
    command.add_argument("--height", type=int, help="frame height the camera must give, pixels")
    command.add_argument("--fps", type=float, help="frame rate the camera must give")
    command.add_argument("--address", default=DEFAULT_ADDRESS, help=f"the daemon (default {DEFAULT_ADDRESS}; in mirror mode its joints are the real arm's)")
    command.add_argument("--token-file", help="the daemon's access token file, if it asks for one")
