"""The twin's cameras shaped like a real SO-101's: with the standard profiles `front` and `wrist`,
the plugin declares the features LeRobot's own SO101Follower declares with two 640x480 OpenCV
cameras of those names, lerobot-record writes a dataset with them, and an untrained ACT built
from that dataset's features runs a step on the twin's observation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from lerobot.cameras.opencv import OpenCVCameraConfig
from lerobot.datasets import LeRobotDataset
from lerobot.policies.act.configuration_act import ACTConfig
from lerobot.policies.act.modeling_act import ACTPolicy
from lerobot.policies.factory import make_pre_post_processors
from lerobot.robots.so_follower import SO101Follower, SO101FollowerConfig
from lerobot.utils.constants import ACTION, OBS_STR
from lerobot.utils.feature_utils import build_dataset_frame, dataset_to_policy_features, hw_to_dataset_features
from lerobot_robot_fakesim_hil import FakesimHil, FakesimHilConfig
from lerobot_support import lerobot_home, lerobot_record, virtual_leader  # noqa: F401

from lerobot.common.control_utils import predict_action
from lerobot.configs.types import FeatureType

CAMERAS = ["front", "wrist"]


def real_follower(scratch: Path, width: int = 640, height: int = 480) -> SO101Follower:
    """LeRobot's own SO-101 follower with OpenCV cameras named front and wrist, not connected."""
    camera = {"index_or_path": 0, "width": width, "height": height, "fps": 30}
    cameras = {name: OpenCVCameraConfig(**camera) for name in CAMERAS}
    return SO101Follower(SO101FollowerConfig(port="/dev/null", id="real", calibration_dir=scratch, cameras=cameras))


def test_the_twins_front_and_wrist_are_a_real_so101s_opencv_cameras(lerobot_home: Path, tmp_path: Path) -> None:
    scratch = lerobot_home / "scratch"
    twin = FakesimHil(FakesimHilConfig(address="127.0.0.1:1", camera_names=CAMERAS, calibration_dir=scratch))
    assert twin.observation_features == real_follower(scratch).observation_features
    assert twin.action_features == real_follower(scratch).action_features
    # A profile of the user's own size replaces the standard one, and its feature follows it.
    small = tmp_path / "wrist.toml"
    small.write_text('name = "wrist"\nwidth = 320\nheight = 240\nfovy-deg = 60.0\npos = [0.0, 0.0, 0.0]\nquat = [1.0, 0.0, 0.0, 0.0]\n')
    twin = FakesimHil(
        FakesimHilConfig(address="127.0.0.1:1", camera_names=CAMERAS, camera_profiles=[str(small)], calibration_dir=scratch)
    )
    assert twin.observation_features["wrist"] == (240, 320, 3)
    assert twin.observation_features["front"] == (480, 640, 3)


@pytest.fixture(scope="module")
def recorded(daemon_factory, virtual_leader: str, lerobot_home: Path) -> tuple[str, LeRobotDataset]:  # noqa: F811
    """One second of lerobot-record on the twin with the front and wrist cameras."""
    daemon = daemon_factory()
    root = lerobot_home / "datasets" / "cameras"
    lerobot_record(
        daemon.address, virtual_leader, root, "local/cameras", "--robot.camera_names=[front,wrist]", episodes=1, seconds=1
    )
    return daemon.address, LeRobotDataset("local/cameras", root=root, video_backend="pyav")


def test_a_recording_on_the_twin_has_a_real_so101_recordings_features(recorded, lerobot_home: Path) -> None:
    _, dataset = recorded
    real = real_follower(lerobot_home / "scratch")
    expected = {
        **hw_to_dataset_features(real.action_features, ACTION),
        **hw_to_dataset_features(real.observation_features, OBS_STR),
    }
    features = dataset.meta.features
    recorded_keys = {key for key in features if key == ACTION or key.startswith(f"{OBS_STR}.")}
    assert recorded_keys == set(expected)
    for key, feature in expected.items():
        got = features[key]
        assert (got["dtype"], tuple(got["shape"]), got["names"]) == (feature["dtype"], tuple(feature["shape"]), feature["names"]), key
    for camera in CAMERAS:
        info = features[f"{OBS_STR}.images.{camera}"]["info"]
        assert (info["video.width"], info["video.height"]) == (640, 480), "the encoded video is the profile's size"
    frame = dataset[0]
    assert tuple(frame[f"{OBS_STR}.images.front"].shape) == (3, 480, 640)


def test_an_untrained_act_from_the_recordings_features_runs_on_the_twin(recorded, lerobot_home: Path) -> None:
    address, dataset = recorded
    features = dataset_to_policy_features(dataset.meta.features)
    config = ACTConfig(
        input_features={key: f for key, f in features.items() if f.type is not FeatureType.ACTION},
        output_features={key: f for key, f in features.items() if f.type is FeatureType.ACTION},
        device="cpu",
        pretrained_backbone_weights=None,
        dim_model=32,
        dim_feedforward=64,
        n_heads=2,
        chunk_size=4,
        n_action_steps=4,
        use_vae=False,
    )
    policy = ACTPolicy(config)
    preprocessor, postprocessor = make_pre_post_processors(config, dataset_stats=dataset.meta.stats)
    robot = FakesimHil(
        FakesimHilConfig(address=address, camera_names=CAMERAS, task_index=-1, calibration_dir=lerobot_home / "scratch")
    )
    robot.connect()
    try:
        observation = robot.get_observation()
        assert observation["front"].shape == (480, 640, 3) and observation["front"].dtype == np.uint8
        frame = build_dataset_frame(dataset.meta.features, observation, prefix=OBS_STR)
        action = predict_action(
            frame, policy, torch.device("cpu"), preprocessor, postprocessor, use_amp=False, task="lift", robot_type=robot.name
        )
        action = action.reshape(-1)
        assert tuple(action.shape) == (6,) and torch.isfinite(action).all()
        sent = robot.send_action(dict(zip(robot.action_features, action.tolist())))
        assert set(sent) == set(robot.action_features)
    finally:
        robot.disconnect()
