"""The backdrop's mask against MuJoCo's own segmentation rendering: a daemon draws each camera
with a photo behind the arm and the objects, and the pixels it keeps from its render are those
where MuJoCo's Python bindings, rendering the same scene in segmentation mode, see a geom of the
arm or of a task object (a body whose tree under the world has a joint or is a mocap body)."""

from __future__ import annotations

import os
from pathlib import Path

# MuJoCo's Python renderer draws headless through EGL, as the daemon does.
os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco
import numpy as np
from PIL import Image

from fakesim_hil import Client
from segmentation import bodies_seen

ROOT = Path(__file__).resolve().parents[2]
CAMERAS = ("agentview", "robot0_eye_in_hand")
WIDTH, HEIGHT = 160, 120
#: Poses (rad, joints 1..6) clear of the task objects.
POSES = ((0.0, -0.8, 0.4, 1.55, 0.0, 0.6), (0.5, -0.3, 0.2, 0.8, 1.0, 1.2))
#: The least IoU of the daemon's kept pixels and MuJoCo's segmentation of the foreground.
MIN_IOU = 0.99


def photos(directory: Path) -> list[Path]:
    """A 4:3 photo of noise and its negative: a pixel shown from either differs between them."""
    noise = np.random.default_rng(1).integers(0, 256, size=(HEIGHT, WIDTH, 3), dtype=np.uint8)
    paths = [directory / "noise.png", directory / "negative.png"]
    Image.fromarray(noise).save(paths[0])
    Image.fromarray(255 - noise).save(paths[1])
    return paths


def foreground_mask(model: mujoco.MjModel, qpos: np.ndarray, camera: str) -> np.ndarray:
    """The pixels where MuJoCo's segmentation rendering sees a geom of a moving tree."""
    moving_roots = {model.body_rootid[b] for b in range(model.nbody) if model.body_jntnum[b] > 0 or model.body_mocapid[b] >= 0}
    seen = bodies_seen(model, qpos, camera, HEIGHT, WIDTH)
    return (seen > 0) & np.isin(model.body_rootid[np.maximum(seen, 0)], sorted(moving_roots))


def test_the_render_shows_where_mujoco_segments_the_arm_and_objects(daemon_factory, tmp_path: Path) -> None:
    backdrops = [[arg for camera in CAMERAS for arg in ("--backdrop", f"{camera}={photo}")] for photo in photos(tmp_path)]
    daemons = [daemon_factory("--render-quality", "fast", *args) for args in backdrops]
    model = mujoco.MjModel.from_xml_path(str(ROOT / "assets" / "so101" / "tabletop.xml"))
    model.vis.quality.offsamples = 0  # hard edges, as the daemon's fast level draws
    for pose in POSES:
        frames, positions = [], []
        for daemon in daemons:
            with Client(daemon.address) as client:
                client.wait_ready()
                client.set_joint_positions(list(pose), hold=True)
                frames.append(client.tick(list(pose), cameras=list(CAMERAS), width=WIDTH, height=HEIGHT).images)
                positions.append(np.array(client.robot_state().positions))
        np.testing.assert_allclose(positions[0], positions[1], atol=1e-9)
        for camera in CAMERAS:
            kept = np.all(frames[0][camera] == frames[1][camera], axis=-1)
            theirs = foreground_mask(model, positions[0], camera)
            overlap = float((kept & theirs).sum() / max(1, (kept | theirs).sum()))
            print(f"{pose} {camera}: IoU {overlap:.4f} ({kept.sum()} vs {theirs.sum()} pixels)")
            assert theirs.sum() > 200, f"{camera}: the arm is in view"
            assert overlap >= MIN_IOU, f"{camera} at {pose}: the render is kept on IoU {overlap:.4f} of MuJoCo's foreground"
