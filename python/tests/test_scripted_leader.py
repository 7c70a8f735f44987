"""A virtual leader moved by a scripted hand (`fakesim-hil emulate --script`), driven by LeRobot's own
so101_leader: lerobot-teleoperate moves the twin along the script, lerobot-record records actions that
follow it, and the recorded episode replayed by the emulator (`--script DATASET`) reads back on the
same path.

Only public CLI flags that LeRobot 0.4.4 and 0.6.1 share are used, and the recorded dataset is read
as its files (meta/info.json and the parquet under data/), which both versions write alike."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from lerobot.teleoperators.so_leader import SO101Leader, SO101LeaderConfig

from fakesim_hil import Client, FakesimError
from lerobot_support import BIN, MOTORS, lerobot_cli
from scripted_hand import ON_PATH, assert_follows, leader_flags, off_path, write_waypoints
from slow_host import lerobot_environment

# The hand's loop in LeRobot's units (joints 1-5 in degrees about the middle of the calibrated range,
# the gripper 0..100), ending where it starts: 1.5 s a pass.
WAYPOINTS = np.array(
    [
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 30.0],
        [0.5, 25.0, -15.0, 20.0, -20.0, 40.0, 60.0],
        [1.0, -25.0, 10.0, -15.0, 20.0, -40.0, 10.0],
        [1.5, 0.0, 0.0, 0.0, 0.0, 0.0, 30.0],
    ]
)

@pytest.fixture
def lerobot_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """LeRobot's home in a temporary directory, offline, for the scripts this test runs."""
    monkeypatch.setenv("HF_LEROBOT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_LEROBOT_CALIBRATION", str(tmp_path / "calibration"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path


def test_teleoperate_moves_the_twin_along_the_scripted_leader(emulate, daemon_factory, lerobot_dirs: Path) -> None:
    leader = emulate("--script", str(write_waypoints(lerobot_dirs / "wave.csv", WAYPOINTS)), "--script-loop")
    daemon = daemon_factory()
    teleop = subprocess.Popen(
        [
            str(BIN / "lerobot-teleoperate"),
            "--robot.type=fakesim_hil",
            f"--robot.address={daemon.address}",
            "--robot.camera_names=[]",
            *leader_flags(leader),
            "--teleop_time_s=2",
            "--fps=10",
            "--display_data=false",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=lerobot_environment(),
    )
    seen = []
    with Client(daemon.address) as twin:
        # The twin's targets while LeRobot teleoperates it, at the pace of the daemon's joint-state
        # stream (before LeRobot's episode starts there are none).
        for _ in twin.joint_states(10.0):
            if teleop.poll() is not None:
                break
            try:
                seen.append(twin.robot_state("lerobot_degrees").ctrl_targets)
            except FakesimError:
                continue
        out, err = teleop.communicate()
        assert teleop.returncode == 0, f"lerobot-teleoperate failed:\n{out[-3000:]}\n{err[-5000:]}"
        seen.append(twin.robot_state("lerobot_degrees").ctrl_targets)
    targets = np.unique(np.array(seen), axis=0)
    # The twin starts at its home pose, then follows the hand; the poses on the path are the
    # leader's (the virtual leader and the sim-only daemon share a calibration).
    moving = targets[off_path(targets, WAYPOINTS[:, 1:]) <= ON_PATH]
    assert len(moving) >= 8, f"{len(moving)} of {len(targets)} twin poses on the script"
    assert_follows(moving, WAYPOINTS[:, 1:], "the twin's targets")
    assert off_path(np.array(seen[-1:]), WAYPOINTS[:, 1:])[0] <= ON_PATH, "the twin ends on the script"


def recorded_actions(root: Path) -> tuple[int, np.ndarray]:
    """The fps and the actions (in frame order) of episode 0 of the dataset LeRobot wrote at `root`."""
    info = json.loads((root / "meta" / "info.json").read_text())
    assert info["features"]["action"]["names"] == [f"{motor}.pos" for motor in MOTORS]
    frames = []
    for file in sorted((root / "data").rglob("*.parquet")):
        table = pq.read_table(file, columns=["episode_index", "frame_index", "action"]).to_pylist()
        frames += [(row["frame_index"], row["action"]) for row in table if row["episode_index"] == 0]
    frames.sort()
    return info["fps"], np.array([action for _, action in frames])


def read_leader(bus, readings: int) -> np.ndarray:
    """`readings` positions LeRobot's own so101_leader reads from a virtual bus, in action order (as its
    get_action reads them, with retries: on a loaded machine a reply can come after the SDK's 34 ms)."""
    calibration = bus.calibration_path
    leader = SO101Leader(SO101LeaderConfig(port=bus.device, id=calibration.stem, calibration_dir=calibration.parent))
    leader.connect(calibrate=False)
    try:
        actions = [leader.bus.sync_read("Present_Position", num_retry=3) for _ in range(readings)]
    finally:
        leader.disconnect()
    return np.array([[action[motor] for motor in MOTORS] for action in actions])


def test_record_follows_the_scripted_leader_and_the_episode_replays_on_the_emulator(
    emulate, daemon_factory, lerobot_dirs: Path
) -> None:
    leader = emulate("--script", str(write_waypoints(lerobot_dirs / "wave.csv", WAYPOINTS)), "--script-loop")
    daemon = daemon_factory()
    root = lerobot_dirs / "datasets" / "scripted"
    lerobot_cli(
        "lerobot-record",
        "--robot.type=fakesim_hil",
        f"--robot.address={daemon.address}",
        "--robot.camera_names=[]",
        *leader_flags(leader),
        "--dataset.repo_id=local/scripted_leader",
        f"--dataset.root={root}",
        "--dataset.num_episodes=1",
        "--dataset.episode_time_s=3",
        "--dataset.reset_time_s=0",
        "--dataset.fps=15",
        "--dataset.push_to_hub=false",
        "--dataset.video=false",
        "--dataset.single_task=wave",
        "--display_data=false",
        "--play_sounds=false",
    )
    fps, actions = recorded_actions(root)
    assert fps == 15
    assert len(actions) >= 20, f"{len(actions)} frames recorded"
    assert_follows(actions, WAYPOINTS[:, 1:], "the recorded actions")

    # The emulator replays that episode's actions at its fps: LeRobot's leader reads them back.
    replayed = emulate("--script", str(root), "--episode", "0", "--script-loop")
    readings = read_leader(replayed, 300)
    distances = off_path(readings, actions)
    assert distances.max() <= ON_PATH, f"a reading {distances.max():.2f} off the recorded episode"
    assert len(np.unique(readings, axis=0)) >= 20, "the replay moves the leader"
