"""The LeRobot plugin against the real lerobot package: discovery, features (the twin's cameras and
LeRobot's), lerobot-teleoperate with LeRobot's own so101_leader on a virtual servo bus, the lease."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from camera_server import SolidColourCamera
from lerobot.cameras.zmq import ZMQCameraConfig
from lerobot.robots.config import RobotConfig
from lerobot.robots.so_follower import SO101Follower, SO101FollowerConfig
from lerobot.robots.utils import make_robot_from_config
from lerobot.utils.import_utils import register_third_party_plugins
from lerobot_support import leader_reading, lerobot_cli, lerobot_home, virtual_leader  # noqa: F401

from fakesim_hil import Client, FakesimError


def test_lerobot_discovers_the_plugin_with_so101_follower_features(lerobot_home: Path) -> None:
    register_third_party_plugins()
    config_class = RobotConfig.get_choice_class("fakesim_hil")
    scratch = lerobot_home / "scratch"
    robot = make_robot_from_config(
        config_class(camera_names=["agentview"], image_width=64, image_height=48, calibration_dir=scratch)
    )
    assert type(robot).__name__ == "FakesimHil"
    follower = SO101Follower(SO101FollowerConfig(port="/dev/null", id="reference", calibration_dir=scratch))
    assert robot.action_features == follower.action_features
    motors = {key: kind for key, kind in robot.observation_features.items() if key.endswith(".pos")}
    assert motors == follower.observation_features
    assert robot.observation_features["agentview"] == (48, 64, 3)


def test_teleoperate_with_lerobots_so101_leader_drives_the_twin(daemon_factory, virtual_leader: str, lerobot_home: Path) -> None:
    daemon = daemon_factory()
    with Client(daemon.address) as twin:
        twin.reset("so101_tabletop", 0, 0)
        start = twin.robot_state("lerobot_degrees").ctrl_targets
        twin.stop()
        expected = leader_reading(virtual_leader, lerobot_home)
        assert max(abs(a - b) for a, b in zip(start, expected)) > 10, "the leader must differ from the home pose"
        lerobot_cli(
            "lerobot-teleoperate",
            "--robot.type=fakesim_hil",
            f"--robot.address={daemon.address}",
            "--robot.camera_names=[]",
            "--teleop.type=so101_leader",
            f"--teleop.port={virtual_leader}",
            "--teleop.id=virtual",
            "--teleop_time_s=1",
            "--fps=30",
        )
        targets = twin.robot_state("lerobot_degrees").ctrl_targets
    assert targets == pytest.approx(expected, abs=0.1)


def test_the_plugin_holds_the_control_lease_when_the_daemon_requires_it(daemon_factory, lerobot_home: Path) -> None:
    register_third_party_plugins()
    daemon = daemon_factory("--lease-in-sim")
    config_class = RobotConfig.get_choice_class("fakesim_hil")
    robot = make_robot_from_config(
        config_class(address=daemon.address, camera_names=[], calibration_dir=lerobot_home / "scratch")
    )
    robot.connect()
    with Client(daemon.address) as other:
        assert other.status().lease_holder == "lerobot fakesim_hil"
        observation = robot.get_observation()
        sent = robot.send_action({**observation, "elbow_flex.pos": observation["elbow_flex.pos"] + 5.0})
        assert other.robot_state("lerobot_degrees").ctrl_targets[2] == pytest.approx(sent["elbow_flex.pos"], abs=0.1)
        with pytest.raises(FakesimError) as refused:
            other.move(dx=0.01)
        assert refused.value.reason == "lease_held"
        robot.disconnect()
        assert not other.status().lease_holder, "released at disconnect"



def test_lerobot_cameras_are_read_beside_the_twins_renders(daemon_factory, lerobot_home: Path) -> None:
    register_third_party_plugins()
    daemon = daemon_factory()
    config_class = RobotConfig.get_choice_class("fakesim_hil")
    with SolidColourCamera("front", (200, 40, 90), 64, 48) as camera:
        front = ZMQCameraConfig(server_address="127.0.0.1", port=camera.port, camera_name="front", width=64, height=48, fps=30)
        robot = make_robot_from_config(
            config_class(
                address=daemon.address,
                camera_names=["agentview"],
                image_width=32,
                image_height=24,
                cameras={"front": front},
                calibration_dir=lerobot_home / "scratch",
            )
        )
        assert robot.observation_features["front"] == (48, 64, 3)
        assert robot.observation_features["agentview"] == (24, 32, 3)
        assert len(robot.cameras) == 2, "LeRobot's scripts size their image writers by this count"
        robot.connect()
        try:
            observation = robot.get_observation()
            robot.send_action(observation)
            observation = robot.get_observation()
        finally:
            robot.disconnect()
    assert observation["agentview"].shape == (24, 32, 3)
    np.testing.assert_allclose(observation["front"].reshape(-1, 3).mean(axis=0), camera.colour, atol=6)


def test_a_twin_camera_and_a_lerobot_camera_may_not_share_a_name() -> None:
    register_third_party_plugins()
    config_class = RobotConfig.get_choice_class("fakesim_hil")
    front = ZMQCameraConfig(server_address="127.0.0.1", port=5555, camera_name="x", width=64, height=48, fps=30)
    with pytest.raises(ValueError, match="agentview"):
        config_class(camera_names=["agentview"], cameras={"agentview": front})
