"""lerobot-eval (LeRobot's own CLI) on the twin through the env plugin: two daemons it starts, or two at addresses given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lerobot.configs import FeatureType, NormalizationMode, PolicyFeature
from lerobot.policies.act import ACTConfig, ACTPolicy
from lerobot.policies.factory import make_pre_post_processors

from fakesim_hil.daemon import LocalDaemon
from lerobot_support import lerobot_cli, lerobot_home  # noqa: F401 (fixture)

CAMERAS = ("agentview", "robot0_eye_in_hand")
WIDTH, HEIGHT = 64, 48


def tiny_act_policy(directory: Path) -> Path:
    """A freshly initialised, small ACT policy with so101_follower's features, saved as lerobot-eval loads it."""
    config = ACTConfig(
        input_features={
            "observation.state": PolicyFeature(type=FeatureType.STATE, shape=(6,)),
            **{f"observation.images.{c}": PolicyFeature(type=FeatureType.VISUAL, shape=(3, HEIGHT, WIDTH)) for c in CAMERAS},
        },
        output_features={"action": PolicyFeature(type=FeatureType.ACTION, shape=(6,))},
        normalization_mapping={kind: NormalizationMode.IDENTITY for kind in ("VISUAL", "STATE", "ACTION")},
        device="cpu",
        pretrained_backbone_weights=None,
        dim_model=32,
        n_heads=2,
        dim_feedforward=64,
        n_encoder_layers=1,
        n_decoder_layers=1,
        n_vae_encoder_layers=1,
        latent_dim=8,
        use_vae=False,
        chunk_size=10,
        n_action_steps=10,
        push_to_hub=False,
    )
    ACTPolicy(config).save_pretrained(directory)
    preprocessor, postprocessor = make_pre_post_processors(config)
    preprocessor.save_pretrained(directory)
    postprocessor.save_pretrained(directory)
    return directory


@pytest.mark.parametrize("daemons", ["started by the env", "at addresses given"])
def test_lerobot_eval_counts_the_daemons_judgements(
    lerobot_home: Path, fakesim_bin: str, tmp_path: Path, daemons: str  # noqa: F811 (fixture)
) -> None:
    policy = tiny_act_policy(tmp_path / "policy")
    runs, output = tmp_path / "runs", tmp_path / "eval"
    # Given daemons keep their runs where the env's own would, so the checks below read both alike.
    given = [LocalDaemon.start(runs / f"env-{i}", binary=fakesim_bin) for i in range(2)] if daemons == "at addresses given" else []
    where = [f"--env.addresses=[{','.join(d.address for d in given)}]"] if given else [f"--env.daemon_bin={fakesim_bin}"]
    try:
        evaluate(policy, runs, output, where)
    finally:
        for daemon in given:
            daemon.stop()
    check_judgements(runs, output)


def evaluate(policy: Path, runs: Path, output: Path, where: list[str]) -> None:
    """lerobot-eval of `policy`: 4 episodes of lift_cube over 2 slots, on the daemons `where` says."""
    lerobot_cli(
        "lerobot-eval",
        "--env.type=fakesim_hil",
        "--env.task=lift_cube",
        "--env.episode_length=12",
        "--env.fps=20",
        f"--env.observation_width={WIDTH}",
        f"--env.observation_height={HEIGHT}",
        *where,
        f"--env.runs_dir={runs}",
        f"--policy.path={policy}",
        "--policy.device=cpu",
        "--eval.n_episodes=4",
        "--eval.batch_size=2",
        # Both slots in this process (async forks a LeRobot import per slot: a minute on 2 cores).
        "--eval.use_async_envs=false",
        f"--output_dir={output}",
    )


def check_judgements(runs: Path, output: Path) -> None:
    """lerobot-eval's results are the daemons' own judgements, episode by episode."""
    info = json.loads((output / "eval_info.json").read_text())
    # Each slot's own daemon judged its episodes, in the order lerobot-eval ran them.
    slots = [[json.loads(line) for line in (runs / f"env-{i}" / "episodes.jsonl").read_text().splitlines()] for i in range(2)]
    assert [len(records) for records in slots] == [2, 2]
    judged = [slots[episode % 2][episode // 2] for episode in range(4)]
    for episode, record in enumerate(judged):
        summary = json.loads((runs / f"env-{episode % 2}" / record["run"] / "summary.json").read_text())
        assert summary["success"] == record["success"] == record["validation"]["success"]
        assert record["task"] == "lift_cube"
        assert record["validation"]["samples"] >= 12 and "min_table_clearance_m" in record["validation"]
    successes = [record["success"] for record in judged]
    metrics = info["per_task"][0]["metrics"]
    assert metrics["successes"] == successes
    assert metrics["sum_rewards"] == [1.0 if success else 0.0 for success in successes]
    assert info["overall"]["n_episodes"] == 4
    assert info["overall"]["pc_success"] == pytest.approx(100.0 * sum(successes) / len(successes))
