"""LeRobot's own SO-100 and SO-101 followers (``lerobot.robots.so_follower``) on the emulator of
their arm (``fakesim-hil emulate --arm``): each finds the calibration ``emulate`` wrote where
LeRobot keeps a follower's files, connects without recalibrating, and reaches the degrees it is
sent; a daemon run with ``--arm so100`` is an SO-100's, and the fakesim_hil robot plugin on it
has SO100Follower's features and sends its degrees."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakesim_hil import Client
from lerobot.robots.config import RobotConfig
from lerobot.robots.so_follower import SO100Follower, SO100FollowerConfig, SO101Follower, SO101FollowerConfig
from lerobot.robots.utils import make_robot_from_config
from lerobot.utils.import_utils import register_third_party_plugins

#: Goals in LeRobot's units (degrees, the gripper 0..100), inside both arms' calibrated ranges.
GOALS = {
    "shoulder_pan.pos": 15.0,
    "shoulder_lift.pos": -20.0,
    "elbow_flex.pos": 25.0,
    "wrist_flex.pos": -30.0,
    "wrist_roll.pos": 40.0,
    "gripper.pos": 35.0,
}
#: How far a reading may be from its goal: LeRobot truncates a goal to whole steps (0.09°).
TOLERANCE = 0.5
#: Readings to wait for the servos to get there (each a sync read; the wait is not timed).
READINGS = 5000


@pytest.mark.parametrize(
    ("arm", "follower", "config"),
    [("so100", SO100Follower, SO100FollowerConfig), ("so101", SO101Follower, SO101FollowerConfig)],
)
def test_lerobot_s_follower_reaches_commanded_degrees_on_the_emulator_of_its_arm(
    emulate, tmp_path: Path, arm: str, follower: type, config: type
) -> None:
    calibration_dir = tmp_path / "calibration" / "robots" / follower.name
    bus = emulate("--arm", arm, calibration=calibration_dir / f"virtual_{arm}.json")
    robot = follower(config(port=bus.device, id=f"virtual_{arm}", calibration_dir=calibration_dir))
    assert robot.calibration_fpath == bus.calibration_path
    assert {name: vars(motor) for name, motor in robot.calibration.items()} == bus.calibration
    robot.connect(calibrate=False)
    try:
        # The servos hold what the file says: LeRobot would otherwise ask to recalibrate.
        assert robot.is_calibrated
        sent = robot.send_action(GOALS)
        assert sent == GOALS
        for _ in range(READINGS):
            observation = robot.get_observation()
            if all(abs(observation[key] - goal) <= TOLERANCE for key, goal in GOALS.items()):
                break
        off = {key: observation[key] for key, goal in GOALS.items() if abs(observation[key] - goal) > TOLERANCE}
        assert not off, f"{arm}: {off} after {READINGS} readings (goals {GOALS})"
    finally:
        robot.disconnect()


def span(calibration: dict, motor: str) -> int:
    """A motor's calibrated range, in steps."""
    return calibration[motor]["range_max"] - calibration[motor]["range_min"]


def test_the_two_arms_emulators_hold_calibrations_of_their_own(emulate) -> None:
    so100 = emulate("--arm", "so100").calibration
    so101 = emulate("--arm", "so101").calibration
    assert so100.keys() == so101.keys()
    assert [so100[m]["id"] for m in so100] == [so101[m]["id"] for m in so101]
    assert so100 != so101
    # The SO-100's elbow sweeps less than the SO-101's (its published limits: 190° against 194°).
    assert span(so100, "elbow_flex") < span(so101, "elbow_flex")


def test_a_daemon_run_with_arm_so100_names_its_arm_and_takes_its_joint_names_and_labels(daemon_factory) -> None:
    running = daemon_factory("--arm", "so100")
    with Client(running.address) as arm:
        info = arm.model_info()
        assert (info.robot, info.lerobot_robot) == ("so100", "so100_follower")
        assert list(info.action_keys) == ["Rotation", "Pitch", "Elbow", "Wrist_Pitch", "Wrist_Roll", "Jaw"]
        assert info.joint_names[0] == "Rotation (shoulder_pan)"
        for key, value in [("Rotation", 0.3), ("shoulder_pan", -0.2), ("so100/Shoulder_Pan", 0.1)]:
            arm.set_joint_positions({key: value})
            assert abs(arm.robot_state().positions[0] - value) < 1e-9, key


def test_the_plugin_on_an_so100_daemon_has_so100_follower_s_features_and_sends_its_degrees(
    daemon_factory, tmp_path: Path
) -> None:
    running = daemon_factory("--arm", "so100")
    register_third_party_plugins()
    config_class = RobotConfig.get_choice_class("fakesim_hil")
    robot = make_robot_from_config(config_class(address=running.address, camera_names=[], calibration_dir=tmp_path))
    follower = SO100Follower(SO100FollowerConfig(port="/dev/null", id="reference", calibration_dir=tmp_path))
    assert robot.action_features == follower.action_features
    assert {k: v for k, v in robot.observation_features.items() if k.endswith(".pos")} == follower.observation_features
    robot.connect()
    try:
        observation = robot.get_observation()
        goal = {key: observation[key] for key in robot.action_features}
        goal["elbow_flex.pos"] += 5.0
        sent = robot.send_action(goal)
        with Client(running.address) as twin:
            targets = twin.robot_state("lerobot_degrees").ctrl_targets
            assert twin.model_info().robot == "so100"
        assert targets[2] == pytest.approx(sent["elbow_flex.pos"], abs=0.1)
        assert targets[2] == pytest.approx(observation["elbow_flex.pos"] + 5.0, abs=0.1)
    finally:
        robot.disconnect()
