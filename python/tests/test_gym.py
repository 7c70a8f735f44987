"""The Gymnasium env against a real sim-only daemon."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

from expert import expert_waypoints, trajectory
from fakesim_hil import Client
from fakesim_hil.gym import ENV_IDS, FakesimEnv

LAYOUT = 2


def test_registered_ids_make_envs_on_their_tasks(daemon) -> None:
    assert set(ENV_IDS.values()) <= set(gym.registry)
    cameras = ["agentview", "robot0_eye_in_hand"]
    env = gym.make(ENV_IDS[1], address=daemon.address, image_size=(64, 48), cameras=cameras, episode_ticks=3)
    try:
        obs, info = env.reset(seed=0)
        assert info["task"] == "cube_in_bowl"
        assert obs["pixels"]["agentview"].shape == (48, 64, 3) and obs["pixels"]["agentview"].dtype == np.uint8
        assert env.observation_space["pixels"].contains(obs["pixels"])
        assert obs["joint_pos"].shape == (6,)
        assert set(obs["pixels"]) == {"agentview", "robot0_eye_in_hand"}
        assert "is_success" not in info
        for _ in range(3):
            obs, reward, terminated, truncated, info = env.step(obs["joint_pos"])
        assert truncated and not terminated
        assert info["is_success"] is False and reward == 0.0
    finally:
        env.close()


def test_seeded_resets_are_deterministic(daemon) -> None:
    env = FakesimEnv(0, address=daemon.address, image_size=(48, 48), cameras=["agentview"], episode_ticks=50)
    try:
        runs = []
        for _ in range(2):
            obs, info = env.reset(seed=7)
            trace = [obs["joint_pos"]]
            for k in range(5):
                obs, *_ = env.step(np.full(6, 0.05 * k))
                trace.append(obs["joint_pos"])
            runs.append((info["init_state_index"], np.array(trace), obs["pixels"]["agentview"]))
        assert runs[0][0] == runs[1][0]
        np.testing.assert_array_equal(runs[0][1], runs[1][1])
        np.testing.assert_array_equal(runs[0][2], runs[1][2])
        other = {env.reset(seed=seed)[1]["init_state_index"] for seed in range(8)}
        assert len(other) > 1, "different seeds draw different layouts"
    finally:
        env.close()


def test_a_scripted_lift_succeeds_and_doing_nothing_fails(daemon, client: Client) -> None:
    start, waypoints = expert_waypoints(client, LAYOUT)
    env = FakesimEnv(0, address=daemon.address, image_size=(32, 32), cameras=["agentview"], episode_ticks=500)
    try:
        env.reset(options={"init_state_index": LAYOUT})
        np.testing.assert_array_equal(env.unwrapped.client.robot_state().ctrl_targets, start)
        for action in trajectory(start, waypoints):
            env.step(action)
        assert env.end_episode() is True

        obs, _ = env.reset(options={"init_state_index": LAYOUT})
        for _ in range(10):
            obs, *_ = env.step(obs["joint_pos"])
        assert env.end_episode() is False
    finally:
        env.close()


def test_step_before_reset_and_a_wrong_action_shape_are_refused(daemon) -> None:
    env = FakesimEnv(0, address=daemon.address, image_size=(32, 32))
    try:
        with pytest.raises(RuntimeError):
            env.step(np.zeros(6))
        env.reset(seed=1)
        with pytest.raises(ValueError):
            env.step(np.zeros(5))
    finally:
        env.close()


@pytest.mark.parametrize("cameras", [["agentview"], []], ids=["a camera", "no camera"])
def test_gymnasiums_check_env_passes_with_an_env_that_starts_its_own_daemon(fakesim_bin: str, cameras: list[str]) -> None:
    from gymnasium.utils.env_checker import check_env

    # Made without an address, as check_env makes its second env: each starts a daemon of its own.
    env = gym.make(ENV_IDS[0], daemon_bin=fakesim_bin, image_size=(32, 32), cameras=cameras, episode_ticks=5)
    assert env.unwrapped.client.connection.address.startswith("unix:"), "its own daemon on a Unix socket"
    assert ("pixels" in env.observation_space.spaces) == bool(cameras)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # gymnasium reports its findings as warnings
            # Two pieces of advice the env declines: actions stay joint targets in radians (not
            # [-1, 1]) and joint velocities have no bound.
            warnings.filterwarnings("ignore", message=".*recommend using a symmetric and normalized space")
            warnings.filterwarnings("ignore", message=".*Box observation space (minimum|maximum) value is .*infinity")
            check_env(env.unwrapped)
    finally:
        env.close()
    assert env.unwrapped.daemon.process.poll() is not None, "closing the env stops its daemon"


def test_two_envs_run_episodes_side_by_side(fakesim_bin: str) -> None:
    envs = [FakesimEnv(task, daemon_bin=fakesim_bin, image_size=(32, 32), cameras=["agentview"], episode_ticks=3) for task in (0, 1)]
    try:
        started = [env.reset(seed=3)[1] for env in envs]
        assert [info["task"] for info in started] == ["lift_cube", "cube_in_bowl"]
        for _ in range(3):
            results = [env.step(env.action_space.sample()) for env in envs]
        for _, reward, terminated, truncated, info in results:
            assert truncated and not terminated
            assert info["is_success"] is False and reward == 0.0, "judged by each env's own daemon, over the API"
    finally:
        for env in envs:
            env.close()


def test_an_env_without_cameras_draws_nothing_and_has_no_image_keys(fakesim_bin: str, tmp_path) -> None:
    env = FakesimEnv(0, daemon_bin=fakesim_bin, runs_dir=str(tmp_path), episode_ticks=4)
    try:
        assert set(env.observation_space.spaces) == {"joint_pos", "joint_vel"}
        for seed in range(2):
            obs, info = env.reset(seed=seed)
            assert set(obs) == {"joint_pos", "joint_vel"} and env.observation_space.contains(obs)
            truncated = False
            while not truncated:
                obs, _, _, truncated, info = env.step(obs["joint_pos"])
            assert set(obs) == {"joint_pos", "joint_vel"}
            frames = tmp_path / info["run"] / "frames"
            assert frames.is_dir() and not any(frames.iterdir()), "the run journaled no frame"
        assert env.render() is None
    finally:
        env.close()


def test_an_episode_is_the_same_bit_for_bit_with_and_without_images(daemon) -> None:
    def episode(cameras: list[str]) -> tuple[np.ndarray, str]:
        env = FakesimEnv(0, address=daemon.address, cameras=cameras, image_size=(32, 24), episode_ticks=12)
        try:
            obs, _ = env.reset(seed=5)
            trace = [np.concatenate([obs["joint_pos"], obs["joint_vel"]])]
            truncated = False
            k = 0
            while not truncated:
                obs, _, _, truncated, info = env.step(obs["joint_pos"] + 0.02 * np.sin(np.arange(6) + k))
                trace.append(np.concatenate([obs["joint_pos"], obs["joint_vel"]]))
                k += 1
            assert ("pixels" in obs) == bool(cameras)
            return np.array(trace), info["validation_json"]
        finally:
            env.close()

    plain, plain_report = episode([])
    pictured, pictured_report = episode(["agentview", "robot0_eye_in_hand"])
    assert plain.tobytes() == pictured.tobytes()
    assert plain_report == pictured_report
