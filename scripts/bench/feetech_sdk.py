"""The vendor's Python SDK (`feetech-servo-sdk`, module `scservo_sdk`) running the control cycle
of the driver's side-by-side bench on a servo bus: SYNC_READ of the present position of six
servos, then SYNC_WRITE of their goal positions, timed cycle by cycle.

Called by `cargo bench -p feetech --bench vendor_sdk` (scripts/bench/vendor-sdk), which runs the
driver's own cycle on the same virtual bus between these calls, so that the two are compared in
one run. A sync read that gets no complete answer in the SDK's own timeout is counted, the late
replies are dropped once the line has been quiet for a while (the SDK itself keeps them, and its
next sync read would take them for its own: every later read would return the previous cycle's
positions), and the cycle goes on to its write, as a control loop would. Prints three lines:
  `positions P1 .. P6`      present positions read after the last cycle (a check that it read,
                            and, its reply coming after the last write was handled, a fence);
  `failures N`              timed cycles whose sync read failed;
  `cycles_us T1 T2 ..`      the duration of each timed cycle, in microseconds.

Usage: feetech_sdk.py PORT WARMUP CYCLES
"""

import sys
import time

import scservo_sdk as scs

IDS = (1, 2, 3, 4, 5, 6)
# How long the line must stay quiet after a failed read before its late replies count as gone.
QUIET_S = 0.005
PRESENT_POSITION = (56, 2)
GOAL_POSITION = (42, 2)
# Two goals taken in turn, as in the driver's cycle.
GOALS = (2047, 2048)


def main() -> None:
    port_name, warmup, cycles = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    port = scs.PortHandler(port_name)
    if not port.openPort():
        raise SystemExit(f"cannot open {port_name}")
    # Protocol end 0: the STS series' little-endian words (as LeRobot's Feetech bus uses it).
    packets = scs.PacketHandler(0)
    reader = scs.GroupSyncRead(port, packets, *PRESENT_POSITION)
    for servo in IDS:
        reader.addParam(servo)
    writer = scs.GroupSyncWrite(port, packets, *GOAL_POSITION)

    def drop_late_replies() -> None:
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < QUIET_S:
            if port.getBytesAvailable():
                port.ser.reset_input_buffer()
                quiet_since = time.monotonic()

    def read() -> list[int] | None:
        if reader.txRxPacket() != scs.COMM_SUCCESS:
            drop_late_replies()
            return None
        return [reader.getData(servo, *PRESENT_POSITION) for servo in IDS]

    def cycle(i: int) -> bool:
        """One cycle; false when its read failed."""
        positions = read()
        goal = GOALS[i % 2]
        data = [scs.SCS_LOBYTE(goal), scs.SCS_HIBYTE(goal)]
        writer.clearParam()
        for servo in IDS:
            writer.addParam(servo, data)
        result = writer.txPacket()
        if result != scs.COMM_SUCCESS:
            raise SystemExit(f"sync write failed: {packets.getTxRxResult(result)}")
        return positions is not None

    for i in range(warmup):
        cycle(i)
    times = []
    failures = 0
    for i in range(warmup, warmup + cycles):
        start = time.perf_counter_ns()
        failures += not cycle(i)
        times.append((time.perf_counter_ns() - start) / 1000.0)
    positions = next(filter(None, (read() for _ in range(3))), None)
    port.closePort()
    if positions is None:
        raise SystemExit("three sync reads in a row failed after the timed cycles")
    print("positions", *positions)
    print("failures", failures)
    print("cycles_us", *(f"{t:.1f}" for t in times))


if __name__ == "__main__":
    main()
