"""Configuration of the ``fakesim_hil`` env type (``--env.type=fakesim_hil``)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium as gym
from gymnasium.vector import AutoresetMode
from lerobot.configs import FeatureType, PolicyFeature
from lerobot.envs.configs import EnvConfig
from lerobot.utils.constants import ACTION, OBS_IMAGES, OBS_STATE

from fakesim_hil.cameras import STANDARD_SIZES
from fakesim_hil.vector import FakesimVectorEnv

from .env import LeRobotFakesimEnv

#: Joints of LeRobot's so101_follower, in its action and state order (its ``<motor>.pos`` keys).
MOTORS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")


@EnvConfig.register_subclass("fakesim_hil")
@dataclass
class FakesimHilEnvConfig(EnvConfig):
    """A task of the so101_tabletop suite on the twin, one daemon per batch slot of lerobot-eval."""

    # Task name of the suite: lift_cube, cube_in_bowl, push_to_target, stack_cubes or reach_target.
    task: str | None = "lift_cube"
    # Layouts (init_state_index) each episode's seed draws from; empty: every layout of the task.
    init_states: list[int] = field(default_factory=list)
    # Control rate, the policy's (its dataset's) fps: each step holds 1/fps of twin time.
    fps: int = 30
    # Steps per episode; the daemon judges success when the episode ends after the last.
    episode_length: int = 150
    # Twin cameras given to the policy (observation.images.<name>), their size and render level;
    # the standard profile cameras front and wrist come at their own size, 640x480.
    cameras: list[str] = field(default_factory=lambda: ["agentview", "robot0_eye_in_hand"])
    observation_width: int = 128
    observation_height: int = 96
    render_quality: str = "fast"
    # Joint units as so101_follower: degrees (default) or -100..100 for joints 1-5.
    use_degrees: bool = True
    # Daemons to use, one per batch slot (HOST:PORT); empty: each slot starts a sim-only daemon
    # of its own on 127.0.0.1:0 (daemon_bin, else $FAKESIM_HIL_BIN, else fakesim-hil on PATH)
    # and stops it when lerobot-eval closes its envs.
    addresses: list[str] = field(default_factory=list)
    daemon_bin: str | None = None
    # The daemon config file each started daemon reads (--config): its [backdrop] and
    # [variations] tables give every slot's cameras their backdrops and each episode a look
    # drawn from its seed, recorded in its summary.json. None: the defaults (nothing varies).
    daemon_config: str | None = None
    # Where slot i keeps its daemon's runs (summary.json per episode) and episodes.jsonl, the
    # judgement and validation report of each episode it ran: RUNS_DIR/env-i. None: a temporary
    # directory per started daemon, removed with it, and no records.
    runs_dir: str | None = None
    features: dict[str, PolicyFeature] = field(default_factory=dict)
    features_map: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.fps <= 0 or self.episode_length <= 0:
            raise ValueError(f"fps and episode_length must be positive, not {self.fps} and {self.episode_length}")
        joints = len(MOTORS)
        self.features = {
            ACTION: PolicyFeature(type=FeatureType.ACTION, shape=(joints,)),
            "agent_pos": PolicyFeature(type=FeatureType.STATE, shape=(joints,)),
        }
        self.features_map = {ACTION: ACTION, "agent_pos": OBS_STATE}
        size = (self.observation_height, self.observation_width)
        for camera in self.cameras:
            key = f"pixels/{camera}"
            self.features[key] = PolicyFeature(type=FeatureType.VISUAL, shape=(*STANDARD_SIZES.get(camera, size), 3))
            self.features_map[key] = f"{OBS_IMAGES}.{camera}"

    @property
    def gym_kwargs(self) -> dict:
        """Keyword arguments of every slot's `LeRobotFakesimEnv`."""
        return {
            "task_index": self.task,
            "init_states": list(self.init_states) or None,
            "episode_ticks": self.episode_length,
            "image_size": (self.observation_width, self.observation_height),
            "cameras": list(self.cameras),
            "render_quality": self.render_quality,
            "render_mode": "rgb_array" if self.cameras else None,
            "unit": "lerobot_degrees" if self.use_degrees else "lerobot_range",
            "control_period_s": 1.0 / self.fps,
            "daemon_bin": self.daemon_bin,
            "daemon_config": self.daemon_config,
        }

    def slot_kwargs(self, index: int) -> dict:
        """`gym_kwargs` with slot ``index``'s daemon address and directories."""
        kwargs = dict(self.gym_kwargs)
        if self.addresses:
            kwargs["address"] = self.addresses[index]
        if self.runs_dir is not None:
            slot = Path(self.runs_dir) / f"env-{index}"
            kwargs["records_dir"] = str(slot)
            if not self.addresses:
                kwargs["runs_dir"] = str(slot)
        return kwargs

    def create_envs(self, n_envs: int, use_async_envs: bool = False) -> dict[str, dict[int, gym.vector.VectorEnv]]:
        """One vector env of ``n_envs`` slots, each on its own daemon: in this process a
        `FakesimVectorEnv`, which sends every slot's tick before reading any answer (one round
        trip a batch step); with ``use_async_envs`` and more than one slot, gymnasium's
        `AsyncVectorEnv`, a subprocess per slot."""
        if self.addresses and len(self.addresses) < n_envs:
            raise ValueError(f"{n_envs} envs need as many daemon addresses, {len(self.addresses)} given")
        makers = [functools.partial(LeRobotFakesimEnv, **self.slot_kwargs(i)) for i in range(n_envs)]
        if use_async_envs and n_envs > 1:
            vector = gym.vector.AsyncVectorEnv(makers, autoreset_mode=AutoresetMode.SAME_STEP, context="forkserver")
        else:
            # No autoreset: the slots' episodes all end at lerobot-eval's last step
            # (``_max_episode_steps``), and its next batch resets them itself.
            vector = FakesimVectorEnv(makers)
        return {self.type: {0: vector}}
