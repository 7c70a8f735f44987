"""Benchmark: the Gym env (`fakesim_hil.gym.FakesimEnv`, its own release daemon on a Unix socket)
against the in-process peer `lerobot-env-so101` 0.4.0 at equal work, the two taking turns in each
of 5 rounds (min / median reported):

    FAKESIM_HIL_BIN=target/release/fakesim-hil $(python/bench/peer-python) python/bench/peer_side_by_side.py

The peer's own action is an end-effector delta solved by IK; the comparison is with its
*joint-target stepping*: `JointTargetPickCube`, a small subclass of its `SO101PickCubeGymEnv` that
takes six joint targets (five arm joints and the gripper's ctrl), writes them and runs its physics
substeps for the control period, as our env's step holds six targets for one control tick. Both
step the same twin time per step (0.1 s, the peer's default, or 0.05 s). Images: ours at the
`fast` level; the peer's renderer with the same switches (no multisampling, shadows or
reflections); the peer has one camera (`front`), its second image is MuJoCo's free camera.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# The peer renders in this process; headless, through EGL as the daemon does.
os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco  # noqa: E402
import numpy as np  # noqa: E402
from gymnasium import spaces  # noqa: E402
from lerobot_env_so101.mujoco_env import GymRenderingSpec  # noqa: E402
from lerobot_env_so101.pick_env import SO101PickCubeGymEnv  # noqa: E402

from fakesim_hil.gym import FakesimEnv  # noqa: E402

#: The peer's arm joints, in its actuator order, and its gripper actuator.
PEER_ARM = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll")


class JointTargetPickCube(SO101PickCubeGymEnv):
    """The peer's pick-cube env stepped by six joint targets (its five arm joints' and its
    gripper's ctrl) held for its control period, instead of its IK end-effector action; with
    ``cameras`` images (1: its ``front`` camera, 2: that and the free camera), drawn without
    multisampling, shadows or reflections."""

    def __init__(self, control_dt: float, cameras: int = 0, size: tuple[int, int] = (256, 256)) -> None:
        width, height = size
        super().__init__(
            control_dt=control_dt,
            image_obs=cameras > 0,
            render_spec=GymRenderingSpec(height=height, width=width, camera_id="front"),
        )
        self._cameras = cameras
        model = self._model
        model.vis.quality.offsamples = 0
        model.light_castshadow[:] = 0
        model.mat_reflectance[:] = 0
        ids = [model.actuator(name).id for name in (*PEER_ARM, "gripper")]
        self._targets = np.asarray(ids)
        ranges = model.actuator_ctrlrange[self._targets]
        self.action_space = spaces.Box(low=ranges[:, 0], high=ranges[:, 1], dtype=np.float64)

    def apply_action(self, action: np.ndarray) -> None:
        """Writes the six targets and steps the physics for one control period."""
        self._data.ctrl[self._targets] = action
        for _ in range(self._n_substeps):
            mujoco.mj_step(self._model, self._data)

    def _compute_observation(self) -> dict:
        observation = super()._compute_observation()
        if self._cameras > 1:
            self._viewer.update_scene(self._data, camera=-1)
            observation["pixels"]["free"] = self._viewer.render()
        return observation


@dataclass(frozen=True)
class Case:
    """One figure: steps per second at a control period with some cameras, resets, or builds."""

    name: str
    period_s: float = 0.1
    cameras: int = 0
    size: tuple[int, int] = (256, 256)
    kind: str = "steps"


CASES = [
    Case("steps/s, no images, 0.1 s period"),
    Case("steps/s, no images, 0.05 s period", period_s=0.05),
    Case("steps/s, 1 camera 256x256", cameras=1),
    Case("steps/s, 2 cameras 256x256", cameras=2),
    Case("steps/s, 1 camera 640x480", cameras=1, size=(640, 480)),
    Case("steps/s, 2 cameras 640x480", cameras=2, size=(640, 480)),
    Case("resets/s, no images", kind="resets"),
    Case("env built to its first observation, ms", kind="build"),
]


def ours(case: Case, binary: str) -> FakesimEnv:
    """Our env for a case, on a daemon of its own."""
    cameras = ["agentview", "robot0_eye_in_hand"][: case.cameras]
    return FakesimEnv(
        0,
        daemon_bin=binary,
        cameras=cameras,
        image_size=case.size,
        render_quality="fast",
        control_period_s=case.period_s,
        episode_ticks=10**9,
    )


def peer(case: Case) -> JointTargetPickCube:
    """The peer's joint-target env for a case."""
    return JointTargetPickCube(case.period_s, case.cameras, case.size)


def rate(env: Any, case: Case, count: int) -> float:
    """Steps (or resets) per second of an env already reset once: a sweep of joint targets
    around the first observation's pose."""
    if case.kind == "resets":
        start = time.perf_counter()
        for i in range(count):
            env.reset(seed=i)
        return count / (time.perf_counter() - start)
    low, high = env.action_space.low, env.action_space.high
    centre = np.clip((low + high) / 2, low, high)
    swing = (high - low) * 0.05
    actions = [centre + swing * np.sin(0.3 * k) for k in range(count)]
    start = time.perf_counter()
    for action in actions:
        env.step(action)
    return count / (time.perf_counter() - start)


def build_ms(make: Callable[[], Any]) -> float:
    """Milliseconds from the constructor's call to the first observation of a reset."""
    start = time.perf_counter()
    env = make()
    env.reset(seed=0)
    elapsed = time.perf_counter() - start
    env.close()
    return elapsed * 1e3


def measure(make: Callable[[], Any], case: Case, count: int) -> float:
    """One side's figure for a case."""
    if case.kind == "build":
        return build_ms(make)
    env = make()
    try:
        env.reset(seed=0)
        rate(env, case, min(count, 10))  # warm-up (first frames at a size set up the renderer)
        return rate(env, case, count)
    finally:
        env.close()


def count_for(case: Case, steps: int) -> int:
    """Steps (or resets) a side runs for a case: fewer with large images."""
    if case.kind == "resets":
        return max(steps // 4, 10)
    if case.cameras and case.size[0] > 256:
        return max(steps // 10, 10)
    if case.cameras:
        return max(steps // 4, 10)
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=400, help="steps a side runs per round without images")
    parser.add_argument("--only", default="", help="run only the cases whose name contains this")
    parser.add_argument("--binary", default=os.environ.get("FAKESIM_HIL_BIN"), help="the daemon (default $FAKESIM_HIL_BIN)")
    args = parser.parse_args()
    if not args.binary:
        parser.error("name the release daemon with --binary or FAKESIM_HIL_BIN")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    for case in CASES:
        if args.only not in case.name:
            continue
        count = count_for(case, args.steps)
        figures: dict[str, list[float]] = {"ours": [], "peer": []}
        for round_ in range(args.rounds):
            sides = ["ours", "peer"] if round_ % 2 == 0 else ["peer", "ours"]
            for side in sides:
                make = (lambda: ours(case, args.binary)) if side == "ours" else (lambda: peer(case))
                figures[side].append(measure(make, case, count))
        ratios = [o / p for o, p in zip(figures["ours"], figures["peer"])]
        if case.kind == "build":
            ratios = [p / o for o, p in zip(figures["ours"], figures["peer"])]
        spread = lambda values: f"{min(values):8.1f} / {statistics.median(values):8.1f}"  # noqa: E731
        print(
            f"{case.name:<40} ours {spread(figures['ours'])}   peer {spread(figures['peer'])}"
            f"   ours/peer speed {min(ratios):.2f} / {statistics.median(ratios):.2f}"
        )
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory():
        main()
