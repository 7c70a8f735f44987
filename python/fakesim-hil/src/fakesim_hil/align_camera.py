"""`python -m fakesim_hil.align_camera`: puts the twin's camera where the user's real camera is.

    python -m fakesim_hil.align_camera board board.png           # print this, glue it flat, clamp it in the gripper
    python -m fakesim_hil.align_camera capture frames/ --camera 0 --width 640 --height 480   # Enter per pose
    python -m fakesim_hil.align_camera solve frames/frames.json --name front --profile front.toml --overlay front.png --board-file board-fit.toml

`solve` reads a frames file (JSON, see `read_frames`): real images of the camera, each with the
arm's joint positions when it was taken; it finds the ChArUco board in each, fits the camera's
intrinsics and its pose (in the world, or on `--mount BODY` for a wrist camera), prints the
reprojection error, writes the camera profile and an overlay of the twin's arm on a real frame,
and (`--board-file`) the fitted board for the daemon's `--board`, to check the fit against its render.
Bad input ends with one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

try:
    import cv2
    import numpy as np
    import scipy.optimize  # noqa: F401  (camera_fit's solver: checked here to say what to install)
except ImportError as missing:
    sys.exit(f"python -m fakesim_hil.align_camera needs OpenCV and scipy: pip install 'fakesim-hil[align]' ({missing.name} is missing)")

import mujoco

from .align_capture import CaptureError, add_parser, capture
from .camera_fit import MIN_CORNERS, BoardSpec, CameraFit, FitError, View, detect, fit
from .twin_view import WORLD, Twin, TwinError, overlay, profile_toml

#: The SO-101 scene of a source checkout (python/fakesim-hil/src/fakesim_hil -> the root).
CHECKOUT_SCENE = Path(__file__).resolve().parents[4] / "assets" / "so101" / "scene.xml"
#: Units the frames file may give its joint positions in, and the factor to radians.
UNITS = {"rad": 1.0, "deg": math.pi / 180.0}


class InputError(ValueError):
    """The frames file, an image or an option is unusable; the message says which and why."""


@dataclass
class Frame:
    """One real image and the arm's joint positions (radians, by joint name) when it was taken."""

    image_path: Path
    joints: dict[str, float]


def read_frames(path: Path) -> list[Frame]:
    """Reads a frames file: {"unit": "rad" | "deg", "frames": [{"image": "f000.png",
    "joints": {"1": 0.0, ...}}, ...]}, image paths relative to the file, joints by the model's
    joint names (a joint left out stays at zero)."""
    try:
        document = json.loads(path.read_text())
    except OSError as error:
        raise InputError(f"cannot read the frames file {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise InputError(f"the frames file {path} is not JSON: {error}") from None
    if not isinstance(document, dict) or not isinstance(document.get("frames"), list):
        raise InputError(f'the frames file {path} needs a "frames" list')
    unit = document.get("unit", "rad")
    if unit not in UNITS:
        raise InputError(f'the frames file {path}: "unit" is {unit!r}, not one of {", ".join(UNITS)}')
    frames = []
    for number, entry in enumerate(document["frames"]):
        joints = entry.get("joints") if isinstance(entry, dict) else None
        image = entry.get("image") if isinstance(entry, dict) else None
        if not isinstance(image, str) or not isinstance(joints, dict):
            raise InputError(f'frame {number} of {path} needs "image" (a path) and "joints" (name: position)')
        if not all(isinstance(v, int | float) for v in joints.values()):
            raise InputError(f"frame {number} of {path}: every joint position must be a number")
        frames.append(Frame(path.parent / image, {name: float(v) * UNITS[unit] for name, v in joints.items()}))
    return frames


def load_image(path: Path) -> np.ndarray:
    """The image as OpenCV reads it (BGR), or an InputError naming the file."""
    if not path.is_file():
        raise InputError(f"the image {path} does not exist")
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise InputError(f"the image {path} is not an image OpenCV can read")
    return image


def solve(args: argparse.Namespace) -> None:
    """Finds the board in each frame, fits the camera, prints the result, writes the files."""
    spec = board_spec(args)
    frames = read_frames(args.frames)
    if not frames:
        raise InputError(f"the frames file {args.frames} lists no frames")
    if not 0 <= args.overlay_frame < len(frames):
        raise InputError(f"--overlay-frame {args.overlay_frame}: the frames file lists frames 0 to {len(frames) - 1}")
    holder = args.board_on or ("gripper" if args.mount == WORLD else WORLD)
    twin = Twin(args.model or default_model())
    images = [load_image(frame.image_path) for frame in frames]
    sizes = {image.shape[1::-1] for image in images}
    if len(sizes) > 1:
        raise InputError(f"the frames differ in size ({', '.join(f'{w}x{h}' for w, h in sorted(sizes))}); one camera's frames are needed")
    image_size = sizes.pop()
    views, used = [], []
    for frame, image in zip(frames, images, strict=True):
        found = detect(image, spec)
        if found is None:
            print(f"{frame.image_path.name}: board not found (or fewer than {MIN_CORNERS} corners), left out", file=sys.stderr)
            continue
        twin.pose(frame.joints)
        mount_from_holder = _inverse(twin.body_in_world(args.mount)) @ twin.body_in_world(holder)
        views.append(View(found[0], found[1], mount_from_holder))
        used.append((frame, image))
    result = fit(views, image_size, fit_distortion=not args.no_distortion)
    for (frame, _), error in zip(used, result.view_rms_px, strict=True):
        print(f"{frame.image_path.name}: {error:.3f} px RMS")
    print(f"reprojection error: {result.rms_px:.3f} px RMS over {sum(len(v.image_points) for v in views)} corners in {len(views)} frames")
    text = profile_toml(args.name, result, image_size, args.mount, len(views), not args.no_distortion)
    try:
        args.profile.write_text(text)
    except OSError as error:
        raise InputError(f"cannot write the camera profile {args.profile}: {error.strerror}") from None
    print(f"camera profile written to {args.profile}:\n{text}", end="")
    if args.board_file is not None:
        write_board_file(args.board_file, spec, result.holder_from_board, holder)
    if args.overlay is not None:
        write_overlay(args, twin, result, frames[args.overlay_frame], images[args.overlay_frame])


def write_overlay(args: argparse.Namespace, twin: Twin, result: CameraFit, frame: Frame, image: np.ndarray) -> None:
    """Writes the twin's arm outlined on one real frame, with the board corners found in it."""
    found = detect(image, board_spec(args))
    twin.pose(frame.joints)
    picture = overlay(twin, result, args.mount, image, None if found is None else found[1])
    if not _write_image(args.overlay, picture):
        raise InputError(f"cannot write the overlay image {args.overlay}")
    print(f"overlay of {frame.image_path.name} written to {args.overlay}")


def write_board_file(path: Path, spec: BoardSpec, holder_from_board: np.ndarray, holder: str) -> None:
    """Writes the fitted board as the daemon's `--board FILE` reads it, and its image beside it
    (PATH with .png): the daemon then draws the board where the frames show it, to check the
    fit against the twin's own render."""
    image_path = path.with_suffix(".png")
    if not _write_image(image_path, spec.image()):
        raise InputError(f"cannot write the board image {image_path}")
    # OpenCV's board frame: origin at the pattern's top-left corner, x right, y down the image,
    # z into the board; the daemon's: the face's centre, x right, y up, z out of the face.
    board_from_face = np.diag([1.0, -1.0, -1.0, 1.0])
    board_from_face[:2, 3] = (spec.squares_x * spec.square_m / 2, spec.squares_y * spec.square_m / 2)
    face = holder_from_board @ board_from_face
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, face[:3, :3].ravel())
    width, height = spec.printed_size_m()
    lines = [
        "# Written by python -m fakesim_hil.align_camera: the board where the fit puts it (fakesim-hil --board FILE).",
        f'image = "{image_path.name}"',
        f"size = [{width:.6f}, {height:.6f}]",
        f"pos = [{', '.join(f'{v:.6f}' for v in face[:3, 3])}]",
        f"quat = [{', '.join(f'{v:.7f}' for v in quat)}]",
        *([] if holder == WORLD else [f'mount = "{holder}"']),
    ]
    try:
        path.write_text("\n".join(lines) + "\n")
    except OSError as error:
        raise InputError(f"cannot write the board file {path}: {error.strerror}") from None
    print(f"board file written to {path} (its image {image_path.name})")


def write_board(args: argparse.Namespace) -> None:
    """Writes the board image and says how large to print it."""
    spec = board_spec(args)
    if not _write_image(args.image, spec.image(args.px_per_square)):
        raise InputError(f"cannot write the board image {args.image}")
    width, height = spec.printed_size_m()
    print(
        f"board written to {args.image}: print it at {width * 1000:.0f} x {height * 1000:.0f} mm "
        f"(squares {spec.square_m * 1000:g} mm; measure them after printing and pass --square-mm if they differ)"
    )


def board_spec(args: argparse.Namespace) -> BoardSpec:
    """The board the options describe."""
    across, _, down = args.squares.partition("x")
    if not (across.isdigit() and down.isdigit() and int(across) >= 3 and int(down) >= 3):
        raise InputError(f"--squares {args.squares!r}: give squares across and down, e.g. 6x5 (3 at least each)")
    if not 0 < args.marker_mm < args.square_mm:
        raise InputError("--marker-mm must be positive and smaller than --square-mm")
    return BoardSpec(int(across), int(down), args.square_mm / 1000, args.marker_mm / 1000, args.dictionary)


def default_model() -> Path:
    """The SO-101 scene of the source checkout this package runs from, if it runs from one."""
    if not CHECKOUT_SCENE.is_file():
        raise InputError("give the twin's model with --model (the scene XML the daemon loads, e.g. assets/so101/scene.xml of a checkout)")
    return CHECKOUT_SCENE


def _write_image(path: Path, image: np.ndarray) -> bool:
    """Writes an image in the format its suffix names; False if it cannot."""
    try:
        return bool(cv2.imwrite(str(path), image))
    except cv2.error:
        return False


def _inverse(pose: np.ndarray) -> np.ndarray:
    """The inverse of a 4x4 rigid pose."""
    inverse = pose.copy()
    inverse[:3, :3] = pose[:3, :3].T
    inverse[:3, 3] = -pose[:3, :3].T @ pose[:3, 3]
    return inverse


def parser() -> argparse.ArgumentParser:
    """The command line."""
    top = argparse.ArgumentParser(prog="python -m fakesim_hil.align_camera", description="Put the twin's camera where the real camera is.")
    commands = top.add_subparsers(dest="command", required=True)
    board_command = commands.add_parser("board", help="write the ChArUco board image to print")
    board_command.add_argument("image", type=Path, help="the PNG to write")
    board_command.add_argument("--px-per-square", type=int, default=200, help="resolution of the image (default 200)")
    solve_command = commands.add_parser("solve", help="fit the camera to frames of the board")
    solve_command.add_argument("frames", type=Path, help="the frames file (JSON: unit, frames of image and joints)")
    solve_command.add_argument("--name", required=True, help="the camera's name, as LeRobot's cameras name it (front, wrist, ...)")
    solve_command.add_argument("--profile", type=Path, required=True, help="the camera profile (TOML) to write")
    solve_command.add_argument("--overlay", type=Path, help="an image to write: the twin's arm outlined on a real frame")
    solve_command.add_argument("--overlay-frame", type=int, default=0, help="which frame of the file to draw the overlay on (default 0, the first; it need not show the board)")
    solve_command.add_argument("--model", type=Path, help="the twin's MJCF scene (default: assets/so101/scene.xml of the checkout)")
    solve_command.add_argument("--mount", default=WORLD, help="the body the camera rides on: world (default) or gripper for a wrist camera")
    solve_command.add_argument("--board-on", help="the body the board is fixed to (default: gripper for a world camera, else world)")
    solve_command.add_argument("--board-file", type=Path, help="a board file (TOML, its image beside it) to write: the fitted board for the daemon's --board, to check the fit against its render")
    solve_command.add_argument("--no-distortion", action="store_true", help="fit a pinhole camera without radial distortion")
    add_parser(commands)
    board = BoardSpec()
    for command in (board_command, solve_command):
        command.add_argument("--squares", default=f"{board.squares_x}x{board.squares_y}", help="squares across x down (default %(default)s)")
        command.add_argument("--square-mm", type=float, default=board.square_m * 1000, help="side of a square as printed, mm (default %(default)g)")
        command.add_argument("--marker-mm", type=float, default=board.marker_m * 1000, help="side of a marker as printed, mm (default %(default)g)")
        command.add_argument("--dictionary", default=board.dictionary, help="the ArUco dictionary (default %(default)s)")
    return top


def main(argv: list[str] | None = None) -> int:
    """Runs the command; bad input gives one line on stderr and status 2."""
    args = parser().parse_args(argv)
    run = {"board": write_board, "solve": solve, "capture": capture}[args.command]
    try:
        run(args)
    except (InputError, FitError, TwinError, CaptureError) as error:
        print(f"align-camera: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
