"""The live view (`--live-view save=PATH.rrd`) read back with Rerun's own SDK from PyPI (rerun-sdk 0.33,
the minor LeRobot 0.6.1's `rerun-sdk<0.34` pin installs): entity paths, rows per timeline, values.

Needs a daemon built with `--features live-view` (scripts/test-all builds it so)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# rerun-sdk==0.33.1 (and pyarrow with it) is in python/requirements-test.txt once the test
# environment has LeRobot 0.6.1, whose `rerun-sdk<0.34` it matches; LeRobot 0.4.4 pins <0.27.
pytest.importorskip("rerun", minversion="0.33", reason="rerun-sdk==0.33.1 is not in the test environment")
import pyarrow as pa  # noqa: E402
from rerun.experimental import RrdReader  # noqa: E402

from fakesim.v1 import session_pb2  # noqa: E402
from fakesim_hil import Client  # noqa: E402

JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
ARM_BODIES = ["shoulder", "upper_arm", "lower_arm", "wrist", "gripper", "moving_jaw"]
#: Columns every chunk carries besides its data: the row id and Rerun's own log_tick and log_time.
SDK_COLUMNS = {"rerun.controls.RowId", "log_tick", "log_time"}


def plain(column: pa.Array) -> list:
    """A column as Python values; timestamps as nanoseconds since the epoch."""
    if pa.types.is_timestamp(column.type):
        column = column.cast(pa.int64())
    return column.to_pylist()


@dataclass
class Recording:
    """A .rrd file's rows per entity path (static ones apart), as plain Python values."""

    rows: dict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))
    static: set[str] = field(default_factory=set)

    @classmethod
    def read(cls, path: Path) -> Recording:
        recording = cls()
        for chunk in RrdReader(str(path)).store().stream():
            if chunk.is_static:
                recording.static.add(chunk.entity_path)
                continue
            batch = chunk.to_record_batch()
            columns = {name: plain(batch.column(name)) for name in batch.schema.names if name not in SDK_COLUMNS}
            for i in range(batch.num_rows):
                recording.rows[chunk.entity_path].append({name: values[i] for name, values in columns.items()})
        return recording

    def on(self, entity: str, timeline: str) -> list[dict]:
        """The entity's rows on a timeline, in its order."""
        rows = [row for row in self.rows.get(entity, []) if row.get(timeline) is not None]
        return sorted(rows, key=lambda row: row[timeline])

    def scalars(self, entity: str, timeline: str) -> list[float]:
        return [row["Scalars:scalars"][0] for row in self.on(entity, timeline)]

    def texts(self, entity: str) -> list[str]:
        return [row["TextLog:text"][0] for row in self.rows.get(entity, [])]


def control_period(client: Client) -> float:
    info = client.model_info()
    return 1.0 / info.control_rate_hz


def test_a_saved_session_reads_back_with_its_ticks_move_and_robot_state(tmp_path: Path, daemon_factory) -> None:
    recording_file = tmp_path / "live.rrd"
    daemon = daemon_factory("--live-view", f"save={recording_file}")
    try:
        with Client(daemon.address) as client:
            client.wait_ready()
            client.reset()
            action = list(client.robot_state().ctrl_targets)
            for _ in range(50):
                action[0] += 0.004
                client.tick(action)
            start_tcp = client.robot_state().tcp.position_m
            moved = client.move(dz=0.03)
            state = client.robot_state()
            degrees = client.robot_state("lerobot_degrees")
            period = control_period(client)
            client.stop()
    finally:
        daemon.stop()
    assert daemon.process.returncode == 0
    rec = Recording.read(recording_file)

    # Entity paths: LeRobot's names for the joints and cameras, the daemon's own beside them.
    for body in ARM_BODIES:
        assert f"/world/twin/{body}" in rec.rows, body
    assert any(path.startswith("/world/twin/gripper/") for path in rec.static), "the arm's geometry is logged once"
    assert {"/world/scene/cube_red", "/world/scene/cube_blue"} <= set(rec.rows)
    assert any(path.startswith("/world/scene/table/") for path in rec.static), "the table"
    for joint in JOINTS:
        for path in (f"/observation.{joint}.pos", f"/action.{joint}.pos", f"/joints/{joint}/twin"):
            assert path in rec.rows, path
    assert {"/observation.agentview", "/observation.robot0_eye_in_hand"} <= set(rec.rows), "the episode's frames"
    assert not any(path.startswith(("/world/real", "/world/predicted", "/joints/shoulder_pan/real")) for path in rec.rows), (
        "sim-only: no real arm"
    )

    # Rows per timeline: one per control tick of the twin, from its start (tick 0) through the
    # reset's settling, the 50 ticks and the move's steps; every one on wall time too; no readings.
    last_tick = round(state.time_s / period)
    assert last_tick >= 50 + moved.action.executed_steps
    for path in ("/joints/shoulder_pan/twin", "/observation.gripper.pos", "/action.elbow_flex.pos"):
        ticks = [row["tick"] for row in rec.on(path, "tick")]
        assert ticks == list(range(last_tick + 1)), (path, ticks[:5], ticks[-5:], last_tick)
        assert len(rec.on(path, "wall_time")) == len(rec.rows[path]), path
        assert rec.on(path, "reading") == []

    # The 3D scene at most every 20 ms of wall time, and always the last tick's.
    posed = [row["tick"] for row in rec.on("/world/twin/wrist", "tick")]
    assert 1 <= len(posed) <= last_tick + 1 and posed[-1] == last_tick, posed

    # Values: the last tick's joints are GetRobotState's, in radians and in LeRobot's degrees.
    for i, joint in enumerate(JOINTS):
        assert rec.scalars(f"/joints/{joint}/twin", "tick")[-1] == pytest.approx(state.positions[i], abs=1e-12), joint
        assert rec.scalars(f"/observation.{joint}.pos", "tick")[-1] == pytest.approx(degrees.positions[i], abs=1e-9), joint
        assert rec.scalars(f"/action.{joint}.pos", "tick")[-1] == pytest.approx(degrees.ctrl_targets[i], abs=1e-9), joint

    # The move: its target, the TCP's path ending where GetRobotState has it, its stop reason.
    target = rec.on("/world/move_target", "wall_time")
    assert len(target) == 1
    expected = [start_tcp.x, start_tcp.y, start_tcp.z + 0.03]
    assert target[0]["Points3D:positions"][0] == pytest.approx(expected, abs=1e-6)
    path_end = rec.on("/world/tcp_path", "tick")[-1]["LineStrips3D:strips"][0][-1]
    tcp = state.tcp.position_m
    assert path_end == pytest.approx([tcp.x, tcp.y, tcp.z], abs=1e-6)
    reason = session_pb2.MoveStopReason.Name(moved.action.stop_reason).removeprefix("MOVE_STOP_REASON_").lower()
    episode = rec.texts("/events/episode")
    assert any(text.startswith(f"move: {reason} ") for text in episode), episode
    assert any(text.startswith("reset_task ") for text in episode), episode


@dataclass
class Drift:
    """What a mirrored run with an offset wrist gave: the drift the status reported, the readings
    the client's stream handed on before it did, the recording read back, and the updates the
    live view said it dropped (its log line at stop)."""

    rad: float
    streamed: int
    recording: Recording
    dropped: int

    def assert_readings_kept(self, residual: list[float]) -> None:
        """The live view hands a reading on every 10 ms, the client's stream one every 20 ms from
        the same bus: the recording holds at least as many as the stream gave, but for the updates
        the live view counted as dropped. A reading lost without being counted fails this."""
        assert len(residual) >= self.streamed - self.dropped, (len(residual), self.streamed, self.dropped)


def wait_for_drift(client: Client, joint: str, readings: int = 2000, arm: str = "") -> tuple[float, int]:
    """Follows the readings until the hardware status of ``arm`` (a pair's; empty: the arm alone)
    reports calibration drift on `joint` (the shadow needs 0.5 s of steady readings), and
    returns it (rad) with the number of readings the stream handed on until then."""
    samples = client.joint_states(rate_hz=50)
    try:
        for seen, _sample in zip(range(1, readings + 1), samples):
            for servo in client.status(arm).servos:
                if servo.label == joint and servo.HasField("calibration_drift_rad"):
                    return servo.calibration_drift_rad, seen
    finally:
        samples.close()
    pytest.fail(f"no calibration drift on {joint} within {readings} readings")


def dropped_updates(daemon) -> int:
    """The updates the daemon's live view said at stop it dropped (it says nothing when none)."""
    log = (Path(daemon.runs_dir) / "daemon.log").read_text(encoding="utf-8")
    counts = [int(count) for count in re.findall(r"updates dropped.*?dropped=(\d+)", log)]
    return sum(counts)


def recorded_wrist_roll_drift(daemon, recording_file: Path, arm: str = "") -> Drift:
    """Waits, in mirror, for the drift of ``arm``'s wrist roll (emulated 12 degrees off), stops the
    daemon, and returns what it gave."""
    try:
        with Client(daemon.address) as client:
            client.wait_ready()
            assert client.mode() == "mirror"
            drift, streamed = wait_for_drift(client, "wrist_roll", arm=arm)
    finally:
        daemon.stop()
    assert daemon.process.returncode == 0
    assert abs(drift) == pytest.approx(math.radians(12), abs=2 * math.tau / 4096)
    return Drift(drift, streamed, Recording.read(recording_file), dropped_updates(daemon))


def test_a_mirrored_arm_with_an_offset_wrist_records_its_residual_and_the_drift(
    tmp_path: Path, daemon_factory, emulate
) -> None:
    bus = emulate("--joint-offset", "wrist_roll=12")
    recording_file = tmp_path / "mirror.rrd"
    daemon = daemon_factory(
        "--port",
        bus.device,
        "--calibration",
        str(bus.calibration_path),
        "--live-view",
        f"save={recording_file}",
    )
    run = recorded_wrist_roll_drift(daemon, recording_file)
    drift, rec = run.rad, run.recording

    residual = rec.scalars("/joints/wrist_roll/residual", "reading")
    run.assert_readings_kept(residual)
    assert residual[-1] == pytest.approx(drift, abs=2 * math.tau / 4096)
    assert abs(rec.scalars("/joints/shoulder_pan/residual", "reading")[-1]) < 0.005
    for series in ("real", "predicted", "twin"):
        assert len(rec.on(f"/joints/wrist_roll/{series}", "reading")) == len(residual), series
    for arm in ("real", "predicted"):
        assert f"/world/{arm}/wrist" in rec.rows, arm
        assert any(path.startswith(f"/world/{arm}/gripper/") for path in rec.static), arm
    assert len(rec.on("/observation.wrist_roll.pos", "reading")) == len(residual)

    safety = rec.texts("/events/safety")
    drifts = [text for text in safety if text.startswith("calibration_drift ")]
    assert len(drifts) == 1 and "wrist_roll" in drifts[0], safety


def test_a_pair_logs_both_arms_under_lerobot_s_bimanual_names(tmp_path: Path, daemon_factory) -> None:
    recording_file = tmp_path / "pair.rrd"
    daemon = daemon_factory("--pair", "--live-view", f"save={recording_file}")
    try:
        with Client(daemon.address) as client:
            client.wait_ready()
            action = list(client.robot_state().ctrl_targets)
            assert len(action) == 12
            for _ in range(30):
                action[0] += 0.004  # the left arm's pan one way,
                action[6] -= 0.006  # the right arm's the other
                client.tick(action)
            state = client.robot_state()
            degrees = client.robot_state("lerobot_degrees")
    finally:
        daemon.stop()
    assert daemon.process.returncode == 0
    rec = Recording.read(recording_file)

    # Both arms' bodies in 3D (the model names them left/... and right/...), each its TCP path.
    for side in ("left", "right"):
        for body in ARM_BODIES:
            assert f"/world/twin/{side}/{body}" in rec.rows, (side, body)
        assert any(path.startswith(f"/world/twin/{side}/gripper/") for path in rec.static), side
        assert f"/world/tcp_path/{side}" in rec.rows, side
    # Joint scalars under LeRobot's bimanual keys (bi_so_follower's left_shoulder_pan.pos ...), the
    # last tick's values GetRobotState's: left's six first, then right's.
    for side_index, side in enumerate(("left", "right")):
        for i, joint in enumerate(JOINTS):
            key = f"{side}_{joint}"
            at = 6 * side_index + i
            assert rec.scalars(f"/joints/{key}/twin", "tick")[-1] == pytest.approx(state.positions[at], abs=1e-12), key
            observed = rec.scalars(f"/observation.{key}.pos", "tick")[-1]
            assert observed == pytest.approx(degrees.positions[at], abs=1e-9), key
            action_logged = rec.scalars(f"/action.{key}.pos", "tick")[-1]
            assert action_logged == pytest.approx(degrees.ctrl_targets[at], abs=1e-9), key
    assert not any(path.startswith(("/observation.shoulder_pan", "/joints/shoulder_pan/")) for path in rec.rows)
    # The two pans went apart, as ticked.
    left_pan = rec.scalars("/action.left_shoulder_pan.pos", "tick")
    right_pan = rec.scalars("/action.right_shoulder_pan.pos", "tick")
    assert left_pan[-1] > left_pan[0] and right_pan[-1] < right_pan[0], (left_pan[::10], right_pan[::10])


def test_a_mirrored_pair_records_each_arm_s_readings_and_names_the_arm_of_a_safety_event(
    tmp_path: Path, daemon_factory, emulate
) -> None:
    left = emulate()
    right = emulate("--joint-offset", "wrist_roll=12")
    recording_file = tmp_path / "mirror_pair.rrd"
    daemon = daemon_factory(
        "--left-port", left.device, "--left-calibration", str(left.calibration_path),
        "--right-port", right.device, "--right-calibration", str(right.calibration_path),
        "--live-view", f"save={recording_file}",
    )  # fmt: skip
    run = recorded_wrist_roll_drift(daemon, recording_file, arm="right")
    drift, rec = run.rad, run.recording

    # Each arm's readings on the reading timeline under its own keys; only the right one is off.
    right_residual = rec.scalars("/joints/right_wrist_roll/residual", "reading")
    left_residual = rec.scalars("/joints/left_wrist_roll/residual", "reading")
    run.assert_readings_kept(right_residual)
    run.assert_readings_kept(left_residual)
    assert right_residual[-1] == pytest.approx(drift, abs=2 * math.tau / 4096)
    assert abs(left_residual[-1]) < 0.005
    for side in ("left", "right"):
        assert len(rec.on(f"/observation.{side}_wrist_roll.pos", "reading")) > 0, side
        for arm in ("real", "predicted"):
            assert f"/world/{arm}/{side}/wrist" in rec.rows, (arm, side)
            assert any(path.startswith(f"/world/{arm}/{side}/gripper/") for path in rec.static), (arm, side)

    drifts = [text for text in rec.texts("/events/safety") if "calibration_drift " in text]
    assert len(drifts) == 1 and drifts[0].startswith("right: calibration_drift ") and "wrist_roll" in drifts[0], drifts
