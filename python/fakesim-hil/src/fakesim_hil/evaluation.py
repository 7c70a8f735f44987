"""Evaluation jobs (task × layout × seed), one episode per job on a daemon, and the aggregate report."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from .client import Client, UnitName
from .gym import FakesimEnv
from .vector import FakesimVectorEnv

#: A policy: observation (as `FakesimEnv` gives it) to joint targets in the episodes' unit
#: (radians unless `EpisodeOptions.unit` says otherwise). One with a ``reset()`` method is reset
#: at the start of every episode; `fakesim_hil.lerobot_policy.LeRobotPolicy` makes one of a
#: LeRobot checkpoint.
Policy = Callable[[dict[str, Any]], np.ndarray]

#: How far inside the joint ranges actions are held, in the joints' unit.
RANGE_MARGIN = 1e-4
#: z of a two-sided 95 % interval.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Job:
    """One episode to run: a task of the suite by name, its layout and the seed given to reset."""

    task: str
    init_state_index: int
    seed: int = 0


@dataclass(frozen=True)
class EpisodeOptions:
    """How every episode of an evaluation runs: its length, its frames, its control period and
    the joint unit of observations and actions."""

    episode_ticks: int = 100
    cameras: tuple[str, ...] = ("agentview",)
    image_size: tuple[int, int] = (64, 48)
    control_period_s: float | None = None
    unit: UnitName = "rad"


def jobs_grid(tasks: Iterable[str], layouts: Iterable[int], seeds: Iterable[int]) -> list[Job]:
    """Every task × layout × seed, in that order."""
    layouts, seeds = list(layouts), list(seeds)
    return [Job(task, layout, seed) for task in tasks for layout in layouts for seed in seeds]


def run_episode(client: Client, policy: Policy, job: Job, options: EpisodeOptions = EpisodeOptions()) -> dict[str, Any]:
    """Runs one job's episode on the daemon behind ``client`` and returns its summary: the job,
    the daemon's judgement, the steps run and the validation report (no run id, no timings, so
    the same job gives the same summary on any daemon)."""
    env = _env(job.task, options, client=client)
    try:
        if hasattr(policy, "reset"):
            policy.reset()
        act = _actor(policy, env.action_space)
        observation, _ = env.reset(seed=job.seed, options={"init_state_index": job.init_state_index})
        info: dict[str, Any] = {}
        truncated, steps = False, 0
        while not truncated:
            observation, _, _, truncated, info = env.step(act(observation))
            steps += 1
    finally:
        env.close()
    return _summary(job, info["is_success"], steps, info.get("validation_json"))


def _env(task: str, options: EpisodeOptions, **where: Any) -> FakesimEnv:
    """The Gym env of a task's episodes as ``options`` say, on the daemon ``where`` names."""
    return FakesimEnv(
        task,
        episode_ticks=options.episode_ticks,
        cameras=list(options.cameras),
        image_size=options.image_size,
        control_period_s=options.control_period_s,
        unit=options.unit,
        **where,
    )


def _held(space: gym.spaces.Box) -> Callable[[Any], np.ndarray]:
    """Actions held just inside the joint ranges (the stated ranges' last digit is rounded)."""
    low, high = space.low + RANGE_MARGIN, space.high - RANGE_MARGIN
    return lambda actions: np.clip(np.asarray(actions, dtype=np.float64), low, high)


def _actor(policy: Policy, space: gym.spaces.Box) -> Callable[[dict[str, Any]], np.ndarray]:
    """The policy's action for one observation, held inside the joint ranges."""
    held = _held(space)
    return lambda observation: held(policy(observation))


def _batch_actor(policy: Policy, space: gym.spaces.Box) -> Callable[[dict[str, Any]], np.ndarray] | None:
    """The policy's actions for a vector env's stacked observations in one call, held inside the
    joint ranges, when the policy takes batches (an ``act_batch`` method); else ``None``."""
    act_batch = getattr(policy, "act_batch", None)
    if act_batch is None:
        return None
    held = _held(space)
    return lambda observations: held(act_batch(observations))


def _summary(job: Job, success: Any, steps: int, validation_json: str | None) -> dict[str, Any]:
    """An episode's summary: the job, the daemon's judgement, the steps run, the validation report."""
    return {**asdict(job), "success": bool(success), "steps": steps, "validation": json.loads(validation_json or "{}")}


def evaluate_vectorised(
    addresses: Sequence[str], policy: Policy, jobs: Iterable[Job], options: EpisodeOptions = EpisodeOptions()
) -> list[dict[str, Any]]:
    """Runs the jobs in batches of one per daemon at ``addresses``, each batch a
    `FakesimVectorEnv` stepped in lockstep as lerobot-eval steps its slots (every slot's tick
    in flight at once); the summaries in job
    order. A policy with an ``act_batch`` method (`LeRobotPolicy`) is called once a step with the
    stacked observations, as lerobot-eval calls its policy; another is called per slot, so it
    must not keep state between steps. Its ``reset()`` is called once per batch."""
    jobs = list(jobs)
    summaries: list[dict[str, Any]] = []
    for first in range(0, len(jobs), len(addresses)):
        batch = jobs[first : first + len(addresses)]
        summaries += _run_batch(addresses[: len(batch)], policy, batch, options)
    return summaries


def _run_batch(addresses: Sequence[str], policy: Policy, batch: list[Job], options: EpisodeOptions) -> list[dict[str, Any]]:
    """One episode per daemon, stepped together; each env holds its job's layout only."""
    makers = [
        functools.partial(_env, job.task, options, address=address, init_states=[job.init_state_index])
        for job, address in zip(batch, addresses, strict=True)
    ]
    # Every slot's tick in flight at once: a batch step costs about one round trip.
    vector = FakesimVectorEnv(makers)
    try:
        if hasattr(policy, "reset"):
            policy.reset()
        act = _actor(policy, vector.single_action_space)
        batched = _batch_actor(policy, vector.single_action_space)
        observations, _ = vector.reset(seed=[job.seed for job in batch])
        steps = 0
        while True:
            if batched is not None:
                actions = batched(observations)
            else:
                each = gym.vector.utils.iterate(vector.observation_space, observations)
                actions = np.stack([act(observation) for observation in each])
            observations, _, _, truncated, info = vector.step(actions)
            steps += 1
            if truncated.all():
                break
    finally:
        vector.close()
    return [_summary(job, info["is_success"][i], steps, info["validation_json"][i]) for i, job in enumerate(batch)]


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a success rate (0..1); (0, 1) without episodes."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def _add_counts(total: dict[str, Any], counts: Mapping[str, Any]) -> None:
    """Adds nested counts (stop reasons by call and reason) into ``total``."""
    for key, value in counts.items():
        if isinstance(value, Mapping):
            _add_counts(total.setdefault(key, {}), value)
        else:
            total[key] = total.get(key, 0) + value


def _group(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """Success rate with its Wilson 95 % interval and the summed validation figures of episodes."""
    successes = sum(s["success"] for s in summaries)
    lo, hi = wilson_interval(successes, len(summaries))
    stop_reasons: dict[str, Any] = {}
    joint_limit_hits: dict[str, int] = {}
    for s in summaries:
        _add_counts(stop_reasons, s["validation"].get("stop_reasons", {}))
        _add_counts(joint_limit_hits, s["validation"].get("joint_limit_hits", {}))
    clearances = [s["validation"]["min_table_clearance_m"] for s in summaries if "min_table_clearance_m" in s["validation"]]
    return {
        "episodes": len(summaries),
        "successes": successes,
        "success_rate": successes / len(summaries) if summaries else 0.0,
        "success_rate_ci95": [lo, hi],
        "stop_reasons": stop_reasons,
        "safety_refusals": sum(s["validation"].get("safety_refusals", 0) for s in summaries),
        "joint_limit_hits": joint_limit_hits,
        "min_table_clearance_m": min(clearances) if clearances else None,
    }


def aggregate(summaries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The report of an evaluation: overall, per task and per task and layout (``task/layout``)."""
    summaries = sorted(summaries, key=lambda s: (s["task"], s["init_state_index"], s["seed"]))
    by_task: dict[str, list[dict[str, Any]]] = {}
    by_layout: dict[str, list[dict[str, Any]]] = {}
    for s in summaries:
        by_task.setdefault(s["task"], []).append(s)
        by_layout.setdefault(f"{s['task']}/{s['init_state_index']}", []).append(s)
    return {
        "overall": _group(summaries),
        "per_task": {task: _group(group) for task, group in by_task.items()},
        "per_task_layout": {key: _group(group) for key, group in by_layout.items()},
        "episodes": summaries,
    }


def evaluate_sequential(client: Client, policy: Policy, jobs: Iterable[Job], options: EpisodeOptions = EpisodeOptions()) -> list[dict[str, Any]]:
    """Runs the jobs one after another on one daemon; the summaries in job order."""
    return [run_episode(client, policy, job, options) for job in jobs]
