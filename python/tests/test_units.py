"""LeRobot units on the API, converted by the daemon through the calibration (sim-only, --calibration)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import grpc
import pytest

from fakesim_hil import Client, FakesimError

LABELS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
#: A follower calibration in LeRobot's file format: off-centre ranges inside the twin's.
CALIBRATION = {
    "shoulder_pan": {"id": 1, "drive_mode": 0, "homing_offset": -12, "range_min": 800, "range_max": 3300},
    "shoulder_lift": {"id": 2, "drive_mode": 0, "homing_offset": 40, "range_min": 900, "range_max": 3200},
    "elbow_flex": {"id": 3, "drive_mode": 0, "homing_offset": 7, "range_min": 950, "range_max": 3150},
    "wrist_flex": {"id": 4, "drive_mode": 0, "homing_offset": -3, "range_min": 1000, "range_max": 3100},
    "wrist_roll": {"id": 5, "drive_mode": 0, "homing_offset": 100, "range_min": 0, "range_max": 4095},
    "gripper": {"id": 6, "drive_mode": 0, "homing_offset": 20, "range_min": 1590, "range_max": 2626},
}
#: The twin's gripper hinge range (rad), onto which LeRobot's 0..100 maps.
GRIPPER_RAD = (-0.174533, 1.7453292)
#: LeRobot's degrees scale: 4095 steps per turn.
STEPS_PER_DEGREE = 4095 / 360


def middle(label: str) -> float:
    motor = CALIBRATION[label]
    return (motor["range_min"] + motor["range_max"]) / 2


def span(label: str) -> int:
    motor = CALIBRATION[label]
    return motor["range_max"] - motor["range_min"]


def expected(label: str, rad: float, unit: str) -> float:
    """LeRobot's value of a twin angle, computed here from the calibration file."""
    if label == "gripper":
        lo, hi = GRIPPER_RAD
        return min(100.0, max(0.0, (rad - lo) / (hi - lo) * 100))
    degrees = math.degrees(rad)
    if unit == "lerobot_degrees":
        return degrees
    steps = middle(label) + degrees * STEPS_PER_DEGREE
    fraction = (min(max(steps, CALIBRATION[label]["range_min"]), CALIBRATION[label]["range_max"]) - CALIBRATION[label]["range_min"]) / span(label)
    return fraction * 200 - 100


def one_step(label: str, unit: str) -> float:
    """One servo step in a unit."""
    if label == "gripper":
        return 100 / span(label)
    return 1 / STEPS_PER_DEGREE if unit == "lerobot_degrees" else 200 / span(label)


@pytest.fixture(scope="module")
def calibrated(daemon_factory, tmp_path_factory) -> Client:
    path = tmp_path_factory.mktemp("calibration") / "follower.json"
    path.write_text(json.dumps(CALIBRATION))
    running = daemon_factory("--calibration", str(path))
    with Client(running.address) as connected:
        connected.wait_ready()
        yield connected


POSE = [0.4, -0.7, 1.1, -0.3, 2.0, 0.6]


@pytest.mark.parametrize("unit", ["lerobot_degrees", "lerobot_range"])
def test_the_daemon_reports_positions_in_lerobot_units(calibrated: Client, unit: str) -> None:
    calibrated.set_joint_positions(POSE, hold=True)
    radians = calibrated.robot_state().positions
    state = calibrated.robot_state(unit)
    for label, rad, value in zip(LABELS, radians, state.positions):
        assert value == pytest.approx(expected(label, rad, unit), abs=1e-6), label
    tick = calibrated.tick(list(state.ctrl_targets), unit=unit)
    after = calibrated.robot_state(unit).positions
    assert list(tick.observation[:6]) == pytest.approx(list(after), abs=1e-9)


@pytest.mark.parametrize("unit", ["lerobot_degrees", "lerobot_range"])
def test_the_daemon_takes_actions_in_lerobot_units(calibrated: Client, unit: str) -> None:
    wanted = {"shoulder_pan": 30.0, "shoulder_lift": -45.0, "elbow_flex": 12.5, "wrist_flex": -60.0, "wrist_roll": 80.0, "gripper": 35.0}
    calibrated.send_action(wanted, n_substeps=1, unit=unit)
    targets = calibrated.robot_state().ctrl_targets
    for label, rad in zip(LABELS, targets):
        assert expected(label, rad, unit) == pytest.approx(wanted[label], abs=1e-6), label


@pytest.mark.parametrize("unit", ["lerobot_degrees", "lerobot_range"])
def test_lerobot_values_round_trip_within_one_servo_step(calibrated: Client, unit: str) -> None:
    for values in ([10.0, -20.0, 33.3, -71.0, 5.5, 80.0], [-50.0, 60.0, -12.0, 25.0, -120.0 if unit == "lerobot_degrees" else -80.0, 3.0]):
        calibrated.send_action(values, n_substeps=1, unit=unit)
        back = calibrated.robot_state(unit).ctrl_targets
        for label, sent, got in zip(LABELS, values, back):
            assert abs(got - sent) <= one_step(label, unit), (label, sent, got)


def test_a_lerobot_value_beyond_the_range_is_refused(calibrated: Client) -> None:
    with pytest.raises(FakesimError) as refused:
        calibrated.send_action({"shoulder_pan": 170.0}, unit="lerobot_degrees")
    assert refused.value.code == grpc.StatusCode.OUT_OF_RANGE
    assert refused.value.reason == "out_of_range"
    assert refused.value.metadata["joint"] == "shoulder_pan"
    assert refused.value.metadata["unit"] == "deg (LeRobot)"
    assert "170 = 2.967 rad" in refused.value.message


def test_degrees_sent_as_radians_are_still_refused_with_the_conversion(calibrated: Client) -> None:
    with pytest.raises(FakesimError) as refused:
        calibrated.send_action({"elbow_flex": 45.0})
    assert refused.value.reason == "out_of_range"
    assert "45 deg = 0.785 rad" in refused.value.message


def test_an_unknown_unit_value_is_refused(calibrated: Client) -> None:
    from fakesim.v1 import robot_pb2

    with pytest.raises(FakesimError) as refused:
        calibrated.call(calibrated.robot.GetRobotState, robot_pb2.GetRobotStateRequest(unit=9))
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.reason == "invalid_argument"


def test_the_default_sim_only_daemon_converts_through_the_virtual_arm(client: Client) -> None:
    client.set_joint_positions([0.25, 0.0, 0.0, 0.0, 0.0, 0.0], hold=True)
    degrees = client.robot_state("lerobot_degrees").positions
    assert degrees[0] == pytest.approx(math.degrees(0.25), abs=1e-6)
    gripper = client.robot_state("lerobot_range").positions[5]
    assert 0.0 <= gripper <= 100.0


#: The gripper servo's setpoint range in the twin (assets/so101/so101.xml's ctrlrange, rad): the
#: hinge range `GRIPPER_RAD` rounded to five decimals, so LeRobot's 0 % lies 3 µrad below it.
GRIPPER_SETPOINTS_RAD = (-0.17453, 1.74533)


@pytest.mark.parametrize("unit", ["lerobot_degrees", "lerobot_range"])
def test_lerobots_own_gripper_ends_are_the_setpoint_range_ends(client: Client, unit: str) -> None:
    """A gripper closed or opened all the way in LeRobot's units (0 or 100 %, where LeRobot clips
    it) is taken, not refused out of range by the rounding of the twin's setpoint range."""
    targets = list(client.robot_state(unit).ctrl_targets)
    ends_rad = [min(max(rad, GRIPPER_SETPOINTS_RAD[0]), GRIPPER_SETPOINTS_RAD[1]) for rad in GRIPPER_RAD]
    for end, rad in zip((0.0, 100.0), ends_rad):
        client.tick(targets[:5] + [end], unit=unit)
        assert client.robot_state().ctrl_targets[5] == pytest.approx(rad, abs=1e-12)
        assert client.robot_state(unit).ctrl_targets[5] == pytest.approx(end, abs=1e-3)
    # A value beyond by more than rounding is still refused.
    with pytest.raises(FakesimError) as refused:
        client.tick(targets[:5] + [100.5], unit=unit)
    assert refused.value.reason == "out_of_range"


def test_a_calibration_without_the_gripper_stops_the_daemon(tmp_path: Path, daemon_factory) -> None:
    partial = {label: motor for label, motor in CALIBRATION.items() if label != "gripper"}
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(partial))
    with pytest.raises(pytest.fail.Exception, match="does not fit the twin"):
        daemon_factory("--calibration", str(path))
