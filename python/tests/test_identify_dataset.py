"""`fakesim-hil identify` on LeRobotDatasets written with LeRobot's own classes (LeRobotDataset.create,
add_frame, save_episode, finalize) from sessions on the twin: the plugin's robot drives a daemon
whose twin runs a perturbed dynamics profile, and each frame stores the state read before its
action, as lerobot-record does. The dataset is read, fitted, and the fit lowers the validation
error; a dataset in which one joint never moves is refused naming that joint. A two-episode
dataset rewritten in v2.1's layout (LeRobot 0.6.1 writes only v3.0), and rewritten in ±100 units
through a calibration with LeRobot's own normalisation, gives the figures of the original."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from lerobot.datasets import LeRobotDataset
from lerobot.motors import Motor, MotorCalibration, MotorNormMode
from lerobot.motors.feetech import FeetechMotorsBus
from lerobot.utils.feature_utils import build_dataset_frame, hw_to_dataset_features
from lerobot_robot_fakesim_hil import FakesimHil, FakesimHilConfig

import sweep

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
    """Joint ``joint``'s goal at time ``t``, about ``start``."""
    return start + sweep.offset(joint, t, SWING[joint])


def record(address: str, root: Path, held: str | None, episodes: int = 1, seconds: float = SECONDS) -> Path:
    """``episodes`` episodes of ``seconds`` at FPS on the twin at ``address``, one after the
    other, written with LeRobot's classes; joint ``held`` (if any) is held at its start."""
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
        frames = int(seconds * FPS)
        for frame in range(episodes * frames):
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
            if (frame + 1) % frames == 0:
                dataset.save_episode()
        dataset.finalize()
    finally:
        robot.disconnect()
    return root


@pytest.fixture(scope="module")
def datasets(daemon_factory, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three datasets from a daemon running the perturbed profile: every joint moving, one with
    wrist_flex held still, and two episodes of every joint moving, each half as long."""
    home = tmp_path_factory.mktemp("identify")
    profile = home / "arm.dynamics.toml"
    profile.write_text(PROFILE)
    daemon = daemon_factory("--dynamics", str(profile))
    return {
        "moving": record(daemon.address, home / "moving", None),
        "still": record(daemon.address, home / "still", "wrist_flex"),
        "two": record(daemon.address, home / "two", None, episodes=2, seconds=SECONDS / 2),
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


#: The least budget that runs every stage of the fit, for runs compared with each other.
TINY = ["--generations", "2", "--population", "4", "--rounds", "0", "--threads", "2"]
#: LeRobot v2.1's data file of an episode (its info.json's ``data_path``).
V21_DATA_PATH = "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet"
#: The statistics v2.1 kept per episode (v3.0 adds quantiles).
V21_STATS = ("min", "max", "mean", "std", "count")
#: The nominal SO-101 calibration (the sim-only daemon's, feetech::calibration::so101), in
#: LeRobot's terms, but for two changes the reading of ±100 must follow: shoulder_pan's range
#: is moved off the middle of the turn, and elbow_flex's drive mode is inverted (which LeRobot's
#: ±100 turns round and its degrees ignore).
CALIBRATION = {
    "shoulder_pan": MotorCalibration(id=1, drive_mode=0, homing_offset=-870, range_min=1000, range_max=3300),
    "shoulder_lift": MotorCalibration(id=2, drive_mode=0, homing_offset=412, range_min=909, range_max=3185),
    "elbow_flex": MotorCalibration(id=3, drive_mode=1, homing_offset=-35, range_min=946, range_max=3148),
    "wrist_flex": MotorCalibration(id=4, drive_mode=0, homing_offset=980, range_min=966, range_max=3128),
    "wrist_roll": MotorCalibration(id=5, drive_mode=0, homing_offset=150, range_min=0, range_max=4095),
    "gripper": MotorCalibration(id=6, drive_mode=0, homing_offset=-1520, range_min=1933, range_max=3185),
}


def tiny_figures(fakesim_bin: str, dataset: Path, tmp_path: Path, name: str, *args: str) -> tuple[dict, str]:
    """The JSON figures (the wall and CPU times left out, the whole run's and each stage's) and stderr
    of a TINY run on ``dataset``."""
    out, figures = tmp_path / f"{name}.dynamics.toml", tmp_path / f"{name}.json"
    done = subprocess.run(
        [fakesim_bin, "identify", str(dataset), "--robot", "so101", *TINY, "--out", str(out), "--json", str(figures),
         *args],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    report = json.loads(figures.read_text())
    del report["elapsed_s"]
    for stage in report["stages"]:
        del stage["wall_s"], stage["cpu_s"]
    return report, done.stderr


def to_v21(v30: Path, root: Path) -> Path:
    """The v3.0 dataset at ``v30`` rewritten at ``root`` in LeRobot's v2.1 layout (as LeRobot's
    own convert_dataset_v21_to_v30 reads it, run backwards): one parquet file per episode at
    V21_DATA_PATH, meta/episodes.jsonl, meta/tasks.jsonl, meta/episodes_stats.jsonl and an
    info.json of v2.1. The frames are the same rows, written by pandas."""
    info = json.loads((v30 / "meta" / "info.json").read_text())
    files = sorted((v30 / "data").glob("*/*.parquet"))
    data = pd.concat([pd.read_parquet(path) for path in files], ignore_index=True)
    for episode, frames in data.groupby("episode_index"):
        path = root / V21_DATA_PATH.format(episode_chunk=episode // info["chunks_size"], episode_index=episode)
        path.parent.mkdir(parents=True, exist_ok=True)
        frames.to_parquet(path, index=False)
    episodes = pd.concat([pd.read_parquet(path) for path in sorted((v30 / "meta" / "episodes").glob("*/*.parquet"))])
    tasks = pd.read_parquet(v30 / "meta" / "tasks.parquet")
    meta = root / "meta"
    meta.mkdir(parents=True)
    with (meta / "episodes.jsonl").open("w") as lines:
        for row in episodes.itertuples():
            episode = {"episode_index": int(row.episode_index), "tasks": list(row.tasks), "length": int(row.length)}
            lines.write(json.dumps(episode) + "\n")
    with (meta / "tasks.jsonl").open("w") as lines:
        for task, row in tasks.iterrows():
            lines.write(json.dumps({"task_index": int(row["task_index"]), "task": task}) + "\n")
    with (meta / "episodes_stats.jsonl").open("w") as lines:
        for _, row in episodes.iterrows():
            stats: dict[str, dict[str, list]] = {}
            for column in (c for c in episodes.columns if c.startswith("stats/")):
                _, feature, stat = column.split("/")
                if stat in V21_STATS:
                    stats.setdefault(feature, {})[stat] = np.asarray(row[column]).tolist()
            lines.write(json.dumps({"episode_index": int(row["episode_index"]), "stats": stats}) + "\n")
    for key in ("data_files_size_in_mb", "video_files_size_in_mb"):
        del info[key]
    info.update(
        codebase_version="v2.1",
        data_path=V21_DATA_PATH,
        total_chunks=(info["total_episodes"] + info["chunks_size"] - 1) // info["chunks_size"],
        total_videos=0,
    )
    (meta / "info.json").write_text(json.dumps(info, indent=4))
    return root


def test_a_v21_dataset_gives_the_figures_of_its_v30_original(
    datasets: dict[str, Path], fakesim_bin: str, tmp_path: Path
):
    v21 = to_v21(datasets["two"], tmp_path / "two-v21")
    files = sorted(p.relative_to(v21).as_posix() for p in (v21 / "data").rglob("*.parquet"))
    assert files == ["data/chunk-000/episode_000000.parquet", "data/chunk-000/episode_000001.parquet"], files
    assert len((v21 / "meta" / "episodes.jsonl").read_text().splitlines()) == 2
    original, said = tiny_figures(fakesim_bin, datasets["two"], tmp_path, "v30")
    converted, said_v21 = tiny_figures(fakesim_bin, v21, tmp_path, "v21")
    # Each episode is a recording of its own (the same two from either layout).
    assert "fitting 2 recording(s)" in said and "fitting 2 recording(s)" in said_v21, (said, said_v21)
    assert original["seconds"]["train"] + original["seconds"]["validation"] > 0.8 * SECONDS * 0.8
    # The same float32 frames and a seeded fit: the same figures to the last digit.
    assert converted == original


def bus(body: MotorNormMode) -> FeetechMotorsBus:
    """LeRobot's bus of an SO follower (never connected) with CALIBRATION, its five body joints in
    ``body`` and the gripper 0..100, as SOFollower sets them up for ``use_degrees``."""
    motors = {
        motor: Motor(CALIBRATION[motor].id, "sts3215", MotorNormMode.RANGE_0_100 if motor == "gripper" else body)
        for motor in MOTORS
    }
    return FeetechMotorsBus(port="/dev/null", motors=motors, calibration=CALIBRATION)


def degrees_to_range(values: np.ndarray) -> np.ndarray:
    """Frames of six values in LeRobot's degrees as LeRobot would have recorded them in ±100 (the
    gripper 0..100 either way) through CALIBRATION: each degree value is taken back to its servo
    position, unrounded (the inverse of LeRobot's degrees, checked against its _normalize), and
    that position normalised by LeRobot's own _normalize in RANGE_M100_100."""
    degrees, ranged = bus(MotorNormMode.DEGREES), bus(MotorNormMode.RANGE_M100_100)
    resolution = degrees.model_resolution_table["sts3215"] - 1
    out = values.astype(np.float64)
    for frame in out:
        steps = {}
        for j, motor in enumerate(MOTORS[:5]):
            calibration = CALIBRATION[motor]
            steps[calibration.id] = frame[j] * resolution / 360 + (calibration.range_min + calibration.range_max) / 2
            # Inside the range: LeRobot's ±100 clamps there, its degrees do not.
            assert calibration.range_min <= steps[calibration.id] <= calibration.range_max, (motor, frame[j])
        back = degrees._normalize(steps)
        assert all(abs(back[CALIBRATION[m].id] - frame[j]) < 1e-9 for j, m in enumerate(MOTORS[:5])), (frame, back)
        normalised = ranged._normalize(steps)
        frame[:5] = [normalised[CALIBRATION[m].id] for m in MOTORS[:5]]
    return out.astype(np.float32)


def to_range(dataset: Path, root: Path) -> Path:
    """The degrees dataset at ``dataset`` (v3.0) written anew at ``root`` with LeRobot's classes,
    its actions and states in ±100 (degrees_to_range), the frames and episodes as they were."""
    info = json.loads((dataset / "meta" / "info.json").read_text())
    features = {key: {**info["features"][key], "shape": (6,)} for key in ("action", "observation.state")}
    files = sorted((dataset / "data").glob("*/*.parquet"))
    data = pd.concat([pd.read_parquet(path) for path in files], ignore_index=True)
    tasks = pd.read_parquet(dataset / "meta" / "tasks.parquet")
    task_of = {int(row["task_index"]): task for task, row in tasks.iterrows()}
    ranged = LeRobotDataset.create(
        repo_id="local/identify-range", fps=info["fps"], features=features, root=root, robot_type=info["robot_type"],
        use_videos=False,
    )
    for _, frames in data.sort_values("index").groupby("episode_index"):
        actions = degrees_to_range(np.stack(frames["action"].to_numpy()))
        states = degrees_to_range(np.stack(frames["observation.state"].to_numpy()))
        for action, state, task in zip(actions, states, frames["task_index"]):
            ranged.add_frame({"action": action, "observation.state": state, "task": task_of[int(task)]})
        ranged.save_episode()
    ranged.finalize()
    return root


def test_a_dataset_in_range_units_gives_the_figures_of_its_degrees_original(
    datasets: dict[str, Path], fakesim_bin: str, tmp_path: Path
):
    calibration = tmp_path / "arm.json"
    calibration.write_text(json.dumps({motor: dataclasses.asdict(c) for motor, c in CALIBRATION.items()}, indent=4))
    ranged = to_range(datasets["two"], tmp_path / "two-range")
    degrees, _ = tiny_figures(fakesim_bin, datasets["two"], tmp_path, "degrees", "--calibration", str(calibration))
    ranges, _ = tiny_figures(
        fakesim_bin, ranged, tmp_path, "range", "--units", "range", "--calibration", str(calibration)
    )
    # The frames are float32 roundings of other numbers in either unit: rounding moves a value
    # under 100 by at most 4e-6 of its unit, under 0.13 µrad of joint angle in either (a degree;
    # a hundredth of the widest range, a turn), so every reading and goal agrees to that and each
    # RMS figure within 1 µrad (a thousandth of a servo step). A reading off by more than that, as one through another
    # calibration or with elbow_flex not turned round would be, moves them by milliradians.
    assert ranges["seconds"] == degrees["seconds"]
    assert ranges["kept"] == degrees["kept"]
    for motor in MOTORS:
        for key in ("train_rms_rad", "validation_rms_rad"):
            expected = pytest.approx(degrees["joints"][motor][key], rel=0, abs=1e-6)
            assert ranges["joints"][motor][key] == expected, (motor, key)
        # Perturbations that small change no ranking of the strategies' candidates: the same fit.
        for name, parameter in degrees["joints"][motor]["parameters"].items():
            fitted = ranges["joints"][motor]["parameters"][name]["fitted"]
            assert fitted == pytest.approx(parameter["fitted"], rel=1e-9), (motor, name)
