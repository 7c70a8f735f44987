"""The Python client against the daemon in hil on a virtual SO-101 whose elbow meets an obstacle
(`fakesim-hil emulate --obstacle`): the first tick after the daemon held the blocked arm says so."""

from __future__ import annotations

import pytest

from fakesim_hil import Client

# Where the elbow's obstacle stands, degrees of the model's angle; each tick asks for 0.5 rad.
OBSTACLE_DEG = 6.0


def test_a_tick_into_an_obstacle_reports_the_arm_blocked(emulate, daemon_factory) -> None:
    bus = emulate(f"--obstacle=elbow_flex={OBSTACLE_DEG}")
    daemon = daemon_factory(*bus.follower_args, "--mode", "hil")
    with Client(daemon.address) as arm:
        arm.wait_ready()
        arm.acquire_lease("test-hil", ttl_ms=30000)
        action = list(arm.robot_state().ctrl_targets)
        action[2] = 0.5
        assert not arm.tick(action).blocked, "the elbow has not reached the obstacle yet"
        # A hil tick returns once its goals are sent: the client paces its ticks, here at the
        # 20 Hz of a joint-state stream, as LeRobot's loop paces them at its fps.
        clock = arm.joint_states(rate_hz=20.0)
        for _ in range(100):
            if arm.tick(action).blocked:
                break
            next(clock)
        else:
            pytest.fail("no tick reported the blocked elbow")
        clock.close()
        elbow = arm.robot_state().positions[2]
        assert elbow == pytest.approx(0.10, abs=0.03), "the twin mirrors the elbow at the obstacle"
        assert arm.send_action({"3": 0.0}).blocked is False, "backing away is not blocked"
