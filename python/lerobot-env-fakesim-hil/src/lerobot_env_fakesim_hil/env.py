"""One batch slot of ``lerobot-eval``: the Gym env over one daemon, in LeRobot's so101_follower terms."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from fakesim_hil import TickResult
from fakesim_hil.gym import FakesimEnv

#: Episode records the env appends to in its runs directory, one JSON line per judged episode.
EPISODES_FILE = "episodes.jsonl"


class LeRobotFakesimEnv(FakesimEnv):
    """The suite's env with LeRobot's observation layout: ``agent_pos`` (the six ``.pos`` joints of
    so101_follower, in LeRobot's units) and, with cameras, ``pixels`` (camera name to an H×W×3
    image).

    Every episode it judges (run to ``episode_ticks``) is appended to ``episodes.jsonl`` in
    ``records_dir`` when given: run id, task, layout, success and the daemon's validation report."""

    def __init__(self, *args: Any, records_dir: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.records_dir = Path(records_dir) if records_dir is not None else None
        n = self.action_space.shape[0]
        observation: dict[str, spaces.Space[Any]] = {"agent_pos": spaces.Box(-np.inf, np.inf, shape=(n,), dtype=np.float64)}
        if self.cameras:
            observation["pixels"] = self.pixels_space()
        self.observation_space = spaces.Dict(observation)
        #: How many steps ``lerobot-eval`` runs an episode for (it reads this attribute).
        self._max_episode_steps = self.episode_ticks
        #: The task's instruction, the ``task`` LeRobot gives language-conditioned policies.
        self.task_description = self.instruction
        self._layout: int | None = None

    def _observation(self, result: TickResult) -> dict[str, Any]:
        seen = super()._observation(result)
        if "pixels" in seen:
            return {"agent_pos": seen["joint_pos"], "pixels": seen["pixels"]}
        return {"agent_pos": seen["joint_pos"]}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Starts an episode as `FakesimEnv.reset` does, remembering its layout for the record."""
        observation, info = super().reset(seed=seed, options=options)
        self._layout = info["init_state_index"]
        return observation, info

    def _checked(self, action: np.ndarray) -> np.ndarray:
        """The action held inside the joint ranges, as the servos hold a real arm (a fresh
        policy may ask for more); `step` and the batch's `step_send` both come here."""
        action = np.clip(np.asarray(action, dtype=np.float64), self.action_space.low, self.action_space.high)
        return super()._checked(action)

    def _after_tick(self, result: TickResult) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """A step's outcome (`FakesimEnv`'s); the episode's last also records the daemon's
        judgement and report."""
        observation, reward, terminated, truncated, info = super()._after_tick(result)
        if "run" in info and self.records_dir is not None:
            record = {
                "run": info["run"],
                "task": self.task,
                "init_state_index": self._layout,
                "success": info["is_success"],
                "validation": json.loads(info["validation_json"] or "{}"),
            }
            self.records_dir.mkdir(parents=True, exist_ok=True)
            with open(self.records_dir / EPISODES_FILE, "a", encoding="utf-8") as out:
                out.write(json.dumps(record) + "\n")
        return observation, reward, terminated, truncated, info
