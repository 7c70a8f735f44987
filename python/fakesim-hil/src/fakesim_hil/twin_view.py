"""The twin's model seen from a fitted camera: forward kinematics of the holder and mount bodies,
the arm's silhouette drawn by MuJoCo from that camera, the overlay on a real frame, and the
camera profile (the TOML the daemon's `--camera` reads)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

# The command runs headless as the daemon does (EGL), unless the user chose another backend.
os.environ.setdefault("MUJOCO_GL", "egl")

import cv2
import mujoco
import numpy as np

from .camera_fit import CameraFit

#: OpenCV's camera frame (x right, y down, looking along +z) to MuJoCo's (x right, y up, looking
#: along -z): a rotation by pi about x.
OPENCV_TO_MUJOCO = np.diag([1.0, -1.0, -1.0])
#: The frame that means "fixed in the world" for --mount and --board-on.
WORLD = "world"


class TwinError(ValueError):
    """The model cannot be loaded, or a body or joint the frames name is not in it."""


class Twin:
    """The twin's model (an MJCF file) posed by joint positions."""

    def __init__(self, model_path: Path) -> None:
        try:
            self.spec = mujoco.MjSpec.from_file(str(model_path))
            self.model = self.spec.compile()
        except (ValueError, OSError) as error:
            raise TwinError(f"cannot load the twin's model {model_path}: {error}") from None
        self.data = mujoco.MjData(self.model)

    def pose(self, joints: Mapping[str, float]) -> None:
        """Sets the joints (radians, by the model's joint names) and runs the kinematics."""
        for name, value in joints.items():
            try:
                address = self.model.jnt_qposadr[self.model.joint(name).id]
            except KeyError:
                names = [self.model.joint(i).name for i in range(self.model.njnt)]
                raise TwinError(f"the model has no joint {name!r} (its joints: {', '.join(names)})") from None
            self.data.qpos[address] = value
        mujoco.mj_kinematics(self.model, self.data)

    def body_in_world(self, body: str) -> np.ndarray:
        """The body's 4x4 pose in the world at the current joints (identity for "world")."""
        pose = np.eye(4)
        if body == WORLD:
            return pose
        try:
            index = self.model.body(body).id
        except KeyError:
            raise TwinError(f"the model has no body {body!r}") from None
        pose[:3, :3] = self.data.xmat[index].reshape(3, 3)
        pose[:3, 3] = self.data.xpos[index]
        return pose


def mujoco_pose(fit: CameraFit) -> tuple[np.ndarray, np.ndarray]:
    """The camera's position and quaternion (w, x, y, z) in its mount, MuJoCo's camera axes."""
    rotation = fit.mount_from_camera[:3, :3] @ OPENCV_TO_MUJOCO
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, rotation.ravel())
    return fit.mount_from_camera[:3, 3].copy(), quat if quat[0] >= 0 else -quat


def profile_toml(name: str, fit: CameraFit, image_size: tuple[int, int], mount: str, frames: int, fit_distortion: bool) -> str:
    """The camera profile as TOML (the camera-profile contract's keys and conventions)."""
    pos, quat = mujoco_pose(fit)
    k = fit.camera_matrix
    lines = [
        f"# Written by python -m fakesim_hil.align_camera from {frames} frames: reprojection error {fit.rms_px:.3f} px RMS.",
        "# fx, fy, cx, cy in pixels, OpenCV's convention (pixel centres at whole numbers);",
        "# pos in metres and quat (w, x, y, z) in MuJoCo's camera axes, in the world or in `mount`.",
        f"name = {_string(name)}",
        f"width = {image_size[0]}",
        f"height = {image_size[1]}",
        f"fx = {k[0, 0]:.4f}",
        f"fy = {k[1, 1]:.4f}",
        f"cx = {k[0, 2]:.4f}",
        f"cy = {k[1, 2]:.4f}",
        f"pos = [{', '.join(f'{v:.6f}' for v in pos)}]",
        f"quat = [{', '.join(f'{v:.7f}' for v in quat)}]",
    ]
    if mount != WORLD:
        lines.append(f"mount = {_string(mount)}")
    if fit_distortion:
        lines.append(f"distortion = [{', '.join(f'{v:.6f}' for v in fit.distortion.ravel()[:5])}]")
    return "\n".join(lines) + "\n"


def _string(text: str) -> str:
    """A TOML basic string (the profile is a handful of flat keys, written here rather than with
    a TOML writer so that its comments say where the numbers came from)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def overlay(twin: Twin, fit: CameraFit, mount: str, image: np.ndarray, board_points: np.ndarray | None = None) -> np.ndarray:
    """The real frame (undistorted by the fitted distortion) with the twin's arm outlined as
    MuJoCo draws it from the fitted camera at the twin's current joints, and the board corners
    the fit predicts (red) beside those detected (green, `board_points` in pixels)."""
    height, width = image.shape[:2]
    mask = arm_mask(twin, fit, mount, (width, height))
    picture = cv2.undistort(image, fit.camera_matrix, fit.distortion)
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    cv2.drawContours(picture, contours, -1, (0, 255, 0), 2)
    if board_points is not None:
        undistorted = cv2.undistortPoints(board_points.reshape(-1, 1, 2), fit.camera_matrix, fit.distortion, P=fit.camera_matrix)
        for x, y in undistorted.reshape(-1, 2):
            cv2.drawMarker(picture, (round(x), round(y)), (0, 255, 0), cv2.MARKER_CROSS, 8, 1)
    return picture


def arm_mask(twin: Twin, fit: CameraFit, mount: str, image_size: tuple[int, int]) -> np.ndarray:
    """Pixels (height x width booleans) where MuJoCo draws the arm from the fitted camera
    (pinhole, no distortion), by segmentation rendering."""
    width, height = image_size
    spec = twin.spec.copy()
    spec.visual.global_.offwidth = max(spec.visual.global_.offwidth, width)
    spec.visual.global_.offheight = max(spec.visual.global_.offheight, height)
    pos, quat = mujoco_pose(fit)
    body = spec.worldbody if mount == WORLD else spec.body(mount)
    camera = body.add_camera(name="align_camera_fitted", pos=pos, quat=quat)
    k = fit.camera_matrix
    camera.resolution = [width, height]
    camera.sensor_size = [width * 1e-5, height * 1e-5]
    camera.focal_pixel = [k[0, 0], k[1, 1]]
    # MuJoCo's principal offset, measured from the image centre, runs against OpenCV's pixel axes.
    camera.principal_pixel = [(width - 1) / 2 - k[0, 2], (height - 1) / 2 - k[1, 2]]
    model = spec.compile()
    data = mujoco.MjData(model)
    data.qpos[:] = twin.data.qpos
    mujoco.mj_forward(model, data)
    with mujoco.Renderer(model, height, width) as renderer:
        renderer.enable_segmentation_rendering()
        renderer.update_scene(data, "align_camera_fitted")
        segments = renderer.render()
    geom = segments[:, :, 0]
    is_geom = segments[:, :, 1] == int(mujoco.mjtObj.mjOBJ_GEOM)
    arm_root = model.body_rootid[model.body(mount if mount != WORLD else _arm_body(model)).id]
    arm_geoms = np.flatnonzero(model.body_rootid[model.geom_bodyid] == arm_root)
    return is_geom & np.isin(geom, arm_geoms)


def _arm_body(model: mujoco.MjModel) -> int:
    """The first body that a joint moves (the arm's root's descendant), for a world camera."""
    return int(model.jnt_bodyid[0])
