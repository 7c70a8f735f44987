"""LeRobot's own lerobot-record, lerobot-replay, lerobot-train and lerobot-rollout on the twin, with
the plugin's defaults at LeRobot's 30 fps: each recorded episode is a daemon run of its own whose
twin time is the episode's dataset time."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from lerobot.datasets import LeRobotDataset
from lerobot_support import (  # noqa: F401
    MOTORS,
    Run,
    lerobot_cli,
    lerobot_home,
    lerobot_record,
    runs_of,
    train_act,
    virtual_leader,
)

from fakesim_hil import Client

FPS = 30
EPISODE_S = 4
# LeRobot's loop counts an episode's frames by wall time, so how many it gets is the machine's
# speed (3 of 30 fps seen at a load average of 8 on 2 cores): the rate is measured in
# python/bench/lerobot_loop.py (figures in docs/src/benchmarks.md), not here. What the product
# answers for is held exactly, whatever the count: every frame of the dataset is one tick the
# daemon served in that episode's run (none lost, none extra; the run has one more, its first
# observation's physics step), and the twin ran 1/fps per frame.


@dataclass(frozen=True)
class Recording:
    """A dataset lerobot-record made on a daemon of its own, and the runs it left."""

    address: str
    root: Path
    repo_id: str
    runs: list[Run]
    timestep_s: float


def episode_lengths(dataset: LeRobotDataset) -> list[int]:
    """Frames of each episode of a dataset, in episode order."""
    return [int(episode["length"]) for episode in dataset.meta.episodes]


@pytest.fixture(scope="module")
def recording(daemon_factory, virtual_leader: str, lerobot_home: Path) -> Recording:
    """Two 4 s episodes with a 1 s reset phase between them, the plugin's default cameras."""
    daemon = daemon_factory()
    root = lerobot_home / "datasets" / "twin"
    lerobot_record(daemon.address, virtual_leader, root, "local/fakesim_twin", episodes=2, seconds=EPISODE_S, reset_s=1)
    with Client(daemon.address) as twin:
        timestep_s = twin.model_info().timestep_s
    return Recording(daemon.address, root, "local/fakesim_twin", runs_of(daemon.runs_dir), timestep_s)


def test_each_episode_holds_its_frames_and_is_a_run_whose_twin_time_is_its_dataset_time(recording: Recording) -> None:
    dataset = LeRobotDataset(recording.repo_id, root=recording.root, video_backend="pyav")
    assert dataset.num_episodes == 2
    lengths = episode_lengths(dataset)
    for length in lengths:
        assert 1 <= length <= FPS * EPISODE_S + 3, f"episode lengths {lengths} at {FPS} fps for {EPISODE_S} s"
    for camera in ("agentview", "robot0_eye_in_hand"):
        assert tuple(dataset.features[f"observation.images.{camera}"]["shape"]) == (256, 256, 3)
    assert dataset.features["action"]["names"] == [f"{m}.pos" for m in MOTORS]

    # One run per episode, the reset phase in none; successive layouts, no step budget.
    runs = recording.runs
    assert [run.layout for run in runs] == [0, 1]
    assert [run.max_steps for run in runs] == [None, None]
    for run, length in zip(runs, lengths):
        assert run.summary["status"] == "stopped" and "validation" in run.summary
        # One tick per frame's action, and the one physics step of the episode's first
        # observation (taken before any action, see FakesimHil.get_observation).
        assert run.ticks == length + 1, f"run {run.run}: {run.ticks} ticks served for an episode of {length} frames"
        assert abs(run.twin_time_s - length / FPS) <= recording.timestep_s, (run.twin_time_s, length)


def test_replays_bring_the_twin_to_the_last_action_and_give_identical_states(recording: Recording) -> None:
    dataset = LeRobotDataset(recording.repo_id, root=recording.root, episodes=[1], video_backend="pyav")
    last_action = dataset[len(dataset) - 1]["action"].numpy()
    states = []
    for _ in range(2):
        lerobot_cli(
            "lerobot-replay",
            "--robot.type=fakesim_hil",
            f"--robot.address={recording.address}",
            "--robot.camera_names=[]",
            f"--dataset.repo_id={recording.repo_id}",
            f"--dataset.root={recording.root}",
            "--dataset.episode=1",
            "--play_sounds=false",
        )
        with Client(recording.address) as twin:
            state = twin.robot_state("lerobot_degrees")
        np.testing.assert_allclose(state.ctrl_targets, last_action, atol=0.1)
        states.append((list(state.positions), list(state.velocities), list(state.ctrl_targets)))
    assert states[0] == states[1], "two replays of one episode end in the same state, bit for bit"


def test_a_policy_trained_on_the_recording_runs_on_the_twin_with_lerobot_rollout(recording: Recording, lerobot_home: Path) -> None:
    trained = train_act(recording.root, recording.repo_id, lerobot_home / "train", 2, "--dataset.video_backend=pyav")
    with Client(recording.address) as twin:
        twin.reset("so101_tabletop", 0, 0)
        home = twin.robot_state("lerobot_degrees").ctrl_targets
        twin.stop()
    lerobot_cli(
        "lerobot-rollout",
        "--strategy.type=base",
        f"--policy.path={trained}",
        "--robot.type=fakesim_hil",
        f"--robot.address={recording.address}",
        "--task=lift the red cube",
        "--duration=1",
        f"--fps={FPS}",
        "--return_to_initial_position=false",
        "--play_sounds=false",
    )
    with Client(recording.address) as twin:
        after = twin.robot_state("lerobot_degrees").ctrl_targets
    assert max(abs(a - b) for a, b in zip(after, home)) > 1, "the policy moved the twin from home"


def test_a_60_s_episode_records_to_its_end(daemon_factory, virtual_leader: str, lerobot_home: Path) -> None:
    # Without cameras, to keep CI short: the length is the daemon's budget's business, not the frames'.
    daemon = daemon_factory()
    root = lerobot_home / "datasets" / "long"
    lerobot_record(daemon.address, virtual_leader, root, "local/fakesim_long", "--robot.camera_names=[]", episodes=1, seconds=60)
    dataset = LeRobotDataset("local/fakesim_long", root=root)
    (length,) = episode_lengths(dataset)
    assert 300 < length <= 60 * FPS + 3, f"{length} frames: more than the agent tools' 300-tick budget"
    (run,) = runs_of(daemon.runs_dir)
    assert run.max_steps is None and run.summary["steps"] == run.ticks > 300, "past the agent tools' 300-tick budget"
    with Client(daemon.address) as twin:
        timestep_s = twin.model_info().timestep_s
    assert abs(run.twin_time_s - length / FPS) <= timestep_s
