"""Camera profiles (--camera FILE, [[camera]]): frames at the profile's size, intrinsics as the
pinhole model says, lens distortion as OpenCV's model says, errors naming the key."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from fakesim_hil.daemon import LocalDaemon as Daemon
from fakesim_hil import Client
from fakesim_hil.gym import FakesimEnv

#: The red cube of the tabletop (assets/tabletop/objects.xml): centre and half size, metres.
CUBE = np.array([0.22, 0.08, 0.815])
CUBE_HALF = 0.015
#: Height of the camera above the cube's top face, metres.
ABOVE = 0.25
#: Off-centre intrinsics with unequal focal lengths: a principal point taken from the wrong
#: corner, or fx and fy swapped, lands tens of pixels away.
WIDTH, HEIGHT, FX, FY, CX, CY = 480, 360, 700.0, 560.0, 190.0, 215.0


def profile(name: str, pos: list[float], distortion: list[float] | None = None) -> str:
    """A world camera looking straight down (MuJoCo's camera looks along its -z), image right
    along the world's +x and image up along +y."""
    text = (
        f'name = "{name}"\nwidth = {WIDTH}\nheight = {HEIGHT}\n'
        f"fx = {FX}\nfy = {FY}\ncx = {CX}\ncy = {CY}\n"
        f"pos = {pos}\nquat = [1.0, 0.0, 0.0, 0.0]\n"
    )
    return text + (f"distortion = {distortion}\n" if distortion else "")


def red(image: np.ndarray) -> np.ndarray:
    """Where the red cube is drawn."""
    r, g, b = (image[..., i].astype(int) for i in range(3))
    return r - np.maximum(g, b) > 90


def frames(daemon: Daemon, cameras: list[str]) -> dict[str, np.ndarray]:
    """One tick's frames of the named cameras, asked for at 32x32 (profiles ignore it)."""
    with Client(daemon.address) as client:
        return client.tick([0.0] * 6, images=True, cameras=cameras, width=32, height=32).images


@pytest.fixture(scope="module")
def profiled(tmp_path_factory: pytest.TempPathFactory, daemon_factory: Callable[..., Daemon]) -> Daemon:
    """A daemon with three profile cameras above the red cube: centred over it, off to one side,
    and the same off to one side through a lens with barrel distortion (one from a file, two
    from the config file's [[camera]] tables)."""
    top = [float(v) for v in CUBE + [0.0, 0.0, CUBE_HALF + ABOVE]]
    aside = [float(v) for v in CUBE + [-0.06, 0.04, CUBE_HALF + ABOVE]]
    folder = tmp_path_factory.mktemp("profiles")
    (folder / "top.toml").write_text(profile("top", top))
    tables = "".join(
        f"[[camera]]\n{text}\n"
        for text in (profile("aside", aside), profile("bent", aside, [-0.35, 0.12, 0.002, -0.001, 0.0]))
    )
    (folder / "config.toml").write_text(tables)
    return daemon_factory("--config", str(folder / "config.toml"), "--camera", str(folder / "top.toml"))


def test_a_profile_camera_draws_at_its_size_with_its_intrinsics(profiled: Daemon) -> None:
    images = frames(profiled, ["top", "aside", "agentview"])
    assert images["top"].shape == (HEIGHT, WIDTH, 3) and images["top"].dtype == np.uint8
    assert images["agentview"].shape == (32, 32, 3), "a scene camera keeps the request's size"
    # Straight above the cube its top face hides the sides: a fx*2h/d by fy*2h/d rectangle
    # centred on the principal point (pixel centres at whole numbers, as OpenCV's).
    rows, cols = np.nonzero(red(images["top"]))
    assert abs(cols.mean() - CX) < 0.25 and abs(rows.mean() - CY) < 0.25, (cols.mean(), rows.mean())
    side = 2 * CUBE_HALF / ABOVE
    assert abs(cols.max() - cols.min() + 1 - FX * side) < 2.0, cols.max() - cols.min() + 1
    assert abs(rows.max() - rows.min() + 1 - FY * side) < 2.0, rows.max() - rows.min() + 1
    # Off to one side, the top face's centre projects where the pinhole model says.
    with Client(profiled.address) as client:
        sizes = {size.camera: (size.width, size.height) for size in client.model_info().camera_sizes}
    assert sizes["aside"] == (WIDTH, HEIGHT) and "agentview" not in sizes
    offset = np.array([0.06, -0.04])  # the cube relative to the camera, world x and y
    expected = (CX + FX * offset[0] / ABOVE, CY - FY * offset[1] / ABOVE)
    mask = red(images["aside"])
    rows, cols = np.nonzero(mask)
    # The top face's centroid, its sides seen beside it removed: the rows and columns where the
    # top face alone lies are the ones of the straight-above view's extent, moved.
    assert abs(np.median(cols) - expected[0]) < 4.0 and abs(np.median(rows) - expected[1]) < 4.0, (
        np.median(cols),
        np.median(rows),
        expected,
    )


def test_distortion_bends_the_frame_as_opencvs_lens_model(profiled: Daemon) -> None:
    images = frames(profiled, ["aside", "bent"])
    pinhole, bent = images["aside"].astype(np.float32), images["bent"]
    k = np.array([-0.35, 0.12, 0.002, -0.001, 0.0])
    camera = np.array([[FX, 0, CX], [0, FY, CY], [0, 0, 1]])
    # OpenCV's own undistortion gives, for each pixel of the bent frame, the pinhole pixel it shows.
    grid = np.stack(np.meshgrid(np.arange(WIDTH), np.arange(HEIGHT)), -1).reshape(-1, 1, 2).astype(np.float64)
    source = cv2.undistortPoints(grid, camera, k, P=camera).reshape(HEIGHT, WIDTH, 2).astype(np.float32)
    expected = cv2.remap(pinhole, source[..., 0], source[..., 1], cv2.INTER_LINEAR, borderValue=0)
    inside = (source[..., 0] >= 1) & (source[..., 1] >= 1) & (source[..., 0] < WIDTH - 2) & (source[..., 1] < HEIGHT - 2)
    difference = np.abs(expected - bent.astype(np.float32))[inside]
    assert difference.mean() < 1.0, difference.mean()
    assert np.abs(pinhole - bent.astype(np.float32))[inside].mean() > 5 * max(difference.mean(), 0.5), "the lens bends"
    assert np.count_nonzero(red(bent)) != np.count_nonzero(red(images["aside"]))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('name = "x"\nwidth = 0\nheight = 4\nfovy-deg = 40.0\npos = [0.0, 0.0, 1.0]\nquat = [1.0, 0.0, 0.0, 0.0]\n', "`width`"),
        ('name = "x"\nwidth = 4\nheight = 4\nfovy = 40.0\npos = [0.0, 0.0, 1.0]\nquat = [1.0, 0.0, 0.0, 0.0]\n', "`fovy`"),
        (
            'name = "x"\nwidth = 4\nheight = 4\nfovy-deg = 40.0\nmount = "hand"\npos = [0.0, 0.0, 1.0]\nquat = [1.0, 0.0, 0.0, 0.0]\n',
            '`mount` "hand" is not a body',
        ),
        ('name = "agentview"\nwidth = 4\nheight = 4\nfovy-deg = 40.0\npos = [0.0, 0.0, 1.0]\nquat = [1.0, 0.0, 0.0, 0.0]\n', "already"),
        ("name = [", "camera profile"),
    ],
)
def test_a_bad_profile_stops_the_daemon_naming_the_key(fakesim_bin: str, tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    ended = subprocess.run(
        [fakesim_bin, "--listen", "127.0.0.1:0", "--runs-dir", str(tmp_path / "runs"), "--camera", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ended.returncode != 0
    assert expected in ended.stderr and "panicked" not in ended.stderr, ended.stderr


def test_the_gym_envs_space_gives_a_profile_camera_its_own_size(daemon: Daemon) -> None:
    env = FakesimEnv(0, address=daemon.address, image_size=(32, 24), cameras=["front", "agentview"], episode_ticks=2)
    try:
        assert env.observation_space["pixels"]["front"].shape == (480, 640, 3)
        assert env.observation_space["pixels"]["agentview"].shape == (24, 32, 3)
        obs, _ = env.reset(seed=0)
        assert env.observation_space["pixels"].contains(obs["pixels"])
    finally:
        env.close()


@pytest.mark.parametrize("arm", ["so101", "so100"])
def test_both_arms_have_the_standard_front_and_wrist(daemon_factory: Callable[..., Daemon], arm: str) -> None:
    daemon = daemon_factory("--arm", arm)
    with Client(daemon.address) as client:
        sizes = {size.camera: (size.width, size.height) for size in client.model_info().camera_sizes}
    assert sizes == {"front": (640, 480), "wrist": (640, 480)}
    images = frames(daemon, ["front", "wrist"])
    for camera, image in images.items():
        assert image.shape == (480, 640, 3), camera
        # The arm's printed parts (yellow, #ffd11f) are in view of both cameras.
        r, g, b = (image[..., i].astype(int) for i in range(3))
        yellow = (r > 150) & (g > 110) & (b < 80) & (r - b > 100)
        assert yellow.mean() > 0.01, f"{arm} {camera}: {yellow.mean():.4f} of the frame is the arm"
