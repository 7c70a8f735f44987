"""A LeRobot policy checkpoint as an evaluation policy (needs ``lerobot``): every route of
`fakesim_hil.evaluation` and `fakesim_hil.ray_eval` takes it where it takes a callable."""

from __future__ import annotations

import os
from typing import Any

import numpy as np


class LeRobotPolicy:
    """The policy saved at ``path`` (as ``lerobot-train`` or ``save_pretrained`` writes it, with
    its pre- and postprocessors), called on the Gym env's observation as lerobot-eval calls it:
    ``joint_pos`` as ``observation.state``, each camera of ``pixels`` as
    ``observation.images.<camera>``, ``task`` as the instruction. Run its episodes in the units
    it was trained in (`EpisodeOptions.unit`, ``lerobot_degrees`` for so101_follower datasets).

    It is loaded on first use, in the process that uses it, and pickles as its path, so a Ray
    actor loads its own copy."""

    def __init__(self, path: str | os.PathLike[str], *, device: str = "cpu", task: str = "") -> None:
        self.path, self.device, self.task = str(path), device, task
        self._loaded: tuple[Any, Any, Any] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "device": self.device, "task": self.task, "_loaded": None}

    def _load(self) -> tuple[Any, Any, Any]:
        """The policy, its preprocessor and its postprocessor, on ``device``."""
        if self._loaded is None:
            from lerobot.configs.policies import PreTrainedConfig
            from lerobot.policies.factory import get_policy_class, make_pre_post_processors

            config = PreTrainedConfig.from_pretrained(self.path)
            config.device = self.device
            policy = get_policy_class(config.type).from_pretrained(self.path, config=config)
            policy.eval()
            preprocessor, postprocessor = make_pre_post_processors(
                policy_cfg=config,
                pretrained_path=self.path,
                preprocessor_overrides={"device_processor": {"device": self.device}},
            )
            self._loaded = (policy, preprocessor, postprocessor)
        return self._loaded

    def reset(self) -> None:
        """Forgets the running episode (the policy's queued actions)."""
        self._load()[0].reset()

    def __call__(self, observation: dict[str, Any]) -> np.ndarray:
        """Six joint targets for one observation of the Gym env."""
        return self.act_batch(observation)[0]

    def act_batch(self, observations: dict[str, Any]) -> np.ndarray:
        """Joint targets (one row per slot) for a vector env's stacked observations, in one call
        of the policy, as lerobot-eval makes it (a policy that queues actions keeps one queue
        row per slot); one observation counts as a batch of one."""
        import torch
        from lerobot.envs.utils import preprocess_observation

        policy, preprocessor, postprocessor = self._load()
        batch = preprocess_observation({"agent_pos": observations["joint_pos"], "pixels": observations["pixels"]})
        batch["task"] = [self.task] * len(batch["observation.state"])
        with torch.inference_mode():
            actions = postprocessor(policy.select_action(preprocessor(batch)))
        return actions.to("cpu").numpy()
