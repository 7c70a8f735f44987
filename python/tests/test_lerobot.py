"""The LeRobot plugin against the real lerobot package: discovery, features, lerobot-record, lerobot-replay and
lerobot-teleoperate with LeRobot's own so101_leader on a virtual servo bus."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from lerobot.robots.config import RobotConfig
from lerobot.robots.so_follower import SO101Follower, SO101FollowerConfig
from lerobot.robots.utils import make_robot_from_config
from lerobot.teleoperators.so_leader import SO101Leader, SO101LeaderConfig
from lerobot.utils.import_utils import register_third_party_plugins

from fakesim_hil import Client, FakesimError

MOTORS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def lerobot_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """LeRobot's calibration and dataset directories in a temporary directory, for the scripts."""
    home = tmp_path_factory.mktemp("lerobot")
    settings = {
        "HF_LEROBOT_CALIBRATION": str(home / "calibration"),
        "HF_LEROBOT_HOME": str(home / "home"),
        "HF_HUB_OFFLINE": "1",
    }
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    yield home
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="module")
def virtual_leader(lerobot_home: Path, fakesim_bin: str) -> Iterator[str]:
    """A virtual SO-101 servo bus on a pty (`fakesim-hil emulate`), calibrated as leader `virtual`."""
    calibration = lerobot_home / "calibration" / "teleoperators" / "so_leader" / "virtual.json"
    process = subprocess.Popen(
        [fakesim_bin, "emulate", "--write-calibration", str(calibration)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    assert first.startswith("Virtual servo bus on "), first
    yield first.removeprefix("Virtual servo bus on ").split(":")[0]
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)


def lerobot_cli(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Runs one of LeRobot's console scripts, unchanged, from this environment."""
    done = subprocess.run([str(BIN / name), *args], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    return done


def leader_reading(port: str, home: Path) -> list[float]:
    """What LeRobot's own so101_leader reads from the virtual bus now, in action order."""
    calibration = home / "calibration" / "teleoperators" / "so_leader"
    leader = SO101Leader(SO101LeaderConfig(port=port, id="virtual", calibration_dir=calibration))
    leader.connect(calibrate=False)
    try:
        action = leader.get_action()
    finally:
        leader.disconnect()
    return [action[f"{motor}.pos"] for motor in MOTORS]


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


def test_record_replay_train_and_run_a_policy_on_the_twin(daemon_factory, virtual_leader: str, lerobot_home: Path) -> None:
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    daemon = daemon_factory()
    root = lerobot_home / "datasets" / "twin"
    fps, seconds = 5, 2
    lerobot_cli(
        "lerobot-record",
        "--robot.type=fakesim_hil",
        f"--robot.address={daemon.address}",
        "--robot.camera_names=[agentview]",
        "--robot.image_width=64",
        "--robot.image_height=48",
        "--teleop.type=so101_leader",
        f"--teleop.port={virtual_leader}",
        "--teleop.id=virtual",
        "--dataset.repo_id=local/fakesim_twin",
        f"--dataset.root={root}",
        "--dataset.num_episodes=1",
        f"--dataset.episode_time_s={seconds}",
        "--dataset.reset_time_s=0",
        f"--dataset.fps={fps}",
        "--dataset.push_to_hub=false",
        # LeRobot 0.4.4 leaves camera features out of a dataset recorded with video=false.
        "--dataset.video=true",
        "--dataset.single_task=lift the red cube",
        "--display_data=false",
        "--play_sounds=false",
    )
    dataset = LeRobotDataset("local/fakesim_twin", root=root, video_backend="pyav")
    assert dataset.num_episodes == 1
    assert 2 <= dataset.num_frames <= fps * seconds + 1
    assert len(dataset) == dataset.num_frames == dataset.meta.total_frames
    features = dataset.features
    assert features["observation.state"]["names"] == [f"{m}.pos" for m in MOTORS]
    assert features["action"]["names"] == [f"{m}.pos" for m in MOTORS]
    assert tuple(features["observation.images.agentview"]["shape"]) == (48, 64, 3)
    last = dataset[len(dataset) - 1]
    assert tuple(last["observation.images.agentview"].shape) == (3, 48, 64)
    reading = leader_reading(virtual_leader, lerobot_home)
    np.testing.assert_allclose(last["action"].numpy(), reading, atol=0.1)

    # lerobot-replay sends the recorded actions back: the twin starts at home, ends on the last one.
    with Client(daemon.address) as twin:
        twin.reset("so101_tabletop", 0, 0)
        home = twin.robot_state("lerobot_degrees").ctrl_targets
        twin.stop()
    assert max(abs(a - b) for a, b in zip(home, reading)) > 10, "home must differ from the recorded actions"
    lerobot_cli(
        "lerobot-replay",
        "--robot.type=fakesim_hil",
        f"--robot.address={daemon.address}",
        "--robot.camera_names=[]",
        "--dataset.repo_id=local/fakesim_twin",
        f"--dataset.root={root}",
        "--dataset.episode=0",
        f"--dataset.fps={fps}",
        "--play_sounds=false",
    )
    with Client(daemon.address) as twin:
        replayed = twin.robot_state("lerobot_degrees").ctrl_targets
    np.testing.assert_allclose(replayed, last["action"].numpy(), atol=0.1)

    # lerobot-train gives a (tiny, barely trained) ACT policy on that dataset, and
    # lerobot-record --policy.path runs it on the twin.
    trained = lerobot_home / "train"
    lerobot_cli(
        "lerobot-train",
        "--dataset.repo_id=local/fakesim_twin",
        f"--dataset.root={root}",
        "--dataset.video_backend=pyav",
        "--policy.type=act",
        "--policy.device=cpu",
        "--policy.push_to_hub=false",
        "--policy.pretrained_backbone_weights=null",
        "--policy.dim_model=32",
        "--policy.dim_feedforward=64",
        "--policy.n_heads=2",
        "--policy.chunk_size=4",
        "--policy.n_action_steps=4",
        "--policy.use_vae=false",
        "--steps=2",
        "--batch_size=2",
        "--num_workers=0",
        "--save_freq=2",
        "--wandb.enable=false",
        f"--output_dir={trained}",
    )
    policy = trained / "checkpoints" / "last" / "pretrained_model"
    evaluated = lerobot_home / "datasets" / "eval_policy"
    lerobot_cli(
        "lerobot-record",
        "--robot.type=fakesim_hil",
        f"--robot.address={daemon.address}",
        "--robot.camera_names=[agentview]",
        "--robot.image_width=64",
        "--robot.image_height=48",
        f"--policy.path={policy}",
        "--dataset.repo_id=local/eval_policy",
        f"--dataset.root={evaluated}",
        "--dataset.num_episodes=1",
        "--dataset.episode_time_s=1",
        "--dataset.reset_time_s=0",
        f"--dataset.fps={fps}",
        "--dataset.push_to_hub=false",
        "--dataset.video=true",
        "--dataset.single_task=lift the red cube",
        "--display_data=false",
        "--play_sounds=false",
    )
    # The run starts from home (connecting starts an episode there) and ends on the policy's
    # last action, which the eval dataset recorded.
    ran = LeRobotDataset("local/eval_policy", root=evaluated, video_backend="pyav")
    assert ran.num_frames >= 2
    with Client(daemon.address) as twin:
        after = twin.robot_state("lerobot_degrees").ctrl_targets
    assert max(abs(a - b) for a, b in zip(after, home)) > 10, "the policy moved the twin from home"
    np.testing.assert_allclose(after, ran[len(ran) - 1]["action"].numpy(), atol=0.1)


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

