"""The virtual servo bus (`fakesim-hil emulate`) against the vendor's own Python SDK
(`feetech-servo-sdk`, module `scservo_sdk`): its sync read and sync write, which our driver and
emulator were written beside but share no code with, get the answers a real STS3215 bus gives."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import scservo_sdk as scs

IDS = (1, 2, 3, 4, 5, 6)
MOTORS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")
# Joints whose mechanical zero the virtual arm shifts, so that each servo reads its own value.
OFFSETS_DEG = {"shoulder_pan": 10.0, "elbow_flex": -20.0, "wrist_roll": 30.0}
PRESENT_POSITION = (56, 2)
GOAL_POSITION = (42, 2)
TORQUE_ENABLE = 40
STEPS_PER_TURN = 4096


@pytest.fixture
def bus(emulate) -> tuple[str, dict]:
    """A virtual SO-101 on a pty with some joints offset: its device and the calibration it holds."""
    virtual = emulate(*(f"--joint-offset={name}={deg}" for name, deg in OFFSETS_DEG.items()))
    return virtual.device, virtual.calibration


@pytest.fixture
def sdk(bus: tuple[str, dict]) -> Iterator[tuple[scs.PortHandler, object]]:
    """The SDK's port and packet handler on the virtual bus, little-endian words (STS series)."""
    port = scs.PortHandler(bus[0])
    assert port.openPort()
    yield port, scs.PacketHandler(0)
    port.closePort()


def expected_present(calibration: dict) -> list[int]:
    """Where each servo rests: the middle of its calibrated range, shifted by its joint's offset."""
    positions = []
    for name in MOTORS:
        motor = calibration[name]
        shift = round(OFFSETS_DEG.get(name, 0.0) * STEPS_PER_TURN / 360.0)
        middle = (motor["range_min"] + motor["range_max"]) // 2
        positions.append(min(max(middle + shift, motor["range_min"]), motor["range_max"]))
    return positions


def sync_read(port: scs.PortHandler, packets: object, register: tuple[int, int]) -> list[int]:
    """One SYNC_READ of a two-byte register of all six servos, with the SDK's GroupSyncRead."""
    reader = scs.GroupSyncRead(port, packets, *register)
    for servo in IDS:
        assert reader.addParam(servo)
    result = reader.txRxPacket()
    assert result == scs.COMM_SUCCESS, packets.getTxRxResult(result)
    for servo in IDS:
        assert reader.isAvailable(servo, *register), servo
    return [reader.getData(servo, *register) for servo in IDS]


def test_the_sdk_sync_read_gets_each_servo_s_present_position(sdk, bus) -> None:
    port, packets = sdk
    expected = expected_present(bus[1])
    assert len(set(expected)) > 1, "the offsets make the servos read differently"
    assert sync_read(port, packets, PRESENT_POSITION) == expected
    # The same answer servo by servo, with the SDK's plain READ.
    for servo, position in zip(IDS, expected):
        value, result, error = packets.read2ByteTxRx(port, servo, PRESENT_POSITION[0])
        assert (value, result, error) == (position, scs.COMM_SUCCESS, 0)


def sync_write_goals(port: scs.PortHandler, packets: object, goals: list[int]) -> None:
    """One SYNC_WRITE of the six goal positions, with the SDK's GroupSyncWrite."""
    writer = scs.GroupSyncWrite(port, packets, *GOAL_POSITION)
    for servo, goal in zip(IDS, goals):
        assert writer.addParam(servo, [scs.SCS_LOBYTE(goal), scs.SCS_HIBYTE(goal)])
    assert writer.txPacket() == scs.COMM_SUCCESS


def test_an_sdk_sync_write_sets_every_goal_and_moves_the_arm_there(sdk) -> None:
    port, packets = sdk
    present = sync_read(port, packets, PRESENT_POSITION)
    goals = [position + 40 * (i + 1) for i, position in enumerate(present)]
    # Torque off (as the arm starts): the goals are stored, nothing moves.
    sync_write_goals(port, packets, goals)
    assert sync_read(port, packets, GOAL_POSITION) == goals
    assert sync_read(port, packets, PRESENT_POSITION) == present
    for servo in IDS:
        assert packets.write1ByteTxRx(port, servo, TORQUE_ENABLE, 1) == (scs.COMM_SUCCESS, 0)
    # With torque on each servo drives to the goals written now at the STS3215's speed (40..240
    # steps); the wait is bounded by the number of reads, not by a sleep.
    sync_write_goals(port, packets, goals)
    for _ in range(100_000):
        if sync_read(port, packets, PRESENT_POSITION) == goals:
            break
    assert sync_read(port, packets, PRESENT_POSITION) == goals
    for servo in IDS:
        assert packets.write1ByteTxRx(port, servo, TORQUE_ENABLE, 0) == (scs.COMM_SUCCESS, 0)
