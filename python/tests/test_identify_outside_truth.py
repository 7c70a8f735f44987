"""`fakesim-hil identify` against a known truth made outside the project: the SO-101 on its
table (``assets/so101/scene.xml``) stepped by MuJoCo's own Python bindings at 1 ms, every joint
with a stiffness, damping, armature, friction, torque limit and transport delay of its own
(wrist_roll stiff and weak, ringing against its limit), read at 100 Hz rounded to the servo's
4096 steps with a little noise, its goals written at 20 Hz. The daemon fits a 40 s recording
written as the documented CSV with its default budget; then MuJoCo's bindings replay a different
20 s recording, from each 2 s stretch's measured start, under the fitted profile at its physics
step, and under the truth's own values at that step and at 1 ms."""

from __future__ import annotations

import math
import subprocess
import tomllib
from pathlib import Path

import mujoco
import numpy as np
import pytest

import sweep

SCENE = Path(__file__).resolve().parents[2] / "assets" / "so101" / "scene.xml"
MOTORS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
#: The truth's physics step, and how often it is read and written to (s).
TRUTH_STEP_S = 0.001
READING_S = 0.01
GOAL_S = 0.05
#: The servo's step (rad) and the noise on a reading before it is rounded (rad).
SERVO_STEP = 2 * math.pi / 4096
NOISE_RAD = 3e-4
#: The model's defaults (kp, damping, armature, frictionloss, force_limit) and the truth's
#: factors on them, joint by joint, with its delays (s), off the fit's 2.5 ms grid.
DEFAULTS = [998.22, 0.60, 0.028, 0.052, 2.94]
FACTORS = [
    [1.2, 1.3, 1.3, 0.7, 0.8],
    [0.8, 1.4, 1.2, 1.4, 1.3],
    [1.3, 1.2, 0.8, 0.8, 0.85],
    [0.75, 0.7, 1.4, 1.2, 1.2],
    [1.5, 1.2, 0.8, 0.9, 0.6],
    [0.85, 1.3, 1.1, 1.3, 1.1],
]
DELAYS_S = [0.016, 0.021, 0.024, 0.018, 0.022, 0.029]
#: Each joint's middle of motion and swing about it (rad): clear of the table.
MIDDLE = [0.0, -0.8, 0.4, 1.0, 0.0, 0.6]
SWING = [0.44, 0.35, 0.35, 0.35, 0.7, 0.25]
#: Length of the stretches the held-out recording is replayed in (s).
STRETCH_S = 2.0


def truth() -> list[dict[str, float]]:
    """The truth's parameters, joint by joint."""
    names = ["kp", "damping", "armature", "frictionloss", "force_limit"]
    return [
        {**{n: d * f for n, d, f in zip(names, DEFAULTS, FACTORS[j])}, "delay_s": DELAYS_S[j]}
        for j in range(6)
    ]


def model(params: list[dict[str, float]], step: float) -> tuple[mujoco.MjModel, list[int], list[int]]:
    """The scene with ``params`` put in, stepping at ``step``; each joint's qpos and dof address."""
    m = mujoco.MjModel.from_xml_path(str(SCENE))
    m.opt.timestep = step
    qpos, dofs = [], []
    for j, p in enumerate(params):
        joint, actuator = m.joint(str(j + 1)), m.actuator(str(j + 1))
        dof = int(m.jnt_dofadr[joint.id])
        m.dof_damping[dof], m.dof_armature[dof], m.dof_frictionloss[dof] = (
            p["damping"], p["armature"], p["frictionloss"],
        )
        m.actuator_forcerange[actuator.id] = [-p["force_limit"], p["force_limit"]]
        m.actuator_gainprm[actuator.id, 0] = p["kp"]
        m.actuator_biasprm[actuator.id, 1] = -p["kp"]
        qpos.append(int(m.jnt_qposadr[joint.id]))
        dofs.append(dof)
    return m, qpos, dofs


def goals(seconds: float, seed: int) -> np.ndarray:
    """The goals written, one row every ``GOAL_S``: steps and ramps about each joint's middle."""
    times = np.arange(0.0, seconds, GOAL_S)
    shift = 17.3 * seed
    return np.array([[MIDDLE[j] + sweep.offset(j, t + shift, SWING[j]) for j in range(6)] for t in times])


def in_force(written: np.ndarray, t: float) -> np.ndarray:
    """The goals in force at ``t`` (the last written at or before it; the first before that)."""
    return written[min(max(int(math.floor(t / GOAL_S + 1e-9)), 0), len(written) - 1)]


def record(seconds: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A recording under the truth: the goals written and the readings (time, six positions),
    rounded to the servo's steps after a little noise."""
    written = goals(seconds, seed)
    params = truth()
    m, qpos, _ = model(params, TRUTH_STEP_S)
    d = mujoco.MjData(m)
    d.qpos[qpos] = written[0]
    rng = np.random.default_rng(seed)
    per_reading = round(READING_S / TRUTH_STEP_S)
    rows = [[0.0, *written[0]]]
    for k in range(1, round(seconds / TRUTH_STEP_S) + 1):
        t = (k - 1) * TRUTH_STEP_S
        d.ctrl[:] = [in_force(written, t - params[j]["delay_s"])[j] for j in range(6)]
        mujoco.mj_step(m, d)
        if k % per_reading == 0:
            rows.append([k * TRUTH_STEP_S, *d.qpos[qpos]])
    readings = np.array(rows)
    noisy = readings[:, 1:] + rng.normal(0.0, NOISE_RAD, readings[:, 1:].shape)
    readings[:, 1:] = np.round(noisy / SERVO_STEP) * SERVO_STEP
    return written, readings


def write_csv(path: Path, written: np.ndarray, readings: np.ndarray) -> None:
    """The documented table: a row per reading, the goals in force from it on and its positions."""
    header = ["time_s", *(f"goal.{m}" for m in MOTORS), *(f"pos.{m}" for m in MOTORS)]
    lines = [",".join(header)]
    for t, *pos in readings:
        lines.append(",".join(f"{x:.9g}" for x in [t, *in_force(written, t), *pos]))
    path.write_text("\n".join(lines) + "\n")


def replay_rms(params: list[dict[str, float]], step: float, written: np.ndarray, readings: np.ndarray) -> float:
    """RMS (rad, every joint) of ``readings`` replayed open-loop under ``params`` at ``step``,
    from each stretch's measured start (its velocity the slope over ±10 ms), compared at
    every reading."""
    m, qpos, dofs = model(params, step)
    per = round(STRETCH_S / READING_S)
    errors = []
    for first in range(1, len(readings) - per, per):
        d = mujoco.MjData(m)
        t0 = readings[first, 0]
        d.qpos[qpos] = readings[first, 1:]
        d.qvel[dofs] = (readings[first + 1, 1:] - readings[first - 1, 1:]) / (2 * READING_S)
        t = t0
        for k in range(first + 1, first + per + 1):
            while t < readings[k, 0] - 1e-9:
                d.ctrl[:] = [in_force(written, t - params[j]["delay_s"])[j] for j in range(6)]
                mujoco.mj_step(m, d)
                t += step
            errors.append(d.qpos[qpos] - readings[k, 1:])
    return float(np.sqrt(np.mean(np.square(errors))))


@pytest.fixture(scope="module")
def fitted(fakesim_bin: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The profile `fakesim-hil identify` fits to a 40 s recording with its default budget."""
    home = tmp_path_factory.mktemp("outside_truth")
    table = home / "train.csv"
    write_csv(table, *record(40.0, seed=1))
    out = home / "arm.dynamics.toml"
    done = subprocess.run(
        [fakesim_bin, "identify", str(table), "--robot", "so101", "--threads", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=1800,
    )
    print(done.stdout)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "fit kept" in done.stdout, done.stdout
    return tomllib.loads(out.read_text())


def test_the_fitted_profile_replays_a_recording_it_never_saw_as_closely_as_the_truth_at_its_step(fitted: dict) -> None:
    step = fitted["physics_step_s"]
    params = [fitted["joints"][m] for m in MOTORS]
    written, readings = record(20.0, seed=2)
    floor = replay_rms(truth(), TRUTH_STEP_S, written, readings)
    at_step = replay_rms(truth(), step, written, readings)
    defaults = [dict(zip(["kp", "damping", "armature", "frictionloss", "force_limit"], DEFAULTS), delay_s=0.0)] * 6
    start = replay_rms(defaults, step, written, readings)
    rms = replay_rms(params, step, written, readings)
    print(
        f"held out, replayed by MuJoCo's bindings: defaults {1e3 * start:.2f} mrad, fitted {1e3 * rms:.2f}, "
        f"the truth at {1e3 * step:.1f} ms {1e3 * at_step:.2f}, the truth at 1 ms (the floor) {1e3 * floor:.2f}"
    )
    assert rms < start / 10, f"{rms} rad against the defaults' {start} rad"
    # Measured (2026-12-05): defaults 67.54 mrad, fitted 1.34, the truth at 2.5 ms 1.99, the floor
    # 1.18. The fit is held to the truth's own values at the profile's step, and to twice the
    # floor, the project's bar for its own known truths.
    assert rms <= at_step, f"fitted {rms} rad, the truth at the profile's step {at_step} rad"
    assert rms <= 2 * floor, f"fitted {rms} rad, the floor {floor} rad"


def test_every_fitted_delay_is_within_a_reading_period_of_the_truth(fitted: dict) -> None:
    for j, motor in enumerate(MOTORS):
        delay = fitted["joints"][motor]["delay_s"]
        print(f"{motor}: delay {1e3 * delay:.1f} ms, truth {1e3 * DELAYS_S[j]:.1f} ms")
        assert abs(delay - DELAYS_S[j]) <= READING_S, f"{motor}: {delay} s against {DELAYS_S[j]} s"
