"""Runs the Ray evaluation of test_ray_eval.py on a one-node cluster of its own (``ray start
--head`` on 127.0.0.1, joined by address as a driver joins a real cluster) and writes the report as
JSON: ``python ray_cluster_run.py OUT.json [--kill] [--checkpoint DIR EPISODES.json]``
(``--kill``: SIGKILL the daemon of the first result's actor, then kill the actor of the third
result outright and wait for its daemon to end with it; ``--checkpoint``: the LeRobot policy
saved in DIR on the jobs and `EpisodeOptions` of EPISODES.json, instead of the drift). The test runs it in a network
namespace holding only loopback, so Ray, which binds every interface, sends nothing off the
machine."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import ray

from fakesim_hil.evaluation import EpisodeOptions, Job, jobs_grid
from fakesim_hil.lerobot_policy import LeRobotPolicy
from fakesim_hil.ray_eval import DAEMON_RESOURCE, WORKER_NICENESS, evaluate
from processes import wait_gone

#: The episodes of the test: short, one small camera, the model's 20 Hz.
OPTIONS = EpisodeOptions(episode_ticks=15, cameras=("agentview",), image_size=(32, 24), control_period_s=0.05)
#: 2 tasks × 3 layouts × 2 seeds.
JOBS = jobs_grid(["lift_cube", "push_to_target"], [0, 1, 2], [0, 1])


class Drift:
    """A deterministic policy: every joint a little further along a fixed direction each tick."""

    def __call__(self, observation: dict[str, Any]) -> np.ndarray:
        return observation["joint_pos"] + np.array([0.04, -0.03, 0.05, 0.02, -0.04, 0.06])


#: What ``ray start`` prints once the node is up.
READY = "Ray runtime started"
#: The head node's GCS address (the namespace is the test's own, so the default port is free).
HEAD = "127.0.0.1:6379"


@contextlib.contextmanager
def head_node() -> Iterator[None]:
    """A head node of 2 CPUs and 2 daemon slots on loopback, its workers at niceness 0, for as
    long as the block runs; stopped by ending its ``ray start --block`` (not ``ray stop``, which
    would stop every Ray of the user on the machine)."""
    ray_bin = Path(sys.executable).with_name("ray")
    with tempfile.TemporaryDirectory(prefix="ray-") as scratch:
        head = subprocess.Popen(
            [
                str(ray_bin), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={HEAD.rsplit(':', 1)[1]}",
                "--num-cpus=2", f"--resources={json.dumps({DAEMON_RESOURCE: 2})}", "--include-dashboard=false",
                "--disable-usage-stats", f"--temp-dir={scratch}",
            ],
            env={**os.environ, WORKER_NICENESS: "0"},
            start_new_session=True,
            stdout=subprocess.PIPE,
            text=True,
        )
        started = threading.Event()

        def read_output() -> None:
            assert head.stdout is not None
            for line in head.stdout:
                sys.stderr.write(line)
                if READY in line:
                    started.set()
            started.set()

        threading.Thread(target=read_output, daemon=True).start()
        try:
            if not started.wait(timeout=120) or head.poll() is not None:
                raise RuntimeError(f"ray start --head did not report {READY!r}")
            yield
        finally:
            head.send_signal(signal.SIGTERM)
            try:
                head.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(head.pid, signal.SIGKILL)
                head.wait()


def run_isolated(out_dir: Path, *args: str) -> dict[str, Any]:
    """Runs this script in a fresh network namespace (loopback only) and reads its output."""
    out = out_dir / "ray.json"
    isolated = ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    done = subprocess.run(
        [*isolated, sys.executable, __file__, str(out), *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    return json.loads(out.read_text())


def episodes(args: list[str]) -> tuple[Any, list[Job], EpisodeOptions]:
    """The policy, jobs and options of a run: the drift on `JOBS`, or ``--checkpoint DIR FILE``."""
    if "--checkpoint" not in args:
        return Drift(), JOBS, OPTIONS
    at = args.index("--checkpoint")
    spec = json.loads(Path(args[at + 2]).read_text())
    options = spec["options"]
    options = EpisodeOptions(**{**options, "cameras": tuple(options["cameras"]), "image_size": tuple(options["image_size"])})
    return LeRobotPolicy(args[at + 1]), [Job(**job) for job in spec["jobs"]], options


def main() -> None:
    out, kill = sys.argv[1], "--kill" in sys.argv[2:]
    policy, jobs, options = episodes(sys.argv[2:])
    results: list[dict[str, Any]] = []
    killed_daemons: list[int] = []
    killed_actors: list[int] = []

    def kill_some(summary: dict[str, Any], actor: Any) -> None:
        results.append(summary)
        if not kill:
            return
        if len(results) == 1:
            killed_daemons.append(ray.get(actor.daemon_pid.remote()))
            os.kill(killed_daemons[0], signal.SIGKILL)
        elif len(results) == 3:
            # Its daemon gets SIGTERM when the actor's process dies.
            killed_actors.append(ray.get(actor.daemon_pid.remote()))
            ray.kill(actor, no_restart=True)

    with head_node():
        ray.init(address=HEAD, log_to_driver=False)
        try:
            report = evaluate(policy, jobs, n_actors=2, options=options, on_result=kill_some)
        finally:
            ray.shutdown()
    # Before the head node stops: only the actor's death can have ended that daemon.
    orphaned = [pid for pid in killed_actors if not wait_gone(pid)]
    with open(out, "w", encoding="utf-8") as file:
        json.dump({"report": report, "killed_daemons": killed_daemons, "killed_actors": killed_actors, "orphaned": orphaned}, file)


if __name__ == "__main__":
    main()
