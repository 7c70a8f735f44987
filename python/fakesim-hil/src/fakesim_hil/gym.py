"""Gymnasium env over the daemon's control tick: joint-target actions on the suite's tasks.

Importing this module registers one id per task of the ``so101_tabletop`` suite
(``fakesim_hil/LiftCube-v0`` ...); ``gymnasium.make("fakesim_hil.gym:fakesim_hil/LiftCube-v0")``
imports and registers in one go. Observations carry joint positions and velocities and, for the
cameras the env is given (none unless ``cameras`` names some), their images rendered after each
tick (at the fast render level unless asked otherwise); without cameras nothing is drawn, at
reset or step. The task's
success is judged by the daemon when the episode ends and comes back with ``StopEpisode``; it is
reported as ``info["is_success"]`` (and a reward of 1.0) on the last step, never in an
observation. An episode lasts ``episode_ticks`` steps (pass it to ``gymnasium.make``; its
``max_episode_steps`` adds a TimeLimit wrapper that truncates without the judgement, so use
``env.unwrapped.end_episode()`` with it).

A daemon runs one episode at a time, so an env given no address (and no ``$FAKESIM_HIL_ADDRESS``)
starts a sim-only daemon of its own on a Unix socket (``fakesim-hil`` from ``daemon_bin``,
``$FAKESIM_HIL_BIN`` or PATH; its ``--render-quality`` the env's level, its ``--config``
``daemon_config`` when given) and stops it on
``close()``: envs made side by side, as gymnasium's ``check_env`` makes them, each have theirs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from fakesim.v1 import session_pb2

from .client import Client, PendingTick, RenderQualityName, TickOptions, TickResult, UnitName
from .daemon import LocalDaemon
from .errors import FakesimError

#: The suite the registered envs run.
SUITE = "so101_tabletop"
#: Registered env ids by task index.
ENV_IDS = {
    0: "fakesim_hil/LiftCube-v0",
    1: "fakesim_hil/CubeInBowl-v0",
    2: "fakesim_hil/PushToTarget-v0",
    3: "fakesim_hil/StackCubes-v0",
}
#: Environment variable naming the daemon's address when none is passed.
ADDRESS_ENV = "FAKESIM_HIL_ADDRESS"


class FakesimEnv(gym.Env[dict[str, Any], np.ndarray]):
    """One task of the suite (by index or name), an episode per reset, one daemon control tick
    per step; ``unit`` the joint units of actions and positions, ``control_period_s`` the twin
    time a step advances (None: the daemon's period). ``cameras`` (names of the model's cameras;
    None or empty: none) are drawn at ``image_size`` (None: the daemon's default) and
    ``render_quality`` after every tick, the reset's first frames included, and only they are
    in the observation space."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(
        self,
        task_index: int | str = 0,
        *,
        address: str | None = None,
        client: Client | None = None,
        init_states: list[int] | None = None,
        episode_ticks: int = 200,
        image_size: tuple[int, int] | None = (96, 96),
        cameras: list[str] | None = None,
        render_quality: RenderQualityName = "fast",
        render_mode: str | None = None,
        unit: UnitName = "rad",
        control_period_s: float | None = None,
        daemon_bin: str | None = None,
        runs_dir: str | None = None,
        daemon_config: str | None = None,
        **connection: Any,
    ) -> None:
        address = address or os.environ.get(ADDRESS_ENV)
        #: The daemon this env started (None when it was given a client or an address).
        self.daemon: LocalDaemon | None = None
        # The runs directory made for that daemon (removed on close), when none was given.
        self._scratch: str | None = None
        if client is None and address is None:
            if runs_dir is None:
                runs_dir = self._scratch = tempfile.mkdtemp(prefix="fakesim-gym-")
            options = ["--render-quality", render_quality]
            if daemon_config is not None:
                options += ["--config", daemon_config]
            self.daemon = LocalDaemon.start(runs_dir, *options, binary=daemon_bin)
            address = self.daemon.address
        self.client = client or Client(address, **connection)
        self._owns_client = client is None
        self.render_quality = render_quality
        #: Joint units of actions and joint positions (``rad``, or LeRobot's SO-101 units).
        self.unit = unit
        model = self.client.model_info()
        period_s = model.control_period_s
        if control_period_s is not None:
            period_s = self.client.set_control_period(control_period_s).period_s
        # A frame per control tick.
        self.metadata = {**self.metadata, "render_fps": 1.0 / period_s}
        tasks = self.client.tasks(SUITE)
        if isinstance(task_index, str):
            names = [t.name for t in tasks]
            if task_index not in names:
                raise ValueError(f"no task {task_index!r} in {SUITE} (tasks: {names})")
            task_index = names.index(task_index)
        task = tasks[task_index]
        self.task_index = task_index
        #: The task's name (``lift_cube`` ...) and its instruction.
        self.task = task.name
        self.instruction = task.instruction
        #: The daemon's answer to the last StopEpisode of this env (None before one).
        self.last_stop: session_pb2.StopEpisodeResponse | None = None
        self.init_states = list(init_states) if init_states is not None else list(range(task.n_init_states))
        self.episode_ticks = episode_ticks
        self.cameras = list(cameras or ())
        unknown = sorted(set(self.cameras) - set(model.cameras))
        if unknown:
            raise ValueError(f"no cameras {unknown} on the twin (cameras: {list(model.cameras)})")
        if render_mode is not None and not self.cameras:
            raise ValueError(f"render_mode {render_mode!r} shows a camera's frames: name cameras")
        self.render_mode = render_mode
        # Without cameras the env draws nothing, so it offers no render mode.
        self.metadata["render_modes"] = list(FakesimEnv.metadata["render_modes"]) if self.cameras else []
        width, height = image_size or (model.default_image_width, model.default_image_height)
        # A camera with a profile comes at its own size; the others at image_size.
        own = {size.camera: (size.width, size.height) for size in model.camera_sizes}
        self._sizes = {camera: own.get(camera, (width, height)) for camera in self.cameras}
        # The options of every tick: the cameras only when there are some (no images asked).
        self._tick_options: TickOptions = {"unit": unit}
        if self.cameras:
            self._tick_options.update(
                cameras=self.cameras, width=width, height=height, render_quality=render_quality
            )
        self._keys = list(model.observation_keys)
        n = len(model.action_keys)
        if unit == "rad":
            low = np.array([j.range_min for j in model.joints], dtype=np.float64)
            high = np.array([j.range_max for j in model.joints], dtype=np.float64)
        else:
            low, high = joint_ranges(self.client, unit)
        self.action_space = spaces.Box(low=low, high=high, shape=(n,), dtype=np.float64)
        observation: dict[str, spaces.Space[Any]] = {
            "joint_pos": spaces.Box(low=low, high=high, shape=(n,), dtype=np.float64),
            "joint_vel": spaces.Box(low=-np.inf, high=np.inf, shape=(n,), dtype=np.float64),
        }
        if self.cameras:
            observation["pixels"] = self.pixels_space()
        self.observation_space = spaces.Dict(observation)
        self._steps = 0
        self._running = False
        self._closed = False
        # Draws each episode's look seed (see reset); unseeded until a reset gives a seed.
        self._look_seeds = np.random.default_rng()
        self._last: dict[str, Any] | None = None

    def pixels_space(self) -> spaces.Dict:
        """The space of the camera images: one H x W x 3 box per camera, at its profile's size if
        it has one (GetModelInfo.camera_sizes), else at image_size."""
        return spaces.Dict(
            {cam: spaces.Box(0, 255, shape=(h, w, 3), dtype=np.uint8) for cam, (w, h) in self._sizes.items()}
        )

    def _observation(self, result: TickResult) -> dict[str, Any]:
        """The observation of a tick's answer."""
        n = self.action_space.shape[0]
        # Views into the tick's own array: every tick answers a fresh one.
        observation = {"joint_pos": result.observation[:n], "joint_vel": result.observation[n : 2 * n]}
        if self.cameras:
            observation["pixels"] = result.images
        return observation

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Starts an episode on a layout: ``options["init_state_index"]``, else one drawn by the
        seed. The episode's look within the daemon's ``[variations]`` comes from a seed the
        env draws from a generator of its own, seeded by ``seed`` when given (so a seeded
        reset and those after it draw the same looks every run); ``info["seed"]`` names it."""
        super().reset(seed=seed)
        self._finish()
        if options and "init_state_index" in options:
            layout = int(options["init_state_index"])
        else:
            layout = int(self.init_states[self.np_random.integers(len(self.init_states))])
        # No daemon step budget: the env ends its episodes itself after episode_ticks. The reset
        # draws nothing: the first frames, when the env has cameras, come from the hold tick
        # below, at the env's own size and level.
        if seed is not None:
            self._look_seeds = np.random.default_rng(seed)
        look_seed = int(self._look_seeds.integers(2**63))
        started = self.client.reset(SUITE, self.task_index, layout, max_steps=0, cameras=(), seed=look_seed)
        self._running = True
        self._steps = 0
        # A hold tick on the current targets renders the first frames and settles the layout.
        targets = np.array(self.client.robot_state(self.unit).ctrl_targets)
        self._last = self._observation(self.client.tick(targets, **self._tick_options))
        info = {
            "run": started.run,
            "task": started.task.name,
            "init_state_index": layout,
            "instruction": self.instruction,
            "seed": look_seed,
        }
        return self._last, info

    def step(self, action: np.ndarray) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """One control tick toward the joint targets; the last step reports the judged success.
        Alone, the tick is a blocking call (a future's answer comes through grpcio's polling
        thread, a hand-off that costs more than the call on a busy machine)."""
        return self._after_tick(self.client.tick(self._checked(action), **self._tick_options))

    def step_send(self, action: np.ndarray) -> PendingTick:
        """The first half of `step` for a batch: checks the action and sends its tick without
        waiting for the answer, so a vector env can have every env's tick in flight at once."""
        return self.client.tick_async(self._checked(action), **self._tick_options)

    def step_finish(self, pending: PendingTick) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """The second half of `step` for a batch: waits for the tick's answer and ends the
        episode after its last step."""
        return self._after_tick(pending.result())

    def _checked(self, action: np.ndarray) -> np.ndarray:
        """The action as a float array of the action space's shape, once an episode runs."""
        if not self._running:
            raise RuntimeError("call reset() before step()")
        action = np.asarray(action, dtype=np.float64)
        if action.shape != self.action_space.shape:
            raise ValueError(f"action must have shape {self.action_space.shape}, not {action.shape}")
        return action

    def _after_tick(self, result: TickResult) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """A step's outcome from its tick's answer; the episode's last step ends it."""
        self._last = self._observation(result)
        self._steps += 1
        info: dict[str, Any] = {}
        truncated = self._steps >= self.episode_ticks
        reward = 0.0
        if truncated:
            success = bool(self._finish())
            info["is_success"] = success
            if self.last_stop is not None:
                info["run"] = self.last_stop.run
                info["validation_json"] = self.last_stop.validation_json
            reward = 1.0 if success else 0.0
        return self._last, reward, False, truncated, info

    def end_episode(self) -> bool:
        """Ends the running episode now and returns the daemon's judgement of it."""
        return bool(self._finish())

    def _finish(self) -> bool | None:
        """Stops our running episode, if any, and returns the daemon's judgement of it."""
        if not self._running:
            return None
        self._running = False
        try:
            self.last_stop = self.client.stop()
        except FakesimError as refused:
            if refused.reason != "not_running":
                raise
            # Ended by another client of the daemon: nothing to judge here.
            return None
        return bool(self.last_stop.success)

    def render(self) -> np.ndarray | None:
        """The first camera's latest frame (``rgb_array``)."""
        if self.render_mode != "rgb_array" or self._last is None:
            return None
        return self._last["pixels"][self.cameras[0]]

    def close(self) -> None:
        """Ends a running episode and closes the connection and the daemon the env opened
        (again: nothing)."""
        if self._closed:
            return
        self._closed = True
        self._finish()
        if self._owns_client:
            self.client.close()
        if self.daemon is not None:
            self.daemon.stop()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)


def joint_ranges(client: Client, unit: UnitName) -> tuple[np.ndarray, np.ndarray]:
    """The twin's joint ranges in ``unit``, as the daemon's conversion states them: each joint's
    from the refusal of a preview (which moves nothing) with that joint far out of range; held
    1e-3 inside, the range being stated to three decimals."""
    targets = list(client.robot_state(unit).ctrl_targets)
    low, high = np.empty(len(targets)), np.empty(len(targets))
    for i in range(len(targets)):
        probe = list(targets)
        probe[i] = 1e9
        try:
            client.preview_actions([probe], unit=unit)
        except FakesimError as refused:
            if refused.reason != "out_of_range" or "range" not in refused.metadata:
                raise
            lo, hi = (float(v) for v in refused.metadata["range"].strip("[]").split(","))
        else:
            raise RuntimeError(f"the daemon took joint {i} at 1e9 {unit}")
        low[i], high[i] = lo + 1e-3, hi - 1e-3
    return low, high


def register_envs() -> None:
    """Registers one env id per task of the suite (idempotent)."""
    for task_index, env_id in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=FakesimEnv, kwargs={"task_index": task_index}, disable_env_checker=True)


register_envs()
