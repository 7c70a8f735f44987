"""MuJoCo's own segmentation rendering, for tests that check what the daemon draws against an
independent render of the same model."""

from __future__ import annotations

import mujoco
import numpy as np


def bodies_seen(model: mujoco.MjModel, qpos: np.ndarray, camera: str, height: int, width: int) -> np.ndarray:
    """Per pixel of `camera` (height x width), the body of the visual geom it sees there with the
    model posed at `qpos`, or -1 where it sees none (collision geoms and sites are not drawn)."""
    data = mujoco.MjData(model)
    data.qpos[: len(qpos)] = qpos
    mujoco.mj_forward(model, data)
    option = mujoco.MjvOption()
    option.geomgroup[:] = [1, 1, 1, 0, 0, 0]  # visual groups only: no collision, no sites
    with mujoco.Renderer(model, height, width) as renderer:
        renderer.enable_segmentation_rendering()
        renderer.update_scene(data, camera=camera, scene_option=option)
        segments = renderer.render()
    ids, kinds = segments[..., 0], segments[..., 1]
    geoms = (kinds == mujoco.mjtObj.mjOBJ_GEOM) & (ids >= 0)
    bodies = np.full(ids.shape, -1)
    bodies[geoms] = model.geom_bodyid[ids[geoms]]
    return bodies
