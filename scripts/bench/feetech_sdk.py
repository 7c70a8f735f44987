"""The vendor's Python SDK (`feetech-servo-sdk`, module `scservo_sdk`) running the control cycle
of the driver's side-by-side bench on a servo bus: SYNC_READ of the present position of six
servos, then SYNC_WRITE of their goal positions, timed cycle by cycle.

Called by `cargo bench -p feetech --bench vendor_sdk` (scripts/bench/vendor-sdk), which runs the
driver's own cycle on the same virtual bus between these calls, so that the two are compared in
one run. Prints two lines:
  `positions P1 .. P6`      present positions read after the last cycle (a check that it read,
                            and, its reply coming after the last write was handled, a fence);
  `cycles_us T1 T2 ..`      the duration of each timed cycle, in microseconds.

Usage: feetech_sdk.py PORT WARMUP CYCLES
"""

import sys
import time

import scservo_sdk as scs

IDS = (1, 2, 3, 4, 5, 6)
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

    def read() -> list[int]:
        result = reader.txRxPacket()
        if result != scs.COMM_SUCCESS:
            raise SystemExit(f"sync read failed: {packets.getTxRxResult(result)}")
        return [reader.getData(servo, *PRESENT_POSITION) for servo in IDS]

    def cycle(i: int) -> None:
        read()
        goal = GOALS[i % 2]
        data = [scs.SCS_LOBYTE(goal), scs.SCS_HIBYTE(goal)]
        writer.clearParam()
        for servo in IDS:
            writer.addParam(servo, data)
        result = writer.txPacket()
        if result != scs.COMM_SUCCESS:
            raise SystemExit(f"sync write failed: {packets.getTxRxResult(result)}")

    for i in range(warmup):
        cycle(i)
    times = []
    for i in range(warmup, warmup + cycles):
        start = time.perf_counter_ns()
        cycle(i)
        times.append((time.perf_counter_ns() - start) / 1000.0)
    positions = read()
    port.closePort()
    print("positions", *positions)
    print("cycles_us", *(f"{t:.1f}" for t in times))


if __name__ == "__main__":
    main()
