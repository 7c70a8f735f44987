"""`fakesim-hil identify` on LeRobotDatasets written with LeRobot's own classes (LeRobotDataset.create,
add_frame, save_episode, finalize) from sessions on the twin: the plugin's robot drives a daemon
whose twin runs a perturbed dynamics profile, and each frame stores the state read before its
action, as lerobot-record does. The dataset is read, fitted, and the fit lowers the validation
error; a dataset in which one joint never moves is refused naming that joint."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from lerobot.datasets import LeRobotDataset
from lerobot.utils.feature_utils import build_dataset_frame, hw_to_dataset_features
from lerobot_robot_fakesim_hil import FakesimHil, FakesimHilConfig

FPS = 50
SECONDS = 14.0
MOTORS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
#: Each joint's swing about its start (degrees; the gripper in its 0..100 units).
SWING = [25.0, 20.0, 20.0, 25.0, 40.0, 15.0]
#: The gripper's middle of swing (0 closed, 100 open).
GRIPPER_MIDDLE = 35.0
#: The arm the daemon's twin runs: every joint heavier, more damped and weaker than the defaults,
#: with a 20 ms transport delay.
PROFILE = """format = 1
arm = "so101"
""" + "".join(
    f"""
[joints.{motor}]
kp = 800.0
damping = 0.9
armature = 0.04
frictionloss = 0.07
force_limit = 2.3
delay_s = 0.02
"""
    for motor in MOTORS
)
#: The fit's budget: a few generations, two threads (the known-truth test in Rust is the full fit).
QUICK = ["--generations", "8", "--population", "6", "--rounds", "1", "--threads", "2"]


def goal(joint: int, t: float, start: float) -> float:
    """Joint ``joint``'s goal at time ``t``: steps and ramps of a few sizes, a new one every 0.7 s,
    different per joint."""
    move = int(t / 0.7)
    phase = (t - 0.7 * move) / 0.7
    level = math.sin(1.7 * move + 2.3 * joint) * SWING[joint]
    previous = math.sin(1.7 * (move - 1) + 2.3 * joint) * SWING[joint] if move else 0.0
    ramp = (move + joint) % 3 == 0
    value = previous + (level - previous) * min(phase / 0.6, 1.0) if ramp else level
    return start + value


def record(address: str, root: Path, held: str | None) -> Path:
    """One episode of SECONDS at FPS on the twin at ``address``, written with LeRobot's classes;
    joint ``held`` (if any) is held at its start."""
    robot = FakesimHil(FakesimHilConfig(address=address, fps=FPS, camera_names=[], task_index=-1))
    robot.connect()
    try:
        features = {
            **hw_to_dataset_features(robot.action_features, "action", use_video=False),
            **hw_to_dataset_features(robot.observation_features, "observation", use_video=False),
        }
        dataset = LeRobotDataset.create(
            repo_id="local/identify", fps=FPS, features=features, root=root, robot_type="so101_follower",
            use_videos=False,
        )
        start = robot.get_observation()
        # About the start pose; the gripper (closed at the start) about a third open.
        origin = [start[f"{motor}.pos"] for motor in MOTORS[:5]] + [GRIPPER_MIDDLE]
        for frame in range(int(SECONDS * FPS)):
            observation = robot.get_observation() if frame else start
            t = frame / FPS
            action = {
                f"{motor}.pos": origin[j] if motor == held else goal(j, t, origin[j]) for j, motor in enumerate(MOTORS)
            }
            sent = robot.send_action(action)
            dataset.add_frame({
                **build_dataset_frame(features, observation, "observation"),
                **build_dataset_frame(features, sent, "action"),
                "task": "sweep every joint",
            })
        dataset.save_episode()
        dataset.finalize()
    finally:
        robot.disconnect()
    return root


@pytest.fixture(scope="module")
def datasets(daemon_factory, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two datasets from a daemon running the perturbed profile: every joint moving, and one with
    wrist_flex held still."""
    home = tmp_path_factory.mktemp("identify")
    profile = home / "arm.dynamics.toml"
    profile.write_text(PROFILE)
    daemon = daemon_factory("--dynamics", str(profile))
    return {
        "moving": record(daemon.address, home / "moving", None),
        "still": record(daemon.address, home / "still", "wrist_flex"),
    }


def identify(fakesim_bin: str, dataset: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Runs `fakesim-hil identify` on ``dataset`` (an SO-101 in LeRobot's degrees)."""
    return subprocess.run(
        [fakesim_bin, "identify", str(dataset), "--robot", "so101", "--units", "degrees", *QUICK, *args],
        capture_output=True, text=True, timeout=900,
    )


def test_a_dataset_from_the_twin_is_read_and_fitted(datasets: dict[str, Path], fakesim_bin: str, tmp_path: Path):
    out, figures = tmp_path / "fitted.dynamics.toml", tmp_path / "fit.json"
    done = identify(fakesim_bin, datasets["moving"], "--out", str(out), "--json", str(figures))
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    report = json.loads(figures.read_text())
    before, after = report["validation_rms_rad"]
    print(done.stdout)
    assert report["kept"] and after < before, report["validation_rms_rad"]
    assert report["seconds"]["train"] + report["seconds"]["validation"] > 0.8 * SECONDS * 0.8
    assert set(report["joints"]) == set(MOTORS)
    written = out.read_text()
    assert "[joints.wrist_flex]" in written and "delay_s" in written


def test_a_dataset_with_a_joint_that_never_moves_is_refused_naming_it(
    datasets: dict[str, Path], fakesim_bin: str, tmp_path: Path
):
    out = tmp_path / "never.dynamics.toml"
    done = identify(fakesim_bin, datasets["still"], "--out", str(out))
    assert done.returncode == 1, f"{done.stdout}\n{done.stderr}"
    assert "no motion on joint wrist_flex" in done.stderr, done.stderr
    assert not out.exists()
