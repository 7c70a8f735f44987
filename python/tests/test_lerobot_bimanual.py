"""The bi_fakesim_hil robot against LeRobot's own bimanual classes: bi_so_follower's features,
each arm of a pair daemon (``fakesim-hil --pair``) reaching degrees of its own, and
lerobot-record led by LeRobot's bi_so_leader on two virtual leader buses."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from lerobot.datasets import LeRobotDataset
from lerobot.robots.bi_so_follower import BiSOFollower, BiSOFollowerConfig
from lerobot.robots.config import RobotConfig
from lerobot.robots.so_follower import SOFollowerConfig
from lerobot.robots.utils import make_robot_from_config
from lerobot.utils.import_utils import register_third_party_plugins
from lerobot_support import MOTORS, leader_calibration, leader_reading, lerobot_home, lerobot_record, runs_of  # noqa: F401

from fakesim_hil import Client

SIDES = ("left", "right")
#: bi_so_follower's joint features, left arm first.
FEATURES = [f"{side}_{motor}.pos" for side in SIDES for motor in MOTORS]
#: The twin cameras' features of a pair: the shared view and each arm's wrist.
CAMERAS = ["agentview", "left_robot0_eye_in_hand", "right_robot0_eye_in_hand"]
#: Goals in LeRobot's degrees (the gripper 0..100), each arm its own, near the pair's home pose.
GOALS = dict(zip(FEATURES, [10.0, -35.0, 30.0, 70.0, 20.0, 30.0, -10.0, -50.0, 15.0, 80.0, -20.0, 50.0]))
#: How far a joint may end from its goal, degrees.
TOLERANCE = 0.5
#: Actions to wait for the twin's servos to get there (each one control tick; not timed).
ACTIONS = 300
FPS = 30
#: The pair's task, the bi robot's default: suite, index and name.
PAIR_TASK = ("pair_tabletop", 0, "lift_both")
INSTRUCTION = "lift the red cube with the left arm and the blue cube with the right arm"


def bi_config(**settings: object) -> RobotConfig:
    """A bi_fakesim_hil configuration, its class found by LeRobot among the installed plugins."""
    register_third_party_plugins()
    return RobotConfig.get_choice_class("bi_fakesim_hil")(**settings)


@pytest.fixture(scope="module")
def pair(daemon_factory):
    """A sim-only daemon whose twin holds a pair of arms."""
    return daemon_factory("--pair")


def test_lerobot_makes_bi_fakesim_hil_with_bi_so_follower_s_features(lerobot_home: Path) -> None:
    scratch = lerobot_home / "scratch"
    robot = make_robot_from_config(bi_config(image_width=64, image_height=48, calibration_dir=scratch))
    assert (type(robot).__name__, robot.name) == ("BiFakesimHil", "bi_fakesim_hil")
    follower = BiSOFollower(
        BiSOFollowerConfig(
            id="reference",
            calibration_dir=scratch,
            left_arm_config=SOFollowerConfig(port="/dev/null"),
            right_arm_config=SOFollowerConfig(port="/dev/null"),
        )
    )
    assert list(robot.action_features.items()) == list(follower.action_features.items()) == [(f, float) for f in FEATURES]
    motors = {key: kind for key, kind in robot.observation_features.items() if key.endswith(".pos")}
    assert motors == follower.observation_features
    cameras = {key: shape for key, shape in robot.observation_features.items() if not key.endswith(".pos")}
    assert cameras == {camera: (48, 64, 3) for camera in CAMERAS}


def test_each_arm_of_a_pair_reaches_its_own_commanded_degrees(pair, lerobot_home: Path) -> None:
    robot = make_robot_from_config(
        bi_config(address=pair.address, image_width=32, image_height=24, calibration_dir=lerobot_home / "scratch")
    )
    robot.connect()
    try:
        with Client(pair.address) as twin:
            task = twin.session_info().task
        assert (task.suite, task.task_index, task.name) == PAIR_TASK
        for _ in range(ACTIONS):
            sent = robot.send_action(GOALS)
            observation = robot.get_observation()
            if all(abs(observation[key] - goal) <= TOLERANCE for key, goal in GOALS.items()):
                break
        with Client(pair.address) as twin:
            targets = twin.robot_state("lerobot_degrees").ctrl_targets
    finally:
        robot.disconnect()
    assert sent == GOALS
    assert targets == pytest.approx(list(GOALS.values()), abs=0.1)
    off = {key: observation[key] for key, goal in GOALS.items() if abs(observation[key] - goal) > TOLERANCE}
    assert not off, f"{off} after {ACTIONS} actions (goals {GOALS})"
    assert sorted(observation) == sorted(FEATURES + CAMERAS)
    for camera in CAMERAS:
        assert observation[camera].shape == (24, 32, 3)


def test_lerobot_record_led_by_bi_so_leader_records_both_arms_in_a_run_of_the_pair(
    daemon_factory, emulate, lerobot_home: Path
) -> None:
    # Two virtual leaders, the right one's readings shifted so that the arms' actions differ.
    left = emulate(calibration=leader_calibration(lerobot_home, "virtual_left"))
    right = emulate(
        "--joint-offset", "shoulder_pan=20", "--joint-offset", "elbow_flex=-15",
        calibration=leader_calibration(lerobot_home, "virtual_right"),
    )  # fmt: skip
    daemon = daemon_factory("--pair")
    root = lerobot_home / "datasets" / "pair"
    lerobot_record(
        daemon.address, (left.device, right.device), root, "local/fakesim_pair",
        "--robot.image_width=64", "--robot.image_height=48",
        episodes=1, seconds=2, fps=FPS, robot_type="bi_fakesim_hil", task=INSTRUCTION,
    )  # fmt: skip
    dataset = LeRobotDataset("local/fakesim_pair", root=root, video_backend="pyav")
    frames = dataset.num_frames
    assert frames > 0
    assert dataset.features["action"]["names"] == FEATURES
    assert dataset.features["observation.state"]["names"] == FEATURES
    images = {key.removeprefix("observation.images.") for key in dataset.features if key.startswith("observation.images.")}
    assert images == set(CAMERAS)

    # The last frame's action is what each leader reads, the two arms' apart; the twin holds it.
    readings = leader_reading(left.device, lerobot_home, "virtual_left") + leader_reading(right.device, lerobot_home, "virtual_right")
    assert max(abs(a - b) for a, b in zip(readings[:6], readings[6:])) > 10, readings
    np.testing.assert_allclose(dataset[frames - 1]["action"].numpy(), readings, atol=0.1)
    with Client(daemon.address) as twin:
        np.testing.assert_allclose(twin.robot_state("lerobot_degrees").ctrl_targets, readings, atol=0.1)
        timestep_s = twin.model_info().timestep_s

    # The episode was one run of the pair's task, its summary.json written, its twin time the dataset's.
    (run,) = runs_of(daemon.runs_dir)
    assert (daemon.runs_dir / run.run / "summary.json").is_file()
    assert run.summary["status"] == "stopped"
    assert tuple(run.summary["task"][key] for key in ("suite", "task_index", "name")) == PAIR_TASK
    assert abs(run.twin_time_s - frames / FPS) <= timestep_s, (run.twin_time_s, frames)


def test_each_robot_type_refuses_a_daemon_of_the_other_kind(daemon, pair, lerobot_home: Path) -> None:
    scratch = lerobot_home / "scratch"
    bimanual = make_robot_from_config(bi_config(address=daemon.address, camera_names=[], calibration_dir=scratch))
    with pytest.raises(ValueError, match=r"drives the arms \['left', 'right'\].* runs \[\]"):
        bimanual.connect()
    assert not bimanual.is_connected
    config_class = RobotConfig.get_choice_class("fakesim_hil")
    single = make_robot_from_config(config_class(address=pair.address, camera_names=[], calibration_dir=scratch))
    with pytest.raises(ValueError, match=r"drives the arms \[\].* runs \['left', 'right'\]"):
        single.connect()
    assert not single.is_connected
