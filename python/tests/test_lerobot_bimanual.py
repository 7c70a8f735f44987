"""The bi_fakesim_hil robot against LeRobot's own bimanual classes: bi_so_follower's features,
each arm of a pair daemon (``fakesim-hil --pair``) reaching degrees of its own, and
lerobot-record led by LeRobot's bi_so_leader on two virtual leader buses, and lerobot-replay of
that episode; and fakesim_hil with
``arm`` set, one robot per arm of a pair, each under that arm's lease."""

from __future__ import annotations

from pathlib import Path

import grpc
import numpy as np
import pytest
from lerobot.datasets import LeRobotDataset
from lerobot.robots.bi_so_follower import BiSOFollower, BiSOFollowerConfig
from lerobot.robots.config import RobotConfig
from lerobot.robots.robot import Robot
from lerobot.robots.so_follower import SO101Follower, SO101FollowerConfig, SOFollowerConfig
from lerobot.robots.utils import make_robot_from_config
from lerobot.utils.import_utils import register_third_party_plugins
from lerobot_support import (  # noqa: F401
    MOTORS, leader_calibration, leader_reading, lerobot_cli, lerobot_home, lerobot_record, runs_of,
)

from fakesim_hil import Client, FakesimError

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


def plugin_config(robot_type: str, **settings: object) -> RobotConfig:
    """A configuration of a plugin robot type, its class found by LeRobot among the installed plugins."""
    register_third_party_plugins()
    return RobotConfig.get_choice_class(robot_type)(**settings)


def bi_config(**settings: object) -> RobotConfig:
    """A bi_fakesim_hil configuration."""
    return plugin_config("bi_fakesim_hil", **settings)


def arm_config(arm: str, **settings: object) -> RobotConfig:
    """A fakesim_hil configuration driving one arm of a pair."""
    return plugin_config("fakesim_hil", arm=arm, **settings)


def arm_goals(side: str) -> dict[str, float]:
    """One arm's share of GOALS, under so101_follower's features."""
    return {f"{motor}.pos": GOALS[f"{side}_{motor}.pos"] for motor in MOTORS}


def missed(observation: dict, goals: dict[str, float]) -> dict[str, float]:
    """The joints an observation shows further than TOLERANCE from their goals."""
    return {key: observation[key] for key, goal in goals.items() if abs(observation[key] - goal) > TOLERANCE}


def drive(robot: Robot, goals: dict[str, float]) -> tuple[dict, dict]:
    """Sends ``goals`` until observed (at most ACTIONS times); returns the last action and observation."""
    for _ in range(ACTIONS):
        sent = robot.send_action(goals)
        observation = robot.get_observation()
        if not missed(observation, goals):
            break
    return sent, observation


@pytest.fixture(scope="module")
def pair(daemon_factory):
    """A sim-only daemon whose twin holds a pair of arms."""
    return daemon_factory("--pair")


@pytest.fixture(scope="module")
def leased_pair(daemon_factory):
    """A sim-only pair daemon whose motion calls need the control lease, as with real arms."""
    return daemon_factory("--pair", "--lease-in-sim")


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
        sent, observation = drive(robot, GOALS)
        with Client(pair.address) as twin:
            targets = twin.robot_state("lerobot_degrees").ctrl_targets
    finally:
        robot.disconnect()
    assert sent == GOALS
    assert targets == pytest.approx(list(GOALS.values()), abs=0.1)
    off = missed(observation, GOALS)
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

    # LeRobot's lerobot-replay of the episode on bi_fakesim_hil: from the pair's home pose, far
    # from what the leaders read, both arms end at the episode's last action.
    with Client(daemon.address) as twin:
        twin.reset(*PAIR_TASK[:2], 0)
        home = twin.robot_state("lerobot_degrees").ctrl_targets
        twin.stop()
    assert max(abs(a - b) for a, b in zip(home, readings)) > 10, (home, readings)
    lerobot_cli(
        "lerobot-replay",
        "--robot.type=bi_fakesim_hil",
        f"--robot.address={daemon.address}",
        "--robot.camera_names=[]",
        "--dataset.repo_id=local/fakesim_pair",
        f"--dataset.root={root}",
        "--dataset.episode=0",
        "--play_sounds=false",
    )
    with Client(daemon.address) as twin:
        np.testing.assert_allclose(twin.robot_state("lerobot_degrees").ctrl_targets, readings, atol=0.1)


def test_each_robot_type_refuses_a_daemon_of_the_other_kind(daemon, pair, lerobot_home: Path) -> None:
    scratch = lerobot_home / "scratch"
    bimanual = make_robot_from_config(bi_config(address=daemon.address, camera_names=[], calibration_dir=scratch))
    with pytest.raises(ValueError, match=r"drives the arms \['left', 'right'\].* runs \[\]"):
        bimanual.connect()
    assert not bimanual.is_connected
    single = make_robot_from_config(plugin_config("fakesim_hil", address=pair.address, camera_names=[], calibration_dir=scratch))
    with pytest.raises(ValueError, match=r"drives the arms \[\].* runs \['left', 'right'\].*--robot.arm=left or right"):
        single.connect()
    assert not single.is_connected
    one_of_a_pair = make_robot_from_config(arm_config("left", address=daemon.address, camera_names=[], calibration_dir=scratch))
    with pytest.raises(ValueError, match=r"drives arm 'left' of a pair, the daemon at .* runs one arm"):
        one_of_a_pair.connect()
    assert not one_of_a_pair.is_connected


def test_one_arm_of_a_pair_has_so101_follower_s_features_and_starts_no_episodes(lerobot_home: Path) -> None:
    scratch = lerobot_home / "scratch"
    robot = make_robot_from_config(arm_config("right", image_width=64, image_height=48, calibration_dir=scratch))
    assert (type(robot).__name__, robot.name) == ("FakesimHil", "fakesim_hil")
    follower = SO101Follower(SO101FollowerConfig(port="/dev/null", id="reference", calibration_dir=scratch))
    assert list(robot.action_features.items()) == list(follower.action_features.items())
    motors = {key: kind for key, kind in robot.observation_features.items() if key.endswith(".pos")}
    assert motors == follower.observation_features
    cameras = {key: shape for key, shape in robot.observation_features.items() if not key.endswith(".pos")}
    assert cameras == {"agentview": (48, 64, 3), "right_robot0_eye_in_hand": (48, 64, 3)}
    assert robot.config.task_index == -1, "an arm's default: no episodes"
    with pytest.raises(ValueError, match=r"task_index must be -1 with arm 'right', not 0: .*both arms' leases"):
        arm_config("right", task_index=0)
    with pytest.raises(ValueError, match=r"arm must be one of \['left', 'right'\], or empty .* not 'middle'"):
        arm_config("middle")
    with pytest.raises(ValueError, match=r"bi_fakesim_hil drives both arms of the pair, not arm 'left'"):
        bi_config(arm="left")


def test_one_robot_per_arm_each_drives_its_own_arm_of_a_pair_under_its_own_lease(leased_pair, lerobot_home: Path) -> None:
    robots = {
        side: make_robot_from_config(
            arm_config(
                side, address=leased_pair.address, lease_holder=f"lerobot {side}",
                image_width=32, image_height=24, calibration_dir=lerobot_home / "scratch",
            )
        )
        for side in SIDES
    }  # fmt: skip
    with Client(leased_pair.address) as twin:
        home = twin.robot_state("lerobot_degrees")
        reached = {}
        try:
            # The left robot drives its arm; then the right connects beside it and drives its own.
            for index, (side, robot) in enumerate(robots.items()):
                block = slice(6 * index, 6 * index + 6)
                robot.connect()
                goals = arm_goals(side)
                # An action naming one joint: the others keep this arm's targets, not the other's.
                elbow = {"elbow_flex.pos": goals["elbow_flex.pos"]}
                held = dict(zip(goals, twin.robot_state("lerobot_degrees").ctrl_targets[block]))
                assert robot.send_action(elbow) == {**held, **elbow}
                sent, observation = drive(robot, goals)
                assert sent == goals
                off = missed(observation, goals)
                assert not off, f"{side}: {off} after {ACTIONS} actions (goals {goals})"
                assert sorted(observation) == sorted([*goals, "agentview", f"{side}_robot0_eye_in_hand"])
                reached[side] = twin.robot_state("lerobot_degrees")
            assert [twin.status(side).lease_holder for side in SIDES] == ["lerobot left", "lerobot right"]
        finally:
            for robot in robots.values():
                if robot.is_connected:
                    robot.disconnect()
        assert [twin.status(side).lease_holder for side in SIDES] == ["", ""], "released at disconnect"
    left, right = list(arm_goals("left").values()), list(arm_goals("right").values())
    assert left != right
    # The left robot's actions moved the left arm alone: the right held its home targets and pose.
    assert reached["left"].ctrl_targets[:6] == pytest.approx(left, abs=0.1)
    assert reached["left"].ctrl_targets[6:] == home.ctrl_targets[6:]
    assert reached["left"].positions[6:] == pytest.approx(home.positions[6:], abs=TOLERANCE)
    # Then the right robot's moved the right arm alone: the left held the left robot's goals.
    assert reached["right"].ctrl_targets[:6] == reached["left"].ctrl_targets[:6]
    assert reached["right"].ctrl_targets == pytest.approx(left + right, abs=0.1)
    assert reached["right"].positions == pytest.approx(left + right, abs=TOLERANCE)


def test_a_robot_for_an_arm_whose_lease_is_held_is_refused_naming_the_holder(leased_pair, lerobot_home: Path) -> None:
    scratch = lerobot_home / "scratch"
    first = make_robot_from_config(
        arm_config("left", address=leased_pair.address, lease_holder="lerobot left", camera_names=[], calibration_dir=scratch)
    )
    first.connect()
    try:
        for config in (
            arm_config("left", address=leased_pair.address, lease_holder="second", camera_names=[], calibration_dir=scratch),
            bi_config(address=leased_pair.address, camera_names=[], calibration_dir=scratch),
        ):
            robot = make_robot_from_config(config)
            with pytest.raises(FakesimError) as refused:
                robot.connect()
            assert (refused.value.code, refused.value.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "lease_held")
            assert "lerobot left" in refused.value.message
            assert not robot.is_connected
        with Client(leased_pair.address) as twin:
            assert twin.status("left").lease_holder == "lerobot left"
            assert not twin.status("right").lease_holder, "the other arm's lease is free"
    finally:
        first.disconnect()
