"""The robot plugin without --robot.address: it starts a daemon of its own at connect (twin-only,
or driving the arm on --robot.port) from the binary it finds as the wheel's users find it, and
stops it at disconnect."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from lerobot.robots.config import RobotConfig
from lerobot.robots.utils import make_robot_from_config
from lerobot.utils.import_utils import register_third_party_plugins
from lerobot_support import lerobot_cli, lerobot_home, teleop_arguments, virtual_leader  # noqa: F401 (fixtures)
from processes import start_emulator

from fakesim_hil import Client


def robot_config(**settings):
    """The plugin's config, found as LeRobot finds it."""
    register_third_party_plugins()
    return RobotConfig.get_choice_class("fakesim_hil")(camera_names=[], **settings)


def test_without_an_address_the_robot_runs_a_twin_daemon_of_its_own_for_as_long_as_it_is_connected(
    lerobot_home: Path, fakesim_bin: str
) -> None:
    # The daemon is found as find_binary finds it: $FAKESIM_HIL_BIN here (the tests' build).
    assert os.environ.get("FAKESIM_HIL_BIN") == fakesim_bin
    robot = make_robot_from_config(robot_config(calibration_dir=lerobot_home / "scratch"))
    robot.connect()
    own = robot._own
    try:
        assert own is not None
        observation = robot.get_observation()
        sent = robot.send_action({key: observation[key] for key in robot.action_features})
        with Client(own.address) as twin:
            assert twin.status().port == ""
            assert twin.robot_state("lerobot_degrees").ctrl_targets[2] == pytest.approx(sent["elbow_flex.pos"], abs=0.1)
    finally:
        robot.disconnect()
    assert own.daemon.process.poll() == 0, "the daemon stopped with the robot, cleanly"
    kept = Path(own.runs_dir)
    assert kept.parent == lerobot_home / "home" / "fakesim_hil" / "runs", "under LeRobot's home"
    assert (kept / "daemon.log").is_file(), "its runs directory stays after it"
    assert robot._own is None


def test_lerobot_record_with_the_robots_own_daemon_names_summaries_that_outlive_it(
    lerobot_home: Path, virtual_leader: str
) -> None:
    # LeRobot's own lerobot-record, no --robot.address and no --robot.id: the robot starts its
    # daemon, each episode ends naming its summary.json, and the command ends with the daemon.
    root = lerobot_home / "datasets" / "own_daemon"
    done = lerobot_cli(
        "lerobot-record",
        "--robot.type=fakesim_hil",
        "--robot.camera_names=[]",
        *teleop_arguments(virtual_leader),
        "--dataset.repo_id=local/fakesim_own",
        f"--dataset.root={root}",
        "--dataset.num_episodes=2",
        "--dataset.episode_time_s=1",
        "--dataset.reset_time_s=0",
        "--dataset.fps=30",
        "--dataset.push_to_hub=false",
        "--dataset.single_task=lift the red cube",
        "--display_data=false",
        "--play_sounds=false",
    )
    log = done.stdout + done.stderr
    assert "None FakesimHil" not in log, log[-3000:]
    summaries = [Path(path) for path in re.findall(r"FakesimHil: run \S+ ended \(success \w+\), report in (\S+)", log)]
    assert len(summaries) == 2, log[-3000:]
    for summary in summaries:
        assert summary.is_file(), f"{summary} is gone after lerobot-record ended"
        assert json.loads(summary.read_text())["status"] == "stopped"
        assert summary.parents[2] == lerobot_home / "home" / "fakesim_hil" / "runs"
    kept = re.search(r"FakesimHil: started a daemon of its own; its runs are kept in (\S+)", log)
    assert kept is not None and Path(kept.group(1)) == summaries[0].parents[1], log[-3000:]


def test_with_a_port_the_robots_own_daemon_drives_that_arm_with_the_robots_calibration(
    lerobot_home: Path, fakesim_bin: str, tmp_path: Path
) -> None:
    # The follower's calibration where the daemon's --robot-id looks for it (LeRobot's directory).
    calibration = lerobot_home / "calibration" / "robots" / "so_follower" / "bench_arm.json"
    calibration.parent.mkdir(parents=True, exist_ok=True)
    emulator, device = start_emulator(fakesim_bin, calibration)
    try:
        robot = make_robot_from_config(
            robot_config(port=device, id="bench_arm", runs_dir=str(tmp_path / "runs"), calibration_dir=tmp_path)
        )
        robot.connect()
        try:
            with Client(robot._own.address) as daemon:
                assert daemon.status().port == device
            observation = robot.get_observation()
            assert set(robot.action_features) <= set(observation)
        finally:
            robot.disconnect()
        assert (tmp_path / "runs" / "daemon.log").is_file(), "a runs directory given is kept"
    finally:
        emulator.terminate()
        emulator.wait(timeout=30)


def test_a_port_with_an_address_is_refused_naming_whose_ports_they_are(lerobot_home: Path) -> None:
    with pytest.raises(ValueError, match="has its ports already"):
        robot_config(address="127.0.0.1:1", port="/dev/ttyACM0")
