"""Camera alignment recovers a hidden camera: `python -m fakesim_hil.align_camera solve`, given frames
the daemon draws (started with `--camera hidden.toml`, a profile the command is not told, and
`--board board.toml`, the ChArUco board; the arm set to 16 poses through the client, pixel noise
added), writes a profile whose pose is within 5 mm and 0.5 degrees of the hidden camera's and
whose focal lengths are within 1 % of it: a front camera fixed in the world with the board
clamped in the gripper, and a wrist camera on the gripper with the board on the table. The
daemon's frames are checked against MuJoCo's own Python bindings told the same camera and board,
and the daemon given the fitted profile and board (`solve --board-file`) redraws the frames.
Bad input ends with one line on stderr and status 2, no traceback.

The board's image is made here with OpenCV's own ChArUco generator (not the command's), so a
board the command misdescribes (size, layout) misplaces the camera and fails the bounds. The
errors measured, and how they grow with fewer frames: python/bench/align_camera_accuracy.py
(docs/src/align-camera.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

# MuJoCo's Python renderer draws headless through EGL, as the daemon does.
os.environ.setdefault("MUJOCO_GL", "egl")

import cv2
import mujoco
import numpy as np
import pytest

from fakesim_hil import Client
from fakesim_hil.camera_fit import BoardSpec, CameraFit, detect
from fakesim_hil.daemon import LocalDaemon as Daemon
from fakesim_hil.twin_view import Twin, arm_mask

ROOT = Path(__file__).resolve().parents[2]
SCENE = ROOT / "assets" / "so101" / "scene.xml"
WIDTH, HEIGHT = 640, 480
#: The board: squares across and down, square and marker sides (m), as the command's defaults.
SQUARES, SQUARE_M, MARKER_M = (6, 5), 0.03, 0.022
#: Standard deviation of the Gaussian noise added to every pixel (8-bit levels).
NOISE = 3.0


def look_at(position: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The rotation (columns: camera x, y, z in the world) of a MuJoCo camera at `position`
    looking at `target` (it looks along its -z, +y up), level with the floor."""
    back = (position - target) / np.linalg.norm(position - target)
    right = np.cross([0.0, 0.0, 1.0], back)
    right /= np.linalg.norm(right)
    return np.column_stack([right, np.cross(back, right), back])


def from_axes(x: tuple[float, ...], y: tuple[float, ...]) -> np.ndarray:
    """The rotation whose x and y columns are the given axes (MJCF's `xyaxes`)."""
    right = np.array(x) / np.linalg.norm(x)
    up = np.array(y) - right * (right @ y)
    up /= np.linalg.norm(up)
    return np.column_stack([right, up, np.cross(right, up)])


@dataclass(frozen=True)
class Rig:
    """The hidden camera (on `mount`: its position, rotation in MuJoCo's camera axes, vertical
    field of view), where the board is fixed (body, position, orientation) and the arm poses
    (rad, joints 1..6) that show it, chosen once by sampling the joint ranges for poses that
    face the board to the camera."""

    mount: str
    camera_pos: tuple[float, float, float]
    camera_rotation: np.ndarray
    fovy_deg: float
    board_on: str
    board_pos: tuple[float, float, float]
    board_quat: tuple[float, float, float, float]
    poses: tuple[tuple[float, ...], ...]


#: A front camera fixed in the world, 0.7 m from the workspace; the board clamped beyond the
#: jaws in the gripper's y-z plane.
FRONT = Rig(
    mount="world",
    camera_pos=(0.6, -0.35, 1.1),
    camera_rotation=look_at(np.array([0.6, -0.35, 1.1]), np.array([0.2, 0.0, 0.9])),
    fovy_deg=50.0,
    board_on="gripper",
    board_pos=(0.0, 0.0, -0.15),
    board_quat=(np.sqrt(0.5), 0.0, np.sqrt(0.5), 0.0),
    poses=(
        (-0.76, -0.21, -0.09, 0.89, -0.70, 0.0),
        (-0.47, 1.09, 1.10, 1.14, -1.76, 0.0),
        (-0.71, -1.14, 0.64, 1.05, -1.05, 0.0),
        (-0.69, -0.50, 1.08, -0.32, -0.81, 0.0),
        (-1.13, -0.88, 0.59, 0.48, -1.21, 0.0),
        (-0.52, -1.13, 1.05, 0.59, -0.47, 0.0),
        (-1.12, -0.10, 0.13, 0.15, -1.80, 0.0),
        (0.19, -1.04, 0.99, 0.69, 0.13, 0.0),
        (0.18, -0.79, 0.62, 1.00, -0.01, 0.0),
        (-1.19, -1.01, 0.74, 0.50, -1.31, 0.0),
        (-1.09, -1.17, 0.64, 0.89, -1.40, 0.0),
        (-1.14, -0.02, 1.04, -0.81, -1.16, 0.0),
        (0.21, -0.82, 0.53, 0.95, -0.15, 0.0),
        (-1.02, -0.51, 0.41, 0.86, -1.22, 0.0),
        (-0.55, -0.85, 0.75, 0.60, -0.88, 0.0),
        (-0.14, -0.93, 1.07, -0.15, -1.08, 0.0),
    ),
)
#: A wrist camera on the gripper, looking along the jaws; the board flat on the table.
WRIST = Rig(
    mount="gripper",
    camera_pos=(0.0, -0.06, -0.02),
    camera_rotation=from_axes((0.0, -0.8829, -0.4695), (1.0, 0.0, 0.0)),
    fovy_deg=65.0,
    board_on="world",
    board_pos=(0.25, 0.0, 0.8012),
    board_quat=(1.0, 0.0, 0.0, 0.0),
    poses=(
        (-0.38, -1.10, 0.80, 1.22, 0.67, 0.0),
        (-0.10, -1.18, 0.47, 1.49, -0.45, 0.0),
        (-0.35, -1.04, 0.39, 1.49, -2.25, 0.0),
        (-0.15, -0.55, 0.37, 1.49, -1.33, 0.0),
        (0.36, -0.73, 0.30, 1.49, -2.13, 0.0),
        (0.15, -1.27, 0.77, 1.29, -1.60, 0.0),
        (0.28, -0.58, 0.27, 1.49, -1.78, 0.0),
        (-0.06, -1.57, 0.96, 1.24, -2.27, 0.0),
        (-0.15, -0.95, 0.56, 1.49, -0.08, 0.0),
        (-0.04, -0.96, 0.69, 1.05, -1.65, 0.0),
        (0.21, -1.30, 0.70, 1.49, -1.95, 0.0),
        (0.11, -1.55, 0.70, 1.46, -1.66, 0.0),
        (-0.36, -1.43, 0.73, 1.32, -1.87, 0.0),
        (-0.25, -0.97, 0.49, 1.46, 0.65, 0.0),
        (-0.10, -1.03, 0.41, 1.48, -1.94, 0.0),
        (-0.13, -0.67, 0.22, 1.23, -2.20, 0.0),
    ),
)


def board_image(path: Path) -> tuple[float, float]:
    """Writes the ChArUco board with a white border half a square wide (OpenCV's generator);
    returns its size in metres."""
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    board = cv2.aruco.CharucoBoard(SQUARES, SQUARE_M, MARKER_M, dictionary)
    pixels = 100
    pattern = board.generateImage((SQUARES[0] * pixels, SQUARES[1] * pixels), marginSize=0)
    cv2.imwrite(str(path), cv2.copyMakeBorder(pattern, *[pixels // 2] * 4, cv2.BORDER_CONSTANT, value=255))
    return (SQUARES[0] + 1) * SQUARE_M, (SQUARES[1] + 1) * SQUARE_M


def hidden_scene(directory: Path, rig: Rig) -> mujoco.MjModel:
    """The twin's scene as MuJoCo's own bindings load it, with the board (a textured box) and the
    hidden camera: an independent render to check the daemon's against."""
    width, height = board_image(directory / "board.png")
    spec = mujoco.MjSpec.from_file(str(SCENE))
    spec.add_texture(name="board", type=mujoco.mjtTexture.mjTEXTURE_2D, file=str(directory / "board.png"))
    material = spec.add_material(name="board")
    material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "board"
    holder = spec.worldbody if rig.board_on == "world" else spec.body(rig.board_on)
    rotation = np.zeros(9)
    mujoco.mju_quat2Mat(rotation, np.array(rig.board_quat))
    behind = np.array(rig.board_pos) - 0.001 * rotation.reshape(3, 3)[:, 2]  # the face at board_pos
    holder.add_geom(
        type=mujoco.mjtGeom.mjGEOM_BOX, size=[width / 2, height / 2, 0.001], pos=behind,
        quat=rig.board_quat, material="board", contype=0, conaffinity=0, mass=0.001,
    )
    mount = spec.worldbody if rig.mount == "world" else spec.body(rig.mount)
    mount.add_camera(name="hidden", pos=rig.camera_pos, quat=camera_quat(rig), fovy=rig.fovy_deg)
    return spec.compile()


def camera_quat(rig: Rig) -> list[float]:
    """The hidden camera's orientation as a quaternion (w, x, y, z)."""
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, rig.camera_rotation.ravel())
    return [float(v) for v in quat]


def toml_list(values: tuple[float, ...] | list[float]) -> str:
    """A TOML array of floats."""
    return "[" + ", ".join(repr(float(v)) for v in values) + "]"


def daemon_files(directory: Path, rig: Rig) -> list[str]:
    """Writes the hidden camera's profile and the board's file, as a user would give them to
    the daemon; returns the daemon's arguments naming them."""
    width, height = board_image(directory / "board.png")
    mount = "" if rig.mount == "world" else f'mount = "{rig.mount}"\n'
    (directory / "hidden.toml").write_text(
        f'name = "hidden"\nwidth = {WIDTH}\nheight = {HEIGHT}\nfovy-deg = {rig.fovy_deg}\n'
        f"pos = {toml_list(rig.camera_pos)}\nquat = {toml_list(camera_quat(rig))}\n{mount}"
    )
    holder = "" if rig.board_on == "world" else f'mount = "{rig.board_on}"\n'
    (directory / "board.toml").write_text(
        f'image = "board.png"\nsize = {toml_list([width, height])}\npos = {toml_list(rig.board_pos)}\n'
        f"quat = {toml_list(rig.board_quat)}\n{holder}"
    )
    return ["--camera", str(directory / "hidden.toml"), "--board", str(directory / "board.toml")]


@dataclass(frozen=True)
class Shot:
    """One frame the daemon drew of the hidden camera and the joint positions (rad) it drew it at."""

    image: np.ndarray
    joints: tuple[float, ...]


def daemon_shots(runs: Path, args: list[str], camera: str, poses: Sequence[Sequence[float]]) -> list[Shot]:
    """The frames a daemon started with `args` draws of `camera` at each pose: the pose set
    through the client, one tick stepped, the frame and the joint positions the daemon reports
    after it."""
    daemon = Daemon.start(runs, *args)
    try:
        with Client(daemon.address) as client:
            shots = []
            for pose in poses:
                client.set_joint_positions(dict(zip("123456", pose, strict=True)))
                tick = client.tick(list(pose), cameras=[camera])
                shots.append(Shot(tick.images[camera], tuple(float(v) for v in tick.observation[: len(pose)])))
            return shots
    finally:
        daemon.stop()


def hidden_shots(directory: Path, rig: Rig, count: int | None = None) -> list[Shot]:
    """The hidden camera's frames at the rig's first `count` poses (all by default), drawn by a
    daemon given the hidden profile and the board."""
    return daemon_shots(directory / "runs", daemon_files(directory, rig), "hidden", rig.poses[:count])


def write_frames(directory: Path, rig: Rig, count: int | None = None) -> Path:
    """Has the daemon draw the hidden camera at the rig's first `count` poses (all by default),
    adds noise, writes the PNGs and the frames file (the daemon's joint positions in degrees,
    by the model's joint names)."""
    noise = np.random.default_rng(7)
    entries = []
    for number, shot in enumerate(hidden_shots(directory, rig, count)):
        assert shot.image.shape == (HEIGHT, WIDTH, 3), "the frame is at the hidden profile's size"
        rgb = shot.image.astype(np.float64) + noise.normal(0.0, NOISE, (HEIGHT, WIDTH, 3))
        name = f"frame{number:02d}.png"
        cv2.imwrite(str(directory / name), np.clip(rgb, 0, 255).astype(np.uint8)[:, :, ::-1])
        joints = {str(joint + 1): float(np.degrees(value)) for joint, value in enumerate(shot.joints)}
        entries.append({"image": name, "joints": joints})
    frames = directory / "frames.json"
    frames.write_text(json.dumps({"unit": "deg", "frames": entries}, indent=1))
    return frames


def camera_errors(profile: dict[str, object], rig: Rig) -> tuple[float, float, float]:
    """How far a profile is from the rig's hidden camera: position (mm), rotation (degrees) and
    the larger relative focal length error."""
    position_mm = 1000 * np.linalg.norm(np.array(profile["pos"]) - np.array(rig.camera_pos))
    rotation = np.zeros(9)
    mujoco.mju_quat2Mat(rotation, np.array(profile["quat"], dtype=np.float64))
    relative = rig.camera_rotation.T @ rotation.reshape(3, 3)
    angle_deg = np.degrees(np.arccos(np.clip((np.trace(relative) - 1) / 2, -1.0, 1.0)))
    focal = (HEIGHT / 2) / np.tan(np.radians(rig.fovy_deg) / 2)
    return float(position_mm), float(angle_deg), max(abs(profile[key] / focal - 1) for key in ("fx", "fy"))


def align(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Runs the command as a user does (its module), capturing its output."""
    command = [sys.executable, "-m", "fakesim_hil.align_camera", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)


def charuco_corners(image: np.ndarray) -> dict[int, np.ndarray]:
    """The board's inner corners OpenCV finds in an RGB image, by corner id."""
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    detector = cv2.aruco.CharucoDetector(cv2.aruco.CharucoBoard(SQUARES, SQUARE_M, MARKER_M, dictionary))
    corners, ids, _, _ = detector.detectBoard(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY))
    if ids is None:
        return {}
    return {int(i): c for i, c in zip(ids.ravel(), corners.reshape(-1, 2), strict=True)}


@pytest.mark.parametrize("rig", [FRONT, WRIST], ids=["front", "wrist"])
def test_alignment_recovers_the_hidden_camera(tmp_path: Path, rig: Rig) -> None:
    frames = write_frames(tmp_path, rig)
    profile, picture = tmp_path / "camera.toml", tmp_path / "overlay.png"
    options = ["--mount", rig.mount, "--overlay", picture, "--model", SCENE, "--board-file", tmp_path / "board-fit.toml"]
    run = align("solve", frames, "--name", "cam", "--profile", profile, *options)
    assert run.returncode == 0, run.stderr
    assert "reprojection error:" in run.stdout
    found = tomllib.loads(profile.read_text())
    assert (found["name"], found["width"], found["height"]) == ("cam", WIDTH, HEIGHT)
    assert found.get("mount", "world") == rig.mount

    position_mm, angle_deg, focal = camera_errors(found, rig)
    assert position_mm <= 5.0, run.stdout
    assert angle_deg <= 0.5, run.stdout
    assert focal <= 0.01, run.stdout

    overlay = cv2.imread(str(picture))
    assert overlay is not None and overlay.shape == (HEIGHT, WIDTH, 3)

    # The daemon given the fitted profile and the fitted board draws the board's corners where
    # the frames show them (frames whose pose the arm holds: a pose pressing on the table moves
    # during the tick). Both sides are found by the same detector, so its bias cancels.
    document = json.loads(frames.read_text())
    joints = [[np.radians(entry["joints"][str(j)]) for j in range(1, 7)] for entry in document["frames"][:4]]
    fitted = ["--camera", str(profile), "--board", str(tmp_path / "board-fit.toml")]
    shots = daemon_shots(tmp_path / "check", fitted, "cam", joints)
    held = [(entry, shot) for entry, shot, pose in zip(document["frames"], shots, joints, strict=False) if np.abs(np.subtract(shot.joints, pose)).max() < 1e-3]
    assert len(held) >= 2
    for entry, shot in held:
        photo = charuco_corners(cv2.cvtColor(cv2.imread(str(tmp_path / entry["image"])), cv2.COLOR_BGR2RGB))
        drawn = charuco_corners(shot.image)
        shared = sorted(set(photo) & set(drawn))
        assert len(shared) >= 6, (entry["image"], len(photo), len(drawn))
        offsets = [float(np.linalg.norm(photo[i] - drawn[i])) for i in shared]
        assert np.median(offsets) < 0.5, (entry["image"], offsets)


@pytest.mark.parametrize("rig", [FRONT, WRIST], ids=["front", "wrist"])
def test_the_daemon_draws_the_hidden_camera_and_the_board_where_mujoco_does(tmp_path: Path, rig: Rig) -> None:
    """The frames the alignment is tested on come from the daemon: its hidden camera (a
    profile) and its board (a --board file) put the board's corners where MuJoCo's own bindings,
    told the same camera and board, draw them; the standard front camera sees them elsewhere."""
    shots = hidden_shots(tmp_path, rig, 3)
    model = hidden_scene(tmp_path, rig)
    data = mujoco.MjData(model)
    with mujoco.Renderer(model, HEIGHT, WIDTH) as renderer:
        for shot in shots:
            data.qpos[: len(shot.joints)] = shot.joints
            mujoco.mj_forward(model, data)
            renderer.update_scene(data, "hidden")
            theirs, ours = charuco_corners(renderer.render()), charuco_corners(shot.image)
            shared = sorted(set(theirs) & set(ours))
            assert len(shared) >= 6, (len(theirs), len(ours))
            offsets = [np.linalg.norm(theirs[i] - ours[i]) for i in shared]
            assert np.median(offsets) < 0.5, offsets
    (front,) = daemon_shots(tmp_path / "standard", ["--board", str(tmp_path / "board.toml")], "front", rig.poses[:1])
    elsewhere = charuco_corners(front.image)
    ours = charuco_corners(shots[0].image)
    assert not any(np.linalg.norm(elsewhere[i] - ours[i]) < 5.0 for i in set(elsewhere) & set(ours))


def test_bad_input_ends_with_a_clear_error(tmp_path: Path) -> None:
    frames = write_frames(tmp_path, FRONT, 4)
    document = json.loads(frames.read_text())
    (tmp_path / "broken.png").write_bytes(b"not a png")
    cv2.imwrite(str(tmp_path / "blank.png"), np.full((HEIGHT, WIDTH, 3), 200, np.uint8))

    def variant(name: str, entries: list[dict[str, object]]) -> Path:
        path = tmp_path / name
        path.write_text(json.dumps({"unit": "deg", "frames": entries}))
        return path

    first = document["frames"][0]
    cases = {
        variant("missing.json", [*document["frames"], {**first, "image": "gone.png"}]): "gone.png does not exist",
        variant("unreadable.json", [*document["frames"], {**first, "image": "broken.png"}]): "broken.png is not an image",
        variant("few.json", [*document["frames"][:2], {**first, "image": "blank.png"}]): "2 frames show the board",
        variant("empty.json", []): "lists no frames",
        variant("same.json", [first] * 4): "turn the wrist",
        variant("joint.json", [{**first, "joints": {"elbow": 1.0}}]): "no joint 'elbow'",
        tmp_path / "absent.json": "cannot read the frames file",
    }
    (tmp_path / "notjson.json").write_text("{frames")
    cases[tmp_path / "notjson.json"] = "is not JSON"
    for path, message in cases.items():
        run = align("solve", path, "--name", "front", "--profile", tmp_path / "out.toml", "--model", SCENE)
        assert run.returncode == 2, (path.name, run.stdout, run.stderr)
        assert message in run.stderr, (path.name, run.stderr)
        assert "Traceback" not in run.stderr, run.stderr
    assert not (tmp_path / "out.toml").exists()
    for option, message in (
        ("--profile", "cannot write the camera profile"),
        ("--overlay", "cannot write the overlay image"),
        ("--board-file", "cannot write the board image"),
    ):
        elsewhere = {"--profile": tmp_path / "out.toml", "--overlay": tmp_path / "overlay.png", option: tmp_path / "no-such-dir" / "x.png"}
        run = align("solve", frames, "--name", "front", "--model", SCENE, *[str(a) for pair in elsewhere.items() for a in pair])
        assert run.returncode == 2 and message in run.stderr, (option, run.stderr)
        assert "Traceback" not in run.stderr, run.stderr
    run = align("solve", frames, "--name", "front", "--profile", tmp_path / "out.toml", "--model", tmp_path / "no-model.xml")
    assert run.returncode == 2 and "cannot load the twin's model" in run.stderr and "Traceback" not in run.stderr, run.stderr


@pytest.mark.parametrize("squares", ["6", "2x2", "axb"])
def test_a_bad_board_option_is_refused(tmp_path: Path, squares: str) -> None:
    run = align("board", tmp_path / "board.png", "--squares", squares)
    assert run.returncode == 2 and "--squares" in run.stderr and "Traceback" not in run.stderr


def write_video(path: Path, frames: int = 40) -> None:
    """A short MJPG video to stand in for a camera (LeRobot's cameras take a path too), its
    frames a grey ramp."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30, (320, 240))
    for number in range(frames):
        writer.write(np.full((240, 320, 3), 5 * number, np.uint8))
    writer.release()


def test_capture_takes_each_frame_with_the_daemons_joints(tmp_path: Path, daemon_factory: Callable[..., Daemon]) -> None:
    own = daemon_factory()
    write_video(tmp_path / "camera.avi")
    poses = [dict(zip("123456", pose, strict=True)) for pose in ((0.3, -0.5, 0.2, 0.0, 0.1, 0.4), (-0.2, 0.0, 0.4, 0.7, 1.1, 0.0))]
    command = [sys.executable, "-m", "fakesim_hil.align_camera", "capture", str(tmp_path / "taken")]
    command += ["--camera", str(tmp_path / "camera.avi"), "--width", "320", "--address", own.address]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        assert process.stdin is not None and process.stdout is not None
        assert process.stdout.readline().startswith("Enter"), process.stderr.read() if process.stderr else ""
        with Client(own.address) as client:
            for pose in poses:
                client.set_joint_positions(pose)
                process.stdin.write("\n")
                process.stdin.flush()
                assert "taken" in process.stdout.readline()
        _, errors = process.communicate("q\n", timeout=60)
    assert process.returncode == 0, errors

    document = json.loads((tmp_path / "taken" / "frames.json").read_text())
    assert document["unit"] == "rad" and len(document["frames"]) == len(poses)
    for entry, pose in zip(document["frames"], poses, strict=True):
        assert entry["joints"] == pytest.approx(pose, abs=1e-6)
        image = cv2.imread(str(tmp_path / "taken" / entry["image"]))
        assert image is not None and image.shape == (240, 320, 3)

    wrong_size = align("capture", tmp_path / "other", "--camera", tmp_path / "camera.avi", "--width", "1280", "--address", own.address)
    assert wrong_size.returncode == 2 and "gives 320x240 frames, not 1280x240" in wrong_size.stderr, wrong_size.stderr
    missing = align("capture", tmp_path / "other", "--camera", tmp_path / "no-camera.avi", "--address", own.address)
    assert missing.returncode == 2 and "cannot open the camera" in missing.stderr, missing.stderr


def test_the_overlay_camera_draws_where_opencv_projects(tmp_path: Path) -> None:
    """The twin's render from a fitted camera (off-centre principal point, fx != fy) puts a
    small ball of the arm where OpenCV's projection of the same camera puts its centre."""
    model = tmp_path / "ball.xml"
    model.write_text(
        '<mujoco><worldbody><light pos="0 0 3"/><body name="arm"><joint name="1" type="hinge" axis="0 0 1"/>'
        '<geom type="sphere" size="0.004" pos="0.05 0.03 0.0"/></body></worldbody></mujoco>'
    )
    twin = Twin(model)
    twin.pose({"1": 0.0})
    matrix = np.array([[520.0, 0.0, 360.0], [0.0, 500.0, 215.0], [0.0, 0.0, 1.0]])
    camera_in_world = np.eye(4)
    camera_in_world[:3, :3] = np.diag([1.0, -1.0, -1.0])  # OpenCV axes, looking down from 0.5 m
    camera_in_world[:3, 3] = (0.0, 0.0, 0.5)
    fit = CameraFit(matrix, np.zeros(5), camera_in_world, np.eye(4), 0.0, [])
    ys, xs = np.nonzero(arm_mask(twin, fit, "world", (WIDTH, HEIGHT)))
    world_to_camera = np.linalg.inv(camera_in_world)
    rvec, _ = cv2.Rodrigues(world_to_camera[:3, :3])
    expected, _ = cv2.projectPoints(np.array([[0.05, 0.03, 0.0]]), rvec, world_to_camera[:3, 3], matrix, np.zeros(5))
    assert len(xs) > 20
    assert np.hypot(xs.mean() - expected[0, 0, 0], ys.mean() - expected[0, 0, 1]) < 0.5


def test_detected_corners_are_in_the_pixel_centre_convention() -> None:
    """The command's detection puts each corner where it lies with pixel centres at whole
    numbers (the profile's cx, cy convention), whatever OpenCV's ChArUco detector adds
    (half a pixel before OpenCV 4.14): a board image warped by a known perspective."""
    spec = BoardSpec()
    image = spec.image(100)
    warp = np.array([[0.62, 0.04, 60.3], [-0.03, 0.58, 41.7], [0.00012, 0.00006, 1.0]])
    seen = cv2.warpPerspective(image, warp, (WIDTH, HEIGHT), flags=cv2.INTER_LINEAR, borderValue=255)
    found = detect(seen, spec)
    assert found is not None
    board_points, pixels = found
    source = 50 + board_points[:, :2] / spec.square_m * 100 - 0.5  # a square's edge lies between two pixels
    expected = cv2.perspectiveTransform(source.reshape(-1, 1, 2), warp).reshape(-1, 2)
    assert np.abs((pixels - expected).mean(axis=0)).max() < 0.1, (pixels - expected).mean(axis=0)


def test_the_board_to_print_is_the_board_solve_looks_for(tmp_path: Path) -> None:
    run = align("board", tmp_path / "board.png")
    assert run.returncode == 0 and "210 x 180 mm" in run.stdout, run.stderr
    image = cv2.imread(str(tmp_path / "board.png"), cv2.IMREAD_GRAYSCALE)
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    detector = cv2.aruco.CharucoDetector(cv2.aruco.CharucoBoard(SQUARES, SQUARE_M, MARKER_M, dictionary))
    _, ids, _, _ = detector.detectBoard(image)
    assert ids is not None and sorted(ids.ravel()) == list(range((SQUARES[0] - 1) * (SQUARES[1] - 1)))
