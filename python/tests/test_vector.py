"""The vector env that steps every env's daemon at once, against the same envs stepped alone."""

from __future__ import annotations

import functools

import numpy as np

from fakesim_hil.gym import FakesimEnv
from fakesim_hil.vector import FakesimVectorEnv


def test_a_batch_step_gives_what_each_env_gives_alone(daemon, daemon_factory) -> None:
    addresses = [daemon.address, daemon_factory().address]
    makers = [
        functools.partial(FakesimEnv, task, address=address, cameras=["agentview"], image_size=(32, 24), episode_ticks=6)
        for task, address in zip((0, 2), addresses)
    ]
    sweep = [np.full(6, 0.01 * k) + np.linspace(-0.2, 0.3, 6) for k in range(6)]

    vector = FakesimVectorEnv(makers)
    try:
        observations, infos = vector.reset(seed=[4, 9])
        assert list(infos["task"]) == ["lift_cube", "push_to_target"]
        assert vector.observation_space.contains(observations)
        batched = [observations["joint_pos"]]
        for action in sweep:
            observations, rewards, terminated, truncated, infos = vector.step(np.stack([action, action]))
            batched.append(observations["joint_pos"])
        assert truncated.all() and not terminated.any()
        assert observations["pixels"]["agentview"].shape == (2, 24, 32, 3)
        judged = list(infos["is_success"])
    finally:
        vector.close()

    for i, (make, seed) in enumerate(zip(makers, (4, 9))):
        env = make()
        try:
            observation, _ = env.reset(seed=seed)
            alone = [observation["joint_pos"]]
            for action in sweep:
                observation, _, _, _, info = env.step(action)
                alone.append(observation["joint_pos"])
        finally:
            env.close()
        np.testing.assert_array_equal(np.array([step[i] for step in batched]), np.array(alone))
        assert judged[i] == info["is_success"]
