"""`fakesim-hil identify` on plain tables written by tools the project did not write: CSVs from
Python's csv module (the columns in an order of their own; plain, with a byte-order mark, with
quoted labels) and NPYs from numpy's ``np.save``, of one motion of the twin driven through the
client (a daemon whose twin runs a perturbed dynamics profile, stepped tick by tick in sim).
Each is read over the table's length and gives the same figures (the fit is seeded); a CSV
without a column and an NPY of another shape or order are refused saying so."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fakesim_hil import Client

import sweep

MOTORS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
#: Ticks a second (the control period 20 ms) and the table's length.
RATE_HZ = 50
SECONDS = 12.0
#: Each joint's middle of motion and swing about it (rad): inside every joint's range.
MIDDLE = [0.0, -0.8, 0.4, 1.2, 0.0, 0.6]
SWING = [0.44, 0.35, 0.35, 0.35, 0.7, 0.25]
#: The arm the twin runs: heavier, more damped and weaker than the defaults, a 20 ms delay.
PROFILE = 'format = 1\narm = "so101"\n' + "".join(
    f"\n[joints.{motor}]\nkp = 800.0\ndamping = 0.9\narmature = 0.04\nfrictionloss = 0.07\n"
    "force_limit = 2.3\ndelay_s = 0.02\n"
    for motor in MOTORS
)
#: The least budget that runs every stage of the fit: each run takes seconds.
TINY = ["--generations", "2", "--population", "4", "--rounds", "0", "--threads", "2"]
#: The reader's columns (LeRobot labels; the CSV is written in another order).
COLUMNS = ["time_s", *(f"goal.{m}" for m in MOTORS), *(f"pos.{m}" for m in MOTORS)]


def goal(joint: int, t: float) -> float:
    """Joint ``joint``'s goal at ``t`` (rad), about its middle."""
    return MIDDLE[joint] + sweep.offset(joint, t, SWING[joint])


@pytest.fixture(scope="module")
def table(daemon_factory, tmp_path_factory: pytest.TempPathFactory) -> np.ndarray:
    """SECONDS of the twin's motion as rows (time, six goals, six positions; radians): each row
    the positions measured at its time and the goals sent then, held for one tick."""
    home = tmp_path_factory.mktemp("tables")
    profile = home / "arm.dynamics.toml"
    profile.write_text(PROFILE)
    daemon = daemon_factory("--dynamics", str(profile))
    with Client(daemon.address) as client:
        client.wait_ready()
        client.reset("so101_tabletop", 0, 0, max_steps=0, cameras=())
        period = client.set_control_period(1.0 / RATE_HZ).period_s
        keys = list(client.model_info().observation_keys)
        at = [keys.index(f"pos.{motor}") for motor in MOTORS]
        goals = [[goal(j, k * period) for j in range(6)] for k in range(int(SECONDS * RATE_HZ))]
        positions = [list(client.robot_state().positions)]
        for first in range(0, len(goals), 256):
            chunk = client.tick_chunk(goals[first : first + 256])
            assert chunk.stopped is None, chunk.stopped
            positions += [[float(tick.observation[i]) for i in at] for tick in chunk.ticks]
        client.stop()
    rows = np.array([[k * period, *goals[k], *positions[k]] for k in range(len(goals))], dtype=np.float64)
    moved = rows[:, 7:].max(axis=0) - rows[:, 7:].min(axis=0)
    assert (moved > 0.1).all(), f"every joint moves: {moved}"
    return rows


def identify(fakesim_bin: str, recording: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Runs `fakesim-hil identify` on ``recording`` (an SO-101), the profile to ``out``."""
    return subprocess.run(
        [fakesim_bin, "identify", str(recording), "--robot", "so101", *TINY, "--out", str(out), *args],
        capture_output=True, text=True, timeout=600,
    )


def figures(fakesim_bin: str, recording: Path, tmp_path: Path) -> dict:
    """The JSON figures of a run on ``recording``, the wall and CPU times left out (the whole
    run's and each stage's; a fit not kept is a result too: the table was read)."""
    report = tmp_path / f"{recording.name}.json"
    done = identify(fakesim_bin, recording, tmp_path / f"{recording.name}.dynamics.toml", "--json", str(report))
    kept = done.returncode == 0
    assert kept or "did not lower the validation error" in done.stderr, f"{done.stdout}\n{done.stderr}"
    result = json.loads(report.read_text())
    assert result["kept"] == kept, result
    del result["elapsed_s"]
    for stage in result["stages"]:
        del stage["wall_s"], stage["cpu_s"]
    return result


@pytest.fixture(scope="module")
def from_npy(table: np.ndarray, fakesim_bin: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The figures of the table saved by np.save (float64, C order)."""
    home = tmp_path_factory.mktemp("npy")
    np.save(home / "motion.npy", table)
    return figures(fakesim_bin, home / "motion.npy", home)


def write_csv(path: Path, rows: np.ndarray, columns: list[str], **options) -> None:
    """``rows`` as a CSV with Python's csv module, ``columns`` (a subset of COLUMNS, any order);
    ``options`` are ``open``'s and ``csv.writer``'s."""
    encoding = options.pop("encoding", "utf-8")
    with path.open("w", newline="", encoding=encoding) as file:
        writer = csv.writer(file, **options)
        writer.writerow(columns)
        writer.writerows([[float(row[COLUMNS.index(c)]) for c in columns] for row in rows])


def test_an_npy_of_the_motion_is_read_over_its_length_and_fitted(table: np.ndarray, from_npy: dict):
    duration = table[-1, 0] - table[0, 0]
    seconds = from_npy["seconds"]["train"] + from_npy["seconds"]["validation"]
    # Segments of about 2 s are cut end to end; what is left after the last is under one.
    assert duration - 2.5 < seconds <= duration, (seconds, duration)
    assert from_npy["seconds"]["validation"] > 0.0
    # Goals and positions where the reader expects them: the fit, even this short one, finds the
    # twin's heavier, weaker arm (about 89 -> 12 mrad here), which it would not from goals read
    # as positions or joints out of place.
    before, after = from_npy["validation_rms_rad"]
    assert from_npy["kept"] and after < 0.5 * before, from_npy["validation_rms_rad"]
    assert set(from_npy["joints"]) == set(MOTORS)
    for motor, joint in from_npy["joints"].items():
        for key in ("train_rms_rad", "validation_rms_rad"):
            before, after = joint[key]
            assert 0.0 < before < 1.0 and 0.0 < after < 1.0, (motor, key, joint[key])


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({}, id="plain"),
        # Excel's "CSV UTF-8" starts with a byte-order mark.
        pytest.param({"encoding": "utf-8-sig"}, id="byte-order-mark"),
        # Quoted labels, as R's write.csv and csv.QUOTE_NONNUMERIC write them.
        pytest.param({"quoting": csv.QUOTE_NONNUMERIC}, id="quoted-labels"),
    ],
)
def test_a_csv_of_the_motion_gives_the_figures_of_the_npy(
    table: np.ndarray, from_npy: dict, fakesim_bin: str, tmp_path: Path, options: dict
):
    # The positions first, then time, then the goals backwards: the reader goes by the header.
    shuffled = [*COLUMNS[7:], "time_s", *reversed(COLUMNS[1:7])]
    write_csv(tmp_path / "motion.csv", table, shuffled, **options)
    # CSV's decimal text of a float64 reads back to the same number: the same recording, and the
    # seeded fit repeats itself to the last digit.
    assert figures(fakesim_bin, tmp_path / "motion.csv", tmp_path) == from_npy


def test_a_float32_npy_is_read(table: np.ndarray, from_npy: dict, fakesim_bin: str, tmp_path: Path):
    np.save(tmp_path / "motion32.npy", table.astype(np.float32))
    report = figures(fakesim_bin, tmp_path / "motion32.npy", tmp_path)
    # Not the float64 table's numbers, so not its figures to the last digit; close to them.
    assert report["validation_rms_rad"] == pytest.approx(from_npy["validation_rms_rad"], rel=0.05)
    duration = table[-1, 0] - table[0, 0]
    assert duration - 2.5 < report["seconds"]["train"] + report["seconds"]["validation"] <= duration + 1e-3


@pytest.mark.parametrize("missing", ["time_s", "goal.elbow_flex", "pos.wrist_roll"])
def test_a_csv_without_a_column_is_refused_naming_it(table: np.ndarray, fakesim_bin: str, tmp_path: Path, missing: str):
    path = tmp_path / "short.csv"
    write_csv(path, table, [c for c in COLUMNS if c != missing])
    out, report = tmp_path / "short.dynamics.toml", tmp_path / "short.json"
    done = identify(fakesim_bin, path, out, "--json", str(report))
    assert done.returncode == 1, f"{done.stdout}\n{done.stderr}"
    assert f'no column "{missing}"' in done.stderr and str(path) in done.stderr, done.stderr
    assert not out.exists() and not report.exists()


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(lambda rows: rows.T, id="transposed"),
        pytest.param(lambda rows: rows[:, :12], id="12-columns"),
        pytest.param(lambda rows: rows.reshape(-1), id="flat"),
    ],
)
def test_an_npy_of_another_shape_is_refused(table: np.ndarray, fakesim_bin: str, tmp_path: Path, shape):
    path = tmp_path / "odd.npy"
    np.save(path, np.ascontiguousarray(shape(table)))
    out = tmp_path / "odd.dynamics.toml"
    done = identify(fakesim_bin, path, out)
    assert done.returncode == 1, f"{done.stdout}\n{done.stderr}"
    assert "the array's shape is not (rows, 13)" in done.stderr and str(path) in done.stderr, done.stderr
    assert not out.exists()


def test_an_npy_in_fortran_order_is_refused_saying_so(table: np.ndarray, fakesim_bin: str, tmp_path: Path):
    path = tmp_path / "fortran.npy"
    np.save(path, np.asfortranarray(table))
    done = identify(fakesim_bin, path, tmp_path / "fortran.dynamics.toml")
    assert done.returncode == 1, f"{done.stdout}\n{done.stderr}"
    assert "Fortran order; save it in C order" in done.stderr, done.stderr
