"""Seeded looks reached from lerobot-eval: the env plugin made by LeRobot's own ``make_env``, its
daemons reading a config file with a backdrop and variation ranges. The same seed draws the same
frames on two daemons, another seed others, and each episode's summary.json records the look
drawn, within the configured ranges."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from lerobot.envs.factory import make_env
from lerobot_env_fakesim_hil import FakesimHilEnvConfig
from PIL import Image

from fakesim_hil import Client, FakesimError
from fakesim_hil.daemon import LocalDaemon

CAMERAS = ["agentview", "robot0_eye_in_hand"]
WIDTH, HEIGHT = 64, 48
EPISODE_LENGTH = 2
RANGES = {
    "light-tilt-deg": 20.0,
    "light-intensity": [0.7, 1.3],
    "part-color": 25,
    "object-color": 35,
    "camera-shift-mm": 4.0,
    "camera-turn-deg": 1.5,
    "backdrop-brightness": [0.8, 1.2],
}


def config_file(directory: Path) -> Path:
    """A daemon config: a noise photo behind agentview (of the frames' 4:3 shape) and every range."""
    photo = directory / "room.png"
    noise = np.random.default_rng(0).integers(0, 256, size=(HEIGHT * 2, WIDTH * 2, 3), dtype=np.uint8)
    Image.fromarray(noise).save(photo)
    lines = ["[backdrop]", f'agentview = "{photo}"', "", "[variations]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in RANGES.items()]
    path = directory / "looks.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def episodes(vector, seeds: list[int]) -> list[dict[str, np.ndarray]]:
    """Runs one short episode per slot from ``seeds`` on layout 0, holding the arm still; returns
    each slot's first frames."""
    observation, _ = vector.reset(seed=seeds, options={"init_state_index": 0})
    first = [{camera: observation["pixels"][camera][slot].copy() for camera in CAMERAS} for slot in range(len(seeds))]
    for _ in range(EPISODE_LENGTH):
        observation, _, _, truncated, _ = vector.step(observation["agent_pos"])
    assert truncated.all(), "the episodes ended, so their summaries are written"
    return first


def summaries(runs: Path) -> list[dict]:
    """Every summary.json under a slot's runs directory, oldest run first."""
    found = sorted(runs.glob("*/summary.json"), key=lambda p: p.stat().st_mtime_ns)
    return [json.loads(path.read_text()) for path in found]


def assert_within_ranges(look: dict) -> None:
    assert len(look["lights"]) == 2 and len(look["cameras"]) >= 2
    for light in look["lights"]:
        assert 0 <= light["tilt_deg"] <= RANGES["light-tilt-deg"]
        assert math.isclose(math.hypot(*light["dir"]), 1.0, rel_tol=1e-9)
        low, high = RANGES["light-intensity"]
        assert low <= light["intensity"] <= high
    materials = {color["material"]: color for color in look["colors"]}
    assert {"printed", "servo", "cube_red", "cube_blue", "bowl"} <= set(materials)
    for name, color in materials.items():
        reach = RANGES["part-color"] if name in ("printed", "servo") else RANGES["object-color"]
        assert all(abs(step) <= reach for step in color["shift"]), color
        assert len(color["color"]) == 7 and color["color"].startswith("#")
    for camera in look["cameras"]:
        assert all(abs(mm) <= RANGES["camera-shift-mm"] for mm in camera["shift_mm"]), camera
        assert all(abs(deg) <= RANGES["camera-turn-deg"] for deg in camera["turn_deg"]), camera
    low, high = RANGES["backdrop-brightness"]
    assert low <= look["backdrop_brightness"] <= high


def test_lerobot_make_env_draws_each_episodes_look_from_its_seed(fakesim_bin: str, tmp_path: Path) -> None:
    config = FakesimHilEnvConfig(
        cameras=CAMERAS,
        observation_width=WIDTH,
        observation_height=HEIGHT,
        episode_length=EPISODE_LENGTH,
        daemon_bin=fakesim_bin,
        daemon_config=str(config_file(tmp_path)),
        runs_dir=str(tmp_path / "runs"),
    )
    vector = make_env(config, n_envs=2)[config.type][0]
    try:
        same = episodes(vector, [11, 11])
        other = episodes(vector, [11, 12])
    finally:
        vector.close()

    for camera in CAMERAS:
        assert np.array_equal(same[0][camera], same[1][camera]), f"{camera}: seed 11 drew different frames on two daemons"
        assert np.array_equal(same[0][camera], other[0][camera]), f"{camera}: seed 11 drew another frame the second time"
        assert not np.array_equal(other[0][camera], other[1][camera]), f"{camera}: seeds 11 and 12 drew the same frame"

    looks = [[summary["variation"] for summary in summaries(tmp_path / "runs" / f"env-{slot}")] for slot in range(2)]
    assert [len(slot) for slot in looks] == [2, 2]
    assert looks[0][0] == looks[1][0] == looks[0][1], "seed 11's look, recorded alike each time"
    assert looks[1][1] != looks[0][1] and looks[1][1]["seed"] != looks[0][1]["seed"]
    for slot in looks:
        for look in slot:
            assert_within_ranges(look)


def test_a_users_backdrop_file_is_refused_with_its_reason_never_a_crash(fakesim_bin: str, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.png"
    garbage.write_bytes(b"\x89PNG\r\n\x1a\n not really")
    with pytest.raises(RuntimeError, match="garbage.png") as started:
        LocalDaemon.start(tmp_path / "bad", "--backdrop", f"agentview={garbage}", binary=fakesim_bin)
    assert "panicked" not in str(started.value)
    # A 4:3 photo behind agentview: a square frame is refused (image_size, both sizes named);
    # a 4:3 frame is drawn, and the daemon keeps serving.
    photo = tmp_path / "room.png"
    Image.fromarray(np.zeros((30, 40, 3), dtype=np.uint8)).save(photo)
    daemon = LocalDaemon.start(tmp_path / "runs", "--backdrop", f"agentview={photo}", binary=fakesim_bin)
    try:
        with Client(daemon.address) as client:
            client.reset(cameras=())
            with pytest.raises(FakesimError) as refused:
                client.observe()
            assert refused.value.reason == "image_size"
            assert "40x30" in refused.value.message and "256x256" in refused.value.message
            targets = list(client.robot_state().ctrl_targets)
            frame = client.tick(targets, cameras=["agentview"], width=64, height=48).images["agentview"]
            assert frame.shape == (48, 64, 3)
    finally:
        daemon.stop()
