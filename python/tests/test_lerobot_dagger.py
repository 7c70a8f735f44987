"""DAgger on the twin with LeRobot's own ``lerobot-rollout --strategy.type=dagger``: a policy drives
the twin, a person takes over with the leader arm and the corrections are recorded as episodes.

The person is a virtual SO-101 leader moved by a scripted hand (`fakesim-hil emulate --script`),
read by LeRobot's own so101_leader; the keys are LeRobot's own terminal listener's, pressed on the
pseudo-terminal the command runs in (no display: LeRobot reads the keys from its TTY, which needs
no X server). A tiny ACT policy trained on one scripted episode drives the twin; the dataset of
corrections then trains ACT again."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from lerobot.datasets import LeRobotDataset
from lerobot.teleoperators.so_leader import SO101Leader, SO101LeaderConfig
from lerobot_support import BIN, MOTORS, lerobot_cli, lerobot_home, train_act  # noqa: F401
from scripted_hand import ON_PATH, leader_flags, off_path, write_waypoints
from slow_host import lerobot_environment

from fakesim_hil import Client

FPS = 15
CORRECTIONS = 2
# The person's hand on the leader, in LeRobot's units (joints 1-5 in degrees about the middle of the
# calibrated range, the gripper 0..100): a slow loop, 4 s a pass.
HAND = np.array(
    [
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 30.0],
        [1.5, 20.0, -12.0, 15.0, -15.0, 30.0, 50.0],
        [3.0, -20.0, 8.0, -10.0, 15.0, -30.0, 10.0],
        [4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 30.0],
    ]
)
# Twin poses on the hand's path a correction waits for before it ends (LeRobot sends one per frame).
FOLLOWED = 12
# LeRobot's Goal_Position and Torque_Enable registers (STS3215 control table).
GOAL_POSITION, TORQUE_ENABLE = 42, 40
ROBOT = ["--robot.type=fakesim_hil", f"--robot.fps={FPS}", "--robot.camera_names=[agentview]"]
ROBOT += ["--robot.image_width=64", "--robot.image_height=64"]


class Rollout:
    """lerobot-rollout on a pseudo-terminal of its own (its keyboard), its log read line by line."""

    def __init__(self, args: list[str]) -> None:
        self._keys, terminal = os.openpty()
        # No display: LeRobot's listener falls back to reading its terminal.
        environment = {k: v for k, v in lerobot_environment().items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        self.process = subprocess.Popen(
            [str(BIN / "lerobot-rollout"), *args],
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=environment,
            start_new_session=True,
        )
        os.close(terminal)
        self.log: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def wait_for(self, pattern: str, timeout_s: float = 300.0) -> str:
        """The next log line matching ``pattern`` (fails if the command ends first)."""
        while True:
            line = self._lines.get(timeout=timeout_s)
            if line is None:
                self.process.wait()
                pytest.fail(f"lerobot-rollout ended ({self.process.returncode}) before {pattern!r}:\n{''.join(self.log)[-8000:]}")
            self.log.append(line)
            if re.search(pattern, line):
                return line

    def press(self, key: str) -> None:
        """Types one key on the command's terminal."""
        os.write(self._keys, key.encode())

    def finish(self, timeout_s: float = 300.0) -> None:
        """Waits for the command to end on its own, successfully."""
        self.wait_for(r"DAgger strategy teardown complete", timeout_s)
        assert self.process.wait(timeout=timeout_s) == 0, "".join(self.log)[-8000:]
        os.close(self._keys)

    def kill(self) -> None:
        """Ends the command if it still runs (a failed test)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def twin_targets(twin: Client) -> np.ndarray:
    """The twin's joint targets now, in LeRobot's degrees."""
    return np.array(twin.robot_state("lerobot_degrees").ctrl_targets)


def wait_until(twin: Client, condition, what: str, timeout_s: float = 300.0) -> np.ndarray:
    """The twin's targets once ``condition(targets)`` holds, checked at the pace of its joint-state stream."""
    for _ in twin.joint_states(20.0):
        targets = twin_targets(twin)
        if condition(targets):
            return targets
    pytest.fail(f"the twin never {what}")


def follow_hand(twin: Client) -> None:
    """Waits until the twin's targets have taken ``FOLLOWED`` distinct poses on the hand's path."""
    seen: set[tuple[float, ...]] = set()

    def on_path(targets: np.ndarray) -> bool:
        if off_path(targets[None], HAND[:, 1:])[0] <= ON_PATH:
            seen.add(tuple(targets))
        return len(seen) >= FOLLOWED

    wait_until(twin, on_path, f"followed the hand through {FOLLOWED} poses")


def leader_goals(write_log: Path) -> list[dict]:
    """The leader's register writes LeRobot made, in bus order (the emulator's write log)."""
    return [json.loads(line) for line in write_log.read_text().splitlines()]


def handover_goals(writes: list[dict]) -> dict[int, int]:
    """Each servo's last Goal_Position of the first hand-over: written with torque on, before the
    correction turned the torque off."""
    goals: dict[int, int] = {}
    for write in writes:
        if write["addr"] == GOAL_POSITION:
            data = write["data"]
            goals[write["id"]] = data[0] | (data[1] << 8)
        elif write["addr"] == TORQUE_ENABLE and write["data"][0] == 0 and goals:
            return goals
    pytest.fail("no Goal_Position write before the correction's torque off")


@pytest.fixture
def dagger(emulate, daemon_factory, lerobot_home: Path, tmp_path: Path) -> Iterator[tuple]:
    """The virtual leader (its write log kept), a daemon, and a policy trained on one scripted episode."""
    write_log = tmp_path / "leader-writes.jsonl"
    leader = emulate("--script", str(write_waypoints(tmp_path / "hand.csv", HAND)), "--script-loop", "--write-log", str(write_log))
    daemon = daemon_factory()
    first = tmp_path / "first"
    lerobot_cli(
        "lerobot-record",
        *ROBOT,
        f"--robot.address={daemon.address}",
        *leader_flags(leader),
        "--dataset.repo_id=local/fakesim_first",
        f"--dataset.root={first}",
        "--dataset.num_episodes=1",
        "--dataset.episode_time_s=1",
        "--dataset.reset_time_s=0",
        f"--dataset.fps={FPS}",
        "--dataset.push_to_hub=false",
        "--dataset.single_task=follow the hand",
        "--display_data=false",
        "--play_sounds=false",
    )
    policy = train_act(first, "local/fakesim_first", tmp_path / "policy")
    yield leader, write_log, daemon, policy


def test_dagger_records_the_leaders_corrections_after_a_smooth_handover_and_they_train_act(dagger, tmp_path: Path) -> None:
    leader, write_log, daemon, policy = dagger
    root = tmp_path / "corrections"
    rollout = Rollout(
        [
            "--strategy.type=dagger",
            f"--strategy.num_episodes={CORRECTIONS}",
            f"--policy.path={policy}",
            *ROBOT,
            f"--robot.address={daemon.address}",
            *leader_flags(leader),
            "--dataset.repo_id=local/rollout_fakesim_dagger",
            f"--dataset.root={root}",
            f"--dataset.fps={FPS}",
            "--dataset.push_to_hub=false",
            "--dataset.single_task=follow the hand",
            f"--fps={FPS}",
            "--return_to_initial_position=false",
            "--play_sounds=false",
        ]
    )
    try:
        with Client(daemon.address) as twin:
            rollout.wait_for(r"Using terminal keyboard input")
            rollout.wait_for(r"DAgger corrections-only recording started")
            # The policy drives: its first actions move the twin off the pose it started in.
            start = twin_targets(twin)
            wait_until(twin, lambda targets: np.abs(targets - start).max() > 0.5, "moved under the policy")
            rollout.press(" ")
            rollout.wait_for(r"Phase transition: autonomous -> paused")
            held = twin_targets(twin)
            for correction in range(1, CORRECTIONS + 1):
                rollout.press("\t")
                rollout.wait_for(r"Phase transition: paused -> correcting")
                follow_hand(twin)
                rollout.press("\t")
                rollout.wait_for(rf"Correction {correction}/{CORRECTIONS} saved")
            rollout.finish()
    finally:
        rollout.kill()

    # The hand-over: LeRobot drove the leader to the pose the twin held when paused.
    leader.stop()
    calibration = leader.calibration_path
    bus = SO101Leader(SO101LeaderConfig(port=leader.device, id=calibration.stem, calibration_dir=calibration.parent)).bus
    expected = bus._unnormalize({bus.motors[motor].id: value for motor, value in zip(MOTORS, held)})
    goals = handover_goals(leader_goals(write_log))
    for servo, steps in expected.items():
        assert abs(goals[servo] - steps) <= 1, f"servo {servo}: leader brought to {goals[servo]}, twin held {steps}"

    # The corrections: one episode each, every frame an intervention, the actions the hand's.
    dataset = LeRobotDataset("local/rollout_fakesim_dagger", root=root, video_backend="pyav")
    assert dataset.num_episodes == CORRECTIONS
    assert "intervention" in dataset.features
    lengths = [int(episode["length"]) for episode in dataset.meta.episodes]
    assert min(lengths) >= FOLLOWED // 2, f"correction lengths {lengths}, the twin followed {FOLLOWED} poses in each"
    frames = dataset.hf_dataset.with_format("numpy")[:]
    assert frames["intervention"].all()
    actions = np.stack(frames["action"])
    assert len(np.unique(actions, axis=0)) >= 0.9 * len(actions), "the hand moves the leader through the corrections"
    distances = off_path(actions, HAND[:, 1:])
    assert distances.max() <= ON_PATH, f"a correction's action {distances.max():.2f} off the hand's path"

    train_act(root, "local/rollout_fakesim_dagger", tmp_path / "retrained")
