"""lerobot-eval (LeRobot's own CLI) on the twin through the env plugin: two daemons it starts, or
two at addresses given, running a tiny ACT policy the test trains to replay an expert's lift on
one layout, so some episodes succeed and some fail."""

from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from lerobot.configs import FeatureType, NormalizationMode, PolicyFeature
from lerobot.policies.act import ACTConfig, ACTPolicy
from lerobot.policies.factory import make_pre_post_processors

from expert import expert_waypoints, trajectory
from fakesim_hil import Client
from fakesim_hil.daemon import LocalDaemon
from fakesim_hil.evaluation import EpisodeOptions, Job, evaluate_sequential, evaluate_vectorised
from fakesim_hil.gym import FakesimEnv
from fakesim_hil.lerobot_policy import LeRobotPolicy
from lerobot_support import lerobot_cli, lerobot_home  # noqa: F401 (fixture)
from ray_cluster_run import run_isolated

CAMERA = "agentview"
WIDTH, HEIGHT = 64, 48
FPS = 20
#: The layout the expert's lift is recorded on, and one whose cube lies elsewhere.
TRAINED_LAYOUT, OTHER_LAYOUT = 2, 5
#: Ticks held at the end of the lift before the daemon judges the episode.
HOLD_TICKS = 10
TRAINING_STEPS = 2000


class FixedFeatures(torch.nn.Module):
    """Stands in for ACT's frozen image backbone while training: the one image's feature map."""

    def __init__(self, features: dict[str, torch.Tensor]) -> None:
        super().__init__()
        self.features = features

    def forward(self, _image: torch.Tensor) -> dict[str, torch.Tensor]:
        return self.features


def expert_episode(address: str) -> tuple[dict[str, torch.Tensor], np.ndarray]:
    """The first observation of lift_cube on the trained layout (state and image, as lerobot-eval
    hands them to a policy) and the expert's trajectory from it in LeRobot degrees, held at its
    end for `HOLD_TICKS`."""
    with Client(address) as client:
        start, waypoints = expert_waypoints(client, TRAINED_LAYOUT, unit="lerobot_degrees")
    actions = trajectory(start, waypoints)
    actions = np.concatenate([actions, np.repeat(actions[-1:], HOLD_TICKS, axis=0)])
    env = FakesimEnv(
        "lift_cube", address=address, image_size=(WIDTH, HEIGHT), cameras=[CAMERA], unit="lerobot_degrees", episode_ticks=len(actions)
    )
    try:
        first, _ = env.reset(options={"init_state_index": TRAINED_LAYOUT})
    finally:
        env.close()
    observation = {
        "observation.state": torch.tensor(first["joint_pos"], dtype=torch.float32)[None],
        f"observation.images.{CAMERA}": torch.tensor(first["pixels"][CAMERA]).permute(2, 0, 1).float()[None] / 255,
    }
    return observation, actions


def trained_act_policy(directory: Path, address: str) -> tuple[Path, int]:
    """A small ACT policy that acts in one chunk of a whole episode, trained until it replays the
    expert's lift from the trained layout's first observation; saved as lerobot-eval loads it.
    Returns its directory and the episode length."""
    observation, actions = expert_episode(address)
    chunk = len(actions)
    config = ACTConfig(
        input_features={
            "observation.state": PolicyFeature(type=FeatureType.STATE, shape=(6,)),
            f"observation.images.{CAMERA}": PolicyFeature(type=FeatureType.VISUAL, shape=(3, HEIGHT, WIDTH)),
        },
        output_features={"action": PolicyFeature(type=FeatureType.ACTION, shape=(6,))},
        normalization_mapping={
            "VISUAL": NormalizationMode.IDENTITY,
            "STATE": NormalizationMode.IDENTITY,
            "ACTION": NormalizationMode.MEAN_STD,
        },
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
        # One episode memorised: dropout only keeps the chunk from settling on it.
        dropout=0.0,
        chunk_size=chunk,
        n_action_steps=chunk,
        push_to_hub=False,
    )
    mean, std = actions.mean(axis=0), np.maximum(actions.std(axis=0), 1.0)
    torch.manual_seed(0)
    policy = ACTPolicy(config)
    policy.eval()
    # The backbone stays as initialised (eval mode, so its batch norms keep their statistics):
    # its features of the one image are computed once and the rest is trained on them.
    backbone = policy.model.backbone
    backbone.requires_grad_(False)
    with torch.no_grad():
        policy.model.backbone = FixedFeatures(backbone(observation[f"observation.images.{CAMERA}"]))
    batch = {
        **observation,
        "action": torch.tensor((actions - mean) / std, dtype=torch.float32)[None],
        "action_is_pad": torch.zeros(1, chunk, dtype=torch.bool),
    }
    optimiser = torch.optim.Adam([p for p in policy.parameters() if p.requires_grad], lr=3e-3)
    policy.train()
    for _ in range(TRAINING_STEPS):
        loss, _ = policy.forward(batch)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    policy.model.backbone = backbone
    policy.eval()
    policy.save_pretrained(directory)
    stats = {"action": {"mean": torch.tensor(mean, dtype=torch.float32), "std": torch.tensor(std, dtype=torch.float32)}}
    preprocessor, postprocessor = make_pre_post_processors(config, dataset_stats=stats)
    preprocessor.save_pretrained(directory)
    postprocessor.save_pretrained(directory)
    return directory, chunk


@pytest.fixture(scope="module")
def policy(daemon: LocalDaemon, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The trained policy, trained once for both routes, and its episode length."""
    return trained_act_policy(tmp_path_factory.mktemp("policy"), daemon.address)


@pytest.mark.parametrize("daemons", ["started by the env", "at addresses given"])
def test_lerobot_eval_counts_the_daemons_judgements(
    lerobot_home: Path, fakesim_bin: str, policy: tuple[Path, int], tmp_path: Path, daemons: str  # noqa: F811 (fixture)
) -> None:
    policy_dir, episode_length = policy
    # Runs kept inside the output directory, beside lerobot-eval's own results.
    output = tmp_path / "eval"
    runs = output / "runs"
    # Given daemons keep their runs where the env's own would, so the checks below read both alike.
    given = [LocalDaemon.start(runs / f"env-{i}", binary=fakesim_bin) for i in range(2)] if daemons == "at addresses given" else []
    where = [f"--env.addresses=[{','.join(d.address for d in given)}]"] if given else [f"--env.daemon_bin={fakesim_bin}"]
    try:
        evaluate(policy_dir, episode_length, runs, output, where)
    finally:
        for daemon in given:
            daemon.stop()
    check_judgements(runs, output, episode_length)


def evaluate(policy: Path, episode_length: int, runs: Path, output: Path, where: list[str]) -> None:
    """lerobot-eval of `policy`: 4 episodes of lift_cube on the trained and the other layout
    (each drawn by its episode's seed) over 2 slots, on the daemons `where` says."""
    lerobot_cli(
        "lerobot-eval",
        "--env.type=fakesim_hil",
        "--env.task=lift_cube",
        f"--env.episode_length={episode_length}",
        f"--env.fps={FPS}",
        f"--env.init_states=[{TRAINED_LAYOUT},{OTHER_LAYOUT}]",
        f"--env.cameras=[{CAMERA}]",
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


def check_judgements(runs: Path, output: Path, episode_length: int) -> None:
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
        assert record["validation"]["samples"] >= episode_length and "min_table_clearance_m" in record["validation"]
    successes = [record["success"] for record in judged]
    # The policy replays the lift where it learnt it and grasps nothing where the cube is not.
    assert successes == [record["init_state_index"] == TRAINED_LAYOUT for record in judged]
    assert True in successes and False in successes, f"the seeds drew both layouts: {judged}"
    metrics = info["per_task"][0]["metrics"]
    assert metrics["successes"] == successes
    assert metrics["sum_rewards"] == [1.0 if success else 0.0 for success in successes]
    assert info["overall"]["n_episodes"] == 4
    assert info["overall"]["pc_success"] == pytest.approx(100.0 * sum(successes) / len(successes))


def test_the_checkpoint_judged_alike_by_lerobot_eval_and_by_evaluate(
    policy: tuple[Path, int], daemon: LocalDaemon, daemon_factory, tmp_path: Path
) -> None:
    """The same checkpoint through `LeRobotPolicy`, one episode at a time, vectorised over two
    daemons (one batched policy call a step, as lerobot-eval makes it) and on two Ray actors
    (each loading its own copy), lifts where lerobot-eval's episodes lifted and nowhere else."""
    policy_dir, episode_length = policy
    options = EpisodeOptions(
        episode_ticks=episode_length,
        cameras=(CAMERA,),
        image_size=(WIDTH, HEIGHT),
        control_period_s=1.0 / FPS,
        unit="lerobot_degrees",
    )
    jobs = [Job("lift_cube", TRAINED_LAYOUT), Job("lift_cube", OTHER_LAYOUT)]
    checkpoint = LeRobotPolicy(policy_dir)
    with Client(daemon.address) as client:
        one_by_one = evaluate_sequential(client, checkpoint, jobs, options)
    # As it travels to a Ray actor: its path, loaded again where it is used.
    travelled = pickle.loads(pickle.dumps(checkpoint))
    vectorised = evaluate_vectorised([daemon.address, daemon_factory().address], travelled, jobs, options)
    spec = {"options": dataclasses.asdict(options), "jobs": [dataclasses.asdict(job) for job in jobs]}
    (tmp_path / "episodes.json").write_text(json.dumps(spec))
    on_ray = run_isolated(tmp_path, "--checkpoint", str(policy_dir), str(tmp_path / "episodes.json"))["report"]["episodes"]
    for summaries in (one_by_one, vectorised, on_ray):
        assert [(s["init_state_index"], s["success"]) for s in summaries] == [(TRAINED_LAYOUT, True), (OTHER_LAYOUT, False)]
        assert all(s["steps"] == episode_length for s in summaries)
