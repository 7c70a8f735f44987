"""lerobot-eval's batch on the env plugin: LeRobot's own rollout over the plugin's vector env of two
slots, every slot's tick sent before any answer is read (one round trip a batch step)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from lerobot.scripts.lerobot_eval import rollout
from lerobot_env_fakesim_hil import FakesimHilEnvConfig
from lerobot_env_fakesim_hil.env import EPISODES_FILE

from fakesim_hil.vector import FakesimVectorEnv

EPISODE_LENGTH = 4


class HoldPolicy(torch.nn.Module):
    """Asks each slot for the joints where they are, nudging the shoulder by the step count."""

    def __init__(self) -> None:
        super().__init__()
        self.steps = 0

    def reset(self) -> None:
        self.steps = 0

    def select_action(self, observation: dict[str, Any]) -> torch.Tensor:
        self.steps += 1
        action = observation["observation.state"].clone()
        action[:, 0] += self.steps
        return action


def test_lerobot_rollout_steps_the_slots_as_one_batch(fakesim_bin: str, tmp_path: Path) -> None:
    config = FakesimHilEnvConfig(
        cameras=[], episode_length=EPISODE_LENGTH, init_states=[1, 4], daemon_bin=fakesim_bin, runs_dir=str(tmp_path)
    )
    vector = config.create_envs(2, use_async_envs=False)[config.type][0]
    assert isinstance(vector, FakesimVectorEnv)
    # Each slot's halves of a step, in the order the batch runs them.
    order: list[tuple[str, int]] = []
    for slot, env in enumerate(vector.envs):
        send, finish = env.step_send, env.step_finish
        env.step_send = lambda action, slot=slot, send=send: (order.append(("send", slot)), send(action))[1]
        env.step_finish = lambda pending, slot=slot, finish=finish: (order.append(("read", slot)), finish(pending))[1]
    env_pre, env_post = config.get_env_processors()
    try:
        result = rollout(vector, HoldPolicy(), env_pre, env_post, lambda o: o, lambda a: a, seeds=[3, 8], return_observations=True)
        tasks = vector.call("task_description")
    finally:
        vector.close()

    assert order == [("send", 0), ("send", 1), ("read", 0), ("read", 1)] * EPISODE_LENGTH
    assert result["action"].shape == (2, EPISODE_LENGTH, 6)
    assert result["done"][:, -1].all() and not result["done"][:, :-1].any()
    # Each slot stepped its own twin: its shoulder turned after the nudges, from its own start.
    states = result["observation"]["observation.state"]
    assert states.shape == (2, EPISODE_LENGTH + 1, 6)
    assert (states[:, -1, 0] > states[:, 0, 0]).all()
    # lerobot's success at the last step is each slot's daemon's own judgement of its episode.
    records = [(tmp_path / f"env-{slot}" / EPISODES_FILE).read_text().splitlines() for slot in range(2)]
    assert [len(lines) for lines in records] == [1, 1]
    judged = [json.loads(lines[0]) for lines in records]
    assert result["success"][:, -1].tolist() == [record["success"] for record in judged]
    assert {record["init_state_index"] for record in judged} <= {1, 4}
    assert list(tasks) == [vector.envs[0].instruction] * 2
