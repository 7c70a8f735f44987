"""Evaluation on a local Ray cluster the test starts (2 daemon actors, 12 jobs), in a network
namespace with only loopback (Ray binds every interface): summaries equal the sequential run's,
also when a daemon and an actor are killed mid-run, and so do those of the vectorised route."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray")

from fakesim_hil import Client  # noqa: E402
from fakesim_hil.evaluation import evaluate_sequential, evaluate_vectorised  # noqa: E402
from ray_cluster_run import JOBS, OPTIONS, Drift, run_isolated  # noqa: E402


def _key(summary: dict[str, Any]) -> tuple[str, int, int]:
    return (summary["task"], summary["init_state_index"], summary["seed"])


@pytest.fixture(scope="module")
def sequential(daemon: Any) -> list[dict[str, Any]]:
    """The 12 jobs run one after another on the session's daemon."""
    with Client(daemon.address) as client:
        return sorted(evaluate_sequential(client, Drift(), JOBS, OPTIONS), key=_key)


def test_ray_summaries_equal_the_sequential_run(sequential: list[dict[str, Any]], tmp_path: Path) -> None:
    report = run_isolated(tmp_path)["report"]
    assert report["episodes"] == sequential
    assert len(report["episodes"]) == 12 and report["retried"] == 0
    assert report["overall"]["episodes"] == 12 and set(report["per_task"]) == {"lift_cube", "push_to_target"}
    assert len(report["per_task_layout"]) == 6
    lift = report["per_task"]["lift_cube"]
    assert 0.0 <= lift["success_rate_ci95"][0] <= lift["success_rate"] <= lift["success_rate_ci95"][1] <= 1.0
    assert sum(report["overall"]["joint_limit_hits"].values()) > 0, "the drift drives joints onto their limits"
    clearances = [s["validation"]["min_table_clearance_m"] for s in sequential]
    assert report["overall"]["min_table_clearance_m"] == min(clearances)


def test_a_killed_daemon_and_a_killed_actor_still_yield_every_job(sequential: list[dict[str, Any]], tmp_path: Path) -> None:
    run = run_isolated(tmp_path, "--kill")
    assert len(run["killed_daemons"]) == 1 and len(run["killed_actors"]) == 1
    assert run["report"]["retried"] >= 1, "a job on the killed daemon or actor was run again"
    assert run["report"]["episodes"] == sequential
    assert run["orphaned"] == [], "the killed actor's daemon ended with it"


def test_vectorised_summaries_equal_the_sequential_run(sequential: list[dict[str, Any]], daemon: Any, daemon_factory: Any) -> None:
    second = daemon_factory()
    summaries = evaluate_vectorised([daemon.address, second.address], Drift(), JOBS, OPTIONS)
    assert [_key(s) for s in summaries] == [(j.task, j.init_state_index, j.seed) for j in JOBS], "in job order"
    assert sorted(summaries, key=_key) == sequential
