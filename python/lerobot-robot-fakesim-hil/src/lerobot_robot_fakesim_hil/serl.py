"""LeRobot's HIL-SERL learner and actor, ``python -m lerobot.rl.learner`` and ``lerobot.rl.actor``,
with five LeRobot 0.6.1 bugs worked around: ``python -m lerobot_robot_fakesim_hil.serl learner ARGS``
and ``... serl actor ARGS`` take LeRobot's own arguments and run LeRobot's own main.

- Without an offline dataset (``dataset`` unset, which ``TrainRLServerPipelineConfig`` allows:
  "In RL, we don't need an offline dataset") the configuration check stops on
  ``self.dataset.repo_id``. The check runs here with a stand-in dataset, removed after it.
- ``env.processor.reset.fixed_reset_joint_positions`` is typed ``Any``, which LeRobot's
  configuration library (draccus) cannot write back: once it is set, the learner stops on its
  first log line (``cfg.to_dict()``: "typing.Any cannot be used with isinstance()"). It is typed
  here as what it holds, a list of joint positions.
- ``RobotEnv.step`` takes the joints from the action's first dimension, where the policy's action
  holds its batch of one (only make_processors' inverse-kinematics steps, for end-effector
  actions, take it off): joint actions stop on an ``IndexError``. The environment here takes
  the batch off first.
- ``RobotEnv`` declares its actions in [-1, 1] and hands them on to the robot unscaled, and the
  learner trains on the actions as the robot took them (it normalises observations only), while
  the policy acts in [-1, 1]: joint actions must be [-1, 1] all the way. The environment here
  scales them onto each joint's calibrated range (``ACTION_SCALE``; the robot with
  ``use_degrees=false``), and the fakesim_intervention teleoperator reports the leader so.
- ``gym_manipulator.make_robot_env`` never hands ``env.processor.reset.reset_time_s`` to
  ``RobotEnv``, which then waits its default 5 s at every reset. On the twin the reset is done
  once the arm is back, and the wait would make most of a short run. The environment's wait is
  set from the configuration here.

One more for the arm: in ``hil`` the daemon refuses an action that would put the tool into the
table, a joint past its range or a contact the twin's preview foresees (nothing moves), and
LeRobot's actor stops on the error, then waits for the learner forever. The environment here
logs such a refusal and ends the episode (truncated) with the joints as read, so SAC goes on
from a reset (an environment with cameras still stops: its frames come with a tick). The
reset's own goals, a straight line in joint space, may be refused alike: each is skipped
(``JointBus.sync_write``).

Both need LeRobot's default ``policy.concurrency`` (threads): with processes, the children
import LeRobot afresh."""

from __future__ import annotations

import logging
import sys
from typing import Any

import numpy as np

from fakesim_hil.errors import FakesimError

from lerobot.configs.default import DatasetConfig
from lerobot.envs import HILSerlRobotEnvConfig
from lerobot.envs.configs import ResetConfig
from lerobot.rl import actor, gym_manipulator, learner
from lerobot.rl.train_rl import TrainRLServerPipelineConfig
from lerobot.teleoperators.utils import TeleopEvents

from .joint_bus import ACTION_SCALE, REFUSED_TARGETS

_validate = TrainRLServerPipelineConfig.validate


def _validate_without_dataset(config: TrainRLServerPipelineConfig) -> None:
    """LeRobot's check, with a stand-in dataset for the checks that read one when none is set."""
    if config.dataset is not None:
        return _validate(config)
    config.dataset = DatasetConfig(repo_id="")
    try:
        _validate(config)
    finally:
        config.dataset = None


class _RobotEnv(gym_manipulator.RobotEnv):
    """LeRobot's environment, the policy's batch of one taken off its action, scaled from [-1, 1]
    onto the joints' calibrated ranges; an action the daemon refuses for its target ends the
    episode with the arm held."""

    def step(self, action: Any) -> Any:
        if self.robot.config.use_degrees:
            raise ValueError("HIL-SERL's joint actions span the joints' ranges: set --env.robot.use_degrees=false")
        try:
            return super().step(action.reshape(-1) * ACTION_SCALE)
        except FakesimError as refusal:
            if refusal.reason not in REFUSED_TARGETS or self._image_keys:
                raise
            logging.warning("the daemon refused the step's action, the arm holds and the episode ends: %s", refusal)
            reason = refusal.reason
        # Read, not ticked: a tick holding the last targets may be refused alike (the arm still
        # on its way to them).
        positions = self.robot.positions()
        self._raw_joint_positions = {f"{name}.pos": positions[f"{name}.pos"] for name in self._joint_names}
        agent_pos = np.array(list(self._raw_joint_positions.values()))
        obs = {"agent_pos": agent_pos, "pixels": {}, **self._raw_joint_positions}
        self.current_step += 1
        return obs, 0.0, False, True, {TeleopEvents.IS_INTERVENTION: False, "refused": reason}


def make_robot_env(cfg: HILSerlRobotEnvConfig) -> tuple[Any, Any]:
    """LeRobot's environment and teleoperator, the environment's reset wait as configured."""
    env, teleop = gym_manipulator.make_robot_env(cfg)
    if cfg.processor.reset is not None and isinstance(env, gym_manipulator.RobotEnv):
        env.reset_time_s = cfg.processor.reset.reset_time_s
    return env, teleop


def main() -> None:
    """Runs LeRobot's learner or actor (the first argument), the rest of the arguments theirs."""
    mains = {"learner": learner.train_cli, "actor": actor.actor_cli}
    if len(sys.argv) < 2 or sys.argv[1] not in mains:
        sys.exit(f"usage: python -m lerobot_robot_fakesim_hil.serl {{{','.join(mains)}}} [LeRobot's arguments]")
    role = sys.argv.pop(1)
    ResetConfig.__annotations__["fixed_reset_joint_positions"] = "list[float] | None"
    TrainRLServerPipelineConfig.validate = _validate_without_dataset
    gym_manipulator.RobotEnv = _RobotEnv
    actor.make_robot_env = make_robot_env
    mains[role]()


if __name__ == "__main__":
    main()
