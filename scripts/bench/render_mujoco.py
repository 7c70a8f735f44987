"""MuJoCo's own Python Renderer on the twin's tabletop scene, at the twin's render qualities.

Prints one line per quality and camera: `python <quality> <camera> <ms per frame>`, the median
of several timed batches. Called by the twin's `render` bench (scripts/bench/side-by-side),
which measures its own renderer between these calls so that the two are compared in one run.

Usage: render_mujoco.py SCENE_XML SIZE FRAMES QUALITY...
"""

import os
import statistics
import sys
import time

os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco  # noqa: E402  (MUJOCO_GL must be set first)

CAMERAS = ("agentview", "robot0_eye_in_hand")
BATCHES = 3


def load(scene: str, quality: str) -> mujoco.MjModel:
    """The scene as written (`full`), or with the effects the `fast` level switches off."""
    model = mujoco.MjModel.from_xml_path(scene)
    if quality == "fast":
        model.vis.quality.offsamples = 0
        model.light_castshadow[:] = 0
        model.mat_reflectance[:] = 0.0
    elif quality != "full":
        raise SystemExit(f"unknown quality {quality!r}")
    return model


def main() -> None:
    scene, size, frames, *qualities = sys.argv[1:]
    size, frames = int(size), int(frames)
    assert mujoco.__version__ == "3.17.0", mujoco.__version__
    for quality in qualities:
        model = load(scene, quality)
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        with mujoco.Renderer(model, size, size) as renderer:
            for camera in CAMERAS:
                renderer.update_scene(data, camera=camera)
                first = renderer.render()
                assert first.shape == (size, size, 3), first.shape
                batches = []
                for _ in range(BATCHES):
                    start = time.perf_counter()
                    for _ in range(frames):
                        renderer.update_scene(data, camera=camera)
                        pixels = renderer.render()
                    batches.append((time.perf_counter() - start) * 1e3 / frames)
                assert pixels.shape == (size, size, 3) and pixels.any()
                print(f"python {quality} {camera} {statistics.median(batches):.3f}", flush=True)


if __name__ == "__main__":
    main()
