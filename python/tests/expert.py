"""A lift_cube expert for the tests: a grasp planned with the daemon's own IK moves on a known
layout, as joint-target waypoints, and the tick-by-tick trajectory through them."""

from __future__ import annotations

import numpy as np

from fakesim.v1 import robot_pb2
from fakesim_hil import Client
from fakesim_hil.client import UnitName

#: Ticks each leg between two waypoints is interpolated over.
TICKS_PER_LEG = 12
#: How far short of the cube's centre, towards the arm's base, the tool point closes (m). Aimed at
#: the centre, the lift failed in 7 of 12 replays with one joint's targets 1-2 degrees off (lift,
#: elbow or wrist flex, either sign), which a policy trained to replay it is; aimed 4-6 mm short,
#: in none of the 12 (so a trained replay's success does not hang on its last fraction of a degree).
GRASP_SHORT_M = 0.005


def expert_waypoints(client: Client, layout: int, unit: UnitName = "rad") -> tuple[np.ndarray, list[np.ndarray]]:
    """The start targets and the joint targets (in ``unit``) of a lift_cube grasp on ``layout``:
    open, above the cube, at it (`GRASP_SHORT_M` short of its centre), closed, lifted 10 cm (a
    scratch run, stopped afterwards)."""
    client.reset("so101_tabletop", 0, layout)

    def targets() -> np.ndarray:
        return np.array(client.robot_state(unit=unit).ctrl_targets)

    start = targets()
    cube = client.call(client.robot.ForwardKinematics, robot_pb2.ForwardKinematicsRequest(name="cube_red")).frames[0]
    cube_pos = np.array([cube.pose.position_m.x, cube.pose.position_m.y, cube.pose.position_m.z])
    base = client.call(client.robot.ForwardKinematics, robot_pb2.ForwardKinematicsRequest(name="base")).frames[0].pose.position_m
    outwards = cube_pos[:2] - [base.x, base.y]
    short = np.append(-GRASP_SHORT_M * outwards / np.linalg.norm(outwards), 0.0)
    client.gripper("open")
    waypoints = [targets()]
    for point in (cube_pos + [0.0, 0.0, 0.06], cube_pos + short):
        for _ in range(4):  # a move may stop at its per-call cap; repeat toward the same point
            tcp = client.observe().eef_pos_m
            dx, dy, dz = point - tcp
            if np.hypot(np.hypot(dx, dy), dz) < 0.005:
                break
            client.move(dx, dy, dz)
        waypoints.append(targets())
    client.gripper("close")
    waypoints.append(targets())
    client.move(dz=0.10)
    waypoints.append(targets())
    client.stop()
    return start, waypoints


def trajectory(start: np.ndarray, waypoints: list[np.ndarray], ticks_per_leg: int = TICKS_PER_LEG) -> np.ndarray:
    """One joint target per tick from ``start`` through every waypoint, interpolated linearly."""
    legs = []
    for target in waypoints:
        legs.append(start + (target - start) * (np.arange(1, ticks_per_leg + 1)[:, None] / ticks_per_leg))
        start = target
    return np.concatenate(legs)
