"""LeRobot's own lerobot-record in hil: the daemon drives a virtual SO-101 (`fakesim-hil emulate`)
through its safety layers, LeRobot's so101_leader on another virtual bus leads, and a LeRobot
camera (its ZMQCamera, fed on loopback) is recorded alone, as a real camera would be."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from camera_server import SolidColourCamera
from lerobot.datasets import LeRobotDataset
from lerobot_support import leader_reading, lerobot_home, lerobot_record, runs_of, virtual_leader  # noqa: F401



def test_lerobot_record_in_hil_sends_every_frame_through_the_pipeline_and_records_the_real_camera(
    emulate, daemon_factory, virtual_leader: str, lerobot_home: Path
) -> None:
    bus = emulate()
    daemon = daemon_factory("--port", bus.device, "--calibration", str(bus.calibration_path), "--mode", "hil")
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
    # pose the episode starts at: the layers capped the first goals' jumps, and the watchdog never
    # held the arm (the plugin ticks from the episode's start).
    np.testing.assert_allclose(dataset[frames - 1]["action"].numpy(), leader_reading(virtual_leader, lerobot_home), atol=0.1)
    (run,) = runs_of(daemon.runs_dir)
    assert run.ticks == frames + 1
    events = [json.loads(line) for line in (daemon.runs_dir / run.run / "events.jsonl").read_text().splitlines()]
    safety = {event["safety"]["event"] for event in events if event["kind"] == "safety"}
    assert "delta_capped" in safety and "watchdog_hold" not in safety, safety
