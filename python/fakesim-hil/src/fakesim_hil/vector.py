"""A vector env of `FakesimEnv`s, one daemon each, that steps them with every tick in flight at
once: a batch step costs about one round trip, where gymnasium's `SyncVectorEnv` pays one per
env, one after the other."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from .gym import FakesimEnv


class FakesimVectorEnv(VectorEnv):
    """Envs made by ``env_fns``, stepped together: each step sends every env's tick
    (`FakesimEnv.step_send`), then reads the answers (`FakesimEnv.step_finish`). No autoreset:
    reset the batch when its episodes end (they end together, after ``episode_ticks``)."""

    def __init__(self, env_fns: Sequence[Callable[[], FakesimEnv]]) -> None:
        self.envs: list[FakesimEnv] = []
        try:
            for make in env_fns:
                self.envs.append(make())
        except BaseException:
            for env in self.envs:
                env.close()
            raise
        first = self.envs[0]
        self.num_envs = len(self.envs)
        self.metadata = {**first.metadata, "autoreset_mode": AutoresetMode.DISABLED}
        self.render_mode = first.render_mode
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Resets every env (``seed`` one for all, counted up per env, or one each)."""
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
        observations, infos = [], {}
        for i, (env, env_seed) in enumerate(zip(self.envs, seeds, strict=True)):
            observation, info = env.reset(seed=env_seed, options=options)
            observations.append(observation)
            infos = self._add_info(infos, info, i)
        return self._stack(observations), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One tick of every env, all sent before any answer is read."""
        pending = [env.step_send(action) for env, action in zip(self.envs, iterate(self.action_space, actions), strict=True)]
        observations, infos = [], {}
        rewards = np.zeros(self.num_envs)
        terminated = np.zeros(self.num_envs, dtype=np.bool_)
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        for i, (env, sent) in enumerate(zip(self.envs, pending, strict=True)):
            observation, rewards[i], terminated[i], truncated[i], info = env.step_finish(sent)
            observations.append(observation)
            infos = self._add_info(infos, info, i)
        return self._stack(observations), rewards, terminated, truncated, infos

    def _stack(self, observations: list[Any]) -> Any:
        """The envs' observations batched as `observation_space` lays them out."""
        out = create_empty_array(self.single_observation_space, n=self.num_envs, fn=np.zeros)
        return concatenate(self.single_observation_space, observations, out)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Each env's attribute ``name``, called with the arguments when it is a method (as
        `SyncVectorEnv.call`; lerobot-eval reads ``task_description`` and ``_max_episode_steps``
        and renders through it)."""
        results = []
        for env in self.envs:
            attribute = env.get_wrapper_attr(name)
            results.append(attribute(*args, **kwargs) if callable(attribute) else attribute)
        return tuple(results)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Each env's attribute ``name``."""
        return tuple(env.get_wrapper_attr(name) for env in self.envs)

    def close_extras(self, **kwargs: Any) -> None:
        """Closes every env (and the daemons they started)."""
        for env in self.envs:
            env.close()
