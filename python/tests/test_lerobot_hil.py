"""LeRobot's own lerobot-record in hil: the daemon drives a virtual SO-101 (`fakesim-hil emulate`)
through its safety layers, LeRobot's so101_leader on another virtual bus leads, and a LeRobot
camera (its ZMQCamera, fed on loopback) is recorded alone, as a real camera would be."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from camera_server import SolidColourCamera
from lerobot.datasets import LeRobotDataset
from lerobot_support import (  # noqa: F401
    DELTA_CAP_STEPS,
    MOTORS,
    goal_writes,
    leader_reading,
    lerobot_home,
    lerobot_record,
    runs_of,
    virtual_leader,
)

#: The safety pipeline's watchdog timeout (s): a hold comes this long after the last command.
WATCHDOG_S = 1.0


def watchdog_holds_after_silence(events: list[dict]) -> bool:
    """Whether every watchdog hold in a run's journal came after a tick, once the client had been
    silent for the watchdog's timeout: after the recording ended, or while a starved machine held
    LeRobot's loop back; never between the episode's start and its first tick."""
    last_tick = None
    for event in events:
        if event["kind"] == "robot_call" and event.get("call") == "tick":
            last_tick = event["t"]
        elif event["kind"] == "safety" and event["safety"]["event"] == "watchdog_hold":
            # The journal stamps a tick once its goals are sent, a little after the command fed
            # the watchdog: allow a tenth of the timeout.
            if last_tick is None or event["t"] - last_tick < 0.9 * WATCHDOG_S:
                return False
    return True


def test_lerobot_record_in_hil_sends_every_frame_through_the_pipeline_and_records_the_real_camera(
    emulate, daemon_factory, virtual_leader: str, lerobot_home: Path
) -> None:
    write_log = lerobot_home / "hil-writes.jsonl"
    bus = emulate("--write-log", str(write_log))
    daemon = daemon_factory(*bus.follower_args, "--mode", "hil")
    root = lerobot_home / "datasets" / "hil"
    with SolidColourCamera("front", (30, 160, 220), 64, 48) as camera:
        lerobot_record(
            daemon.address,
            virtual_leader,
            root,
            "local/fakesim_hil",
            "--robot.mode=hil",
            "--robot.camera_names=[]",
            f"--robot.cameras={{{camera.config()}}}",
            episodes=1,
            seconds=2,
        )
    dataset = LeRobotDataset("local/fakesim_hil", root=root, video_backend="pyav")
    frames = dataset.num_frames
    assert frames > 0
    assert set(key for key in dataset.features if key.startswith("observation.images.")) == {"observation.images.front"}
    seen = dataset[frames - 1]["observation.images.front"].numpy()  # (3, H, W), 0..1
    np.testing.assert_allclose(seen.reshape(3, -1).mean(axis=1) * 255, camera.colour, atol=8)

    # Every frame's action, the leader's reading, was a Tick through the safety layers (plus the
    # episode's first observation, one holding the targets). The leader stands far from the home
    # pose the episode starts at: the layers capped the first goals' jumps, and the watchdog held
    # the arm only once the client fell silent (the plugin ticks from the episode's start).
    np.testing.assert_allclose(dataset[frames - 1]["action"].numpy(), leader_reading(virtual_leader, lerobot_home), atol=0.1)
    (run,) = runs_of(daemon.runs_dir)
    assert run.ticks == frames + 1
    events = [json.loads(line) for line in (daemon.runs_dir / run.run / "events.jsonl").read_text().splitlines()]
    safety = {event["safety"]["event"] for event in events if event["kind"] == "safety"}
    assert "delta_capped" in safety, safety
    assert watchdog_holds_after_silence(events), events

    # What reached the bus: every goal the daemon wrote was one the layers let through, within the
    # delta cap of where the servo stood and inside its calibrated range (LeRobot's so101_follower,
    # with no max_relative_target, would have written the leader's far pose at once). Each tick
    # wrote one goal round; holds (torque on, the watchdog after the recording) wrote the others.
    daemon.stop()
    bus.stop()
    goals = goal_writes(write_log)
    ids = {motor: bus.calibration[motor]["id"] for motor in MOTORS}
    rounds = sum(1 for goal in goals if goal["id"] == ids["shoulder_pan"])
    assert rounds >= run.ticks, (rounds, run.ticks)
    for motor, servo in ids.items():
        calibration = bus.calibration[motor]
        written = [goal for goal in goals if goal["id"] == servo]
        assert len(written) == rounds, (motor, len(written), rounds)
        for goal in written:
            assert calibration["range_min"] <= goal["goal"] <= calibration["range_max"], (motor, goal)
            assert abs(goal["goal"] - goal["present_before"]) <= DELTA_CAP_STEPS + 8, (motor, goal)
