"""What the LeRobot tests share: LeRobot's directories, a virtual so101_leader (or the two buses of
a bi_so_leader), LeRobot's console scripts, and the daemon's record of each run (its journal and
summary.json)."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from lerobot.teleoperators.so_leader import SO101Leader, SO101LeaderConfig
from processes import start_emulator
from slow_host import lerobot_environment

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
    process, device = start_emulator(fakesim_bin, leader_calibration(lerobot_home))
    yield device
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)


def lerobot_cli(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Runs one of LeRobot's console scripts, unchanged, from this environment (with the tests'
    reply window, `slow_host`)."""
    done = subprocess.run(
        [str(BIN / name), *args], capture_output=True, text=True, timeout=900, env=lerobot_environment()
    )
    assert done.returncode == 0, f"{name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-12000:]}"
    return done


def leader_calibration(home: Path, leader_id: str = "virtual") -> Path:
    """Where LeRobot finds the calibration of SO leader ``leader_id`` (a bi_so_leader's arms:
    ``ID_left``, ``ID_right``)."""
    return home / "calibration" / "teleoperators" / "so_leader" / f"{leader_id}.json"


def leader_reading(port: str, home: Path, leader_id: str = "virtual") -> list[float]:
    """What LeRobot's own so101_leader, calibrated as ``leader_id``, reads from the virtual bus
    now, in action order."""
    calibration = leader_calibration(home, leader_id)
    leader = SO101Leader(SO101LeaderConfig(port=port, id=leader_id, calibration_dir=calibration.parent))
    leader.connect(calibrate=False)
    try:
        action = leader.get_action()
    finally:
        leader.disconnect()
    return [action[f"{motor}.pos"] for motor in MOTORS]


@dataclass(frozen=True)
class Run:
    """One daemon run as its artifacts tell it."""

    run: str
    #: The layout it started on.
    layout: int
    #: Its step budget, control ticks (None: none).
    max_steps: int | None
    #: Twin time its ticks advanced, seconds (their periods, as the journal records them).
    twin_time_s: float
    #: Its control ticks.
    ticks: int
    #: Its summary.json.
    summary: dict


def runs_of(runs_dir: Path) -> list[Run]:
    """The daemon's runs in the order they started."""
    found = []
    for events_file in runs_dir.glob("*/events.jsonl"):
        events = [json.loads(line) for line in events_file.read_text().splitlines()]
        reset = next(event for event in events if event["kind"] == "reset_task")
        ticks = [e for e in events if e["kind"] == "robot_call" and e["call"] == "tick"]
        summary = json.loads((events_file.parent / "summary.json").read_text())
        run = Run(
            run=reset["run"],
            layout=reset["task"]["init_state_index"],
            max_steps=reset["max_steps"],
            # A tick without a period of its own runs the one in force, journaled at the reset.
            twin_time_s=sum(tick["request"].get("period_s") or reset["control_period_s"] for tick in ticks),
            ticks=len(ticks),
            summary=summary,
        )
        found.append((reset["t"], run))
    return [run for _, run in sorted(found, key=lambda item: item[0])]


def teleop_arguments(leader: str | tuple[str, str]) -> list[str]:
    """LeRobot's arguments for the virtual leader ``virtual``: an so101_leader on a bus, or a
    bi_so_leader on a left and a right bus (calibrated as ``virtual_left``, ``virtual_right``)."""
    if isinstance(leader, str):
        return ["--teleop.type=so101_leader", f"--teleop.port={leader}", "--teleop.id=virtual"]
    left, right = leader
    return [
        "--teleop.type=bi_so_leader",
        f"--teleop.left_arm_config.port={left}",
        f"--teleop.right_arm_config.port={right}",
        "--teleop.id=virtual",
    ]


def lerobot_record(
    address: str, leader: str | tuple[str, str], root: Path, repo_id: str, *robot: str, episodes: int, seconds: float,
    reset_s: float = 0, fps: int = 30, robot_type: str = "fakesim_hil", task: str = "lift the red cube",
) -> subprocess.CompletedProcess[str]:
    """LeRobot's lerobot-record at ``fps`` on the plugin's ``robot_type`` (``robot``: more of its
    arguments), led by the virtual leader (`teleop_arguments`), the dataset kept local and quiet."""
    return lerobot_cli(
        "lerobot-record",
        f"--robot.type={robot_type}",
        f"--robot.address={address}",
        *robot,
        *teleop_arguments(leader),
        f"--dataset.repo_id={repo_id}",
        f"--dataset.root={root}",
        "--dataset.no_stamp=true",
        f"--dataset.num_episodes={episodes}",
        f"--dataset.episode_time_s={seconds}",
        f"--dataset.reset_time_s={reset_s}",
        f"--dataset.fps={fps}",
        "--dataset.push_to_hub=false",
        f"--dataset.single_task={task}",
        "--display_data=false",
        "--play_sounds=false",
    )


def train_act(root: Path, repo_id: str, output: Path, steps: int = 1, *extra: str) -> Path:
    """``steps`` steps of a small ACT (32-wide, chunks of 4, a random backbone, CPU: a policy
    LeRobot runs, not one that learns) with lerobot-train on a dataset; the saved policy's
    directory. ``extra`` arguments go to lerobot-train as they are."""
    lerobot_cli(
        "lerobot-train",
        f"--dataset.repo_id={repo_id}",
        f"--dataset.root={root}",
        *extra,
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
        f"--steps={steps}",
        "--batch_size=2",
        "--num_workers=0",
        f"--save_freq={steps}",
        "--wandb.enable=false",
        f"--output_dir={output}",
    )
    return output / "checkpoints" / "last" / "pretrained_model"


#: Goal_Position in the STS3215 control table (2 bytes, little-endian steps).
GOAL_POSITION = 42
#: The daemon's default per-tick delta cap in hil (rad), in servo steps (4096 a turn).
DELTA_CAP_STEPS = 0.35 * 4096 / (2 * math.pi)


def goal_writes(log: Path) -> list[dict]:
    """The Goal_Position writes in emulate's write log, each with the servo's position just before."""
    goals = []
    for line in log.read_text().splitlines():
        record = json.loads(line)
        offset = GOAL_POSITION - record["addr"]
        if 0 <= offset and offset + 2 <= len(record["data"]):
            low, high = record["data"][offset : offset + 2]
            goals.append({**record, "goal": low | high << 8})
    return goals
