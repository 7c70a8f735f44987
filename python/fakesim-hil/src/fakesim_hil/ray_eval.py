"""Evaluation on Ray (``pip install fakesim-hil[ray]``): actors that each own one daemon on
loopback, and `evaluate` spreading jobs over a pool of them, retrying a job whose actor or daemon
died, into one aggregate report."""

from __future__ import annotations

import atexit
import json
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import grpc
import ray
from ray.exceptions import RayActorError

from .client import Client
from .daemon import LocalDaemon
from .errors import FakesimError
from .evaluation import EpisodeOptions, Job, Policy, aggregate, run_episode

log = logging.getLogger(__name__)

#: Custom resource a node declares per daemon it can host (``ray start --resources='{"fakesim_daemon": N}'``).
DAEMON_RESOURCE = "fakesim_daemon"
#: Custom resource of a node with a real SO-101 attached, for actors that must run beside the arm.
ARM_RESOURCE = "so101_arm"
#: Environment variable (read by ``ray start`` / ``ray.init``) for the niceness of Ray's workers.
#: Ray's default is 15, which the daemons an actor starts inherit, so anything else on the node
#: takes their cores first; set it to 0 where the evaluation should have the node's full share.
WORKER_NICENESS = "RAY_worker_niceness"


class DaemonDied(RuntimeError):
    """The actor's daemon ended during a job; the actor has started a new one, the job may be rerun."""


class EpisodeWorker:
    """A Ray actor's state: one sim-only daemon on a Unix socket started with the actor and stopped
    with it (`stop`), its client, and the episodes it runs one at a time."""

    def __init__(self, daemon_bin: str | None = None, daemon_args: tuple[str, ...] = ()) -> None:
        self._bin, self._args = daemon_bin, daemon_args
        self._scratch = tempfile.mkdtemp(prefix="fakesim-ray-")
        self._starts = 0
        if os.nice(0) > 0:
            log.warning("this actor runs at niceness %d, and so will its daemon; start the cluster with %s=0 to give it a full share of the cores", os.nice(0), WORKER_NICENESS)
        self._start_daemon()
        # An actor process that exits without `stop` (its handles gone, the cluster shut down)
        # stops its daemon on the way out; one killed outright leaves it to the node.
        atexit.register(self.stop)

    def _start_daemon(self) -> None:
        """Starts a daemon with a runs directory of its own and connects to it."""
        self._starts += 1
        runs = Path(self._scratch) / f"daemon-{self._starts}"
        self.daemon = LocalDaemon.start(runs, *self._args, binary=self._bin)
        self.client = Client(self.daemon.address)
        self.client.wait_ready()

    def daemon_pid(self) -> int:
        """The process id of the daemon this actor owns now."""
        return self.daemon.process.pid

    def run(self, policy: Policy, job: Job, options: EpisodeOptions) -> dict[str, Any]:
        """Runs one job's episode; raises `DaemonDied` (after starting a new daemon) when the
        daemon ended under it."""
        try:
            return run_episode(self.client, policy, job, options)
        except Exception as failed:
            if not self._daemon_ended(failed):
                raise
            self.client.close()
            self.daemon.stop()
            self._start_daemon()
            raise DaemonDied(f"the daemon ended ({self.daemon.process.returncode}) during {job}") from None

    def _daemon_ended(self, failed: Exception) -> bool:
        """Whether the daemon has ended: its process has, or the call found it gone (UNAVAILABLE)
        and the process ends within 10 s (its sockets close before it is reaped)."""
        if self.daemon.process.poll() is not None:
            return True
        if not (isinstance(failed, FakesimError) and failed.code == grpc.StatusCode.UNAVAILABLE):
            return False
        try:
            self.daemon.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            return False
        return True

    def stop(self) -> None:
        """Stops the daemon and removes its runs (again: nothing)."""
        self.client.close()
        self.daemon.stop()
        shutil.rmtree(self._scratch, ignore_errors=True)


def actor_class(arm: bool = False) -> Any:
    """The Ray actor class of `EpisodeWorker`: one CPU and one `DAEMON_RESOURCE` (and one
    `ARM_RESOURCE` with ``arm``), two calls at once so `daemon_pid` answers during a job."""
    resources = {DAEMON_RESOURCE: 1.0, **({ARM_RESOURCE: 1.0} if arm else {})}
    return ray.remote(num_cpus=1, resources=resources, max_concurrency=2)(EpisodeWorker)


def evaluate(
    policy: Policy,
    jobs: Iterable[Job],
    *,
    n_actors: int = 2,
    options: EpisodeOptions = EpisodeOptions(),
    daemon_bin: str | None = None,
    max_attempts: int = 3,
    report_path: str | os.PathLike[str] | None = None,
    on_result: Callable[[dict[str, Any], Any], None] | None = None,
) -> dict[str, Any]:
    """Runs every job on a pool of ``n_actors`` daemon actors of the Ray cluster ``ray.init``
    joined, each job up to ``max_attempts`` times when its actor or its daemon dies (a dead actor
    is replaced), and returns the `aggregate` report with ``retried``, the number of reruns
    (written as JSON to ``report_path`` too).
    ``on_result(summary, actor)`` is called in the driver as each episode comes back."""
    binary = daemon_bin or os.environ.get("FAKESIM_HIL_BIN")
    actor = actor_class()
    idle = [actor.remote(binary) for _ in range(n_actors)]
    policy_ref = ray.put(policy)
    pending = [(job, 1) for job in jobs]
    running: dict[Any, tuple[Job, int, Any]] = {}
    summaries: list[dict[str, Any]] = []
    retried = 0
    try:
        while pending or running:
            while pending and idle:
                job, attempt = pending.pop(0)
                worker = idle.pop()
                running[worker.run.remote(policy_ref, job, options)] = (job, attempt, worker)
            [done], _ = ray.wait(list(running), num_returns=1)
            job, attempt, worker = running.pop(done)
            try:
                summary = ray.get(done)
            except (RayActorError, DaemonDied) as died:
                if isinstance(died, RayActorError):
                    worker = actor.remote(binary)
                if attempt >= max_attempts:
                    raise RuntimeError(f"{job} failed {attempt} times") from died
                pending.append((job, attempt + 1))
                retried += 1
            else:
                summaries.append(summary)
                if on_result is not None:
                    on_result(summary, worker)
            idle.append(worker)
    finally:
        for stop in [w.stop.remote() for w in idle + [w for _, _, w in running.values()]]:
            try:
                ray.get(stop)
            except RayActorError:
                pass
    report = {**aggregate(summaries), "retried": retried}
    if report_path is not None:
        Path(report_path).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report
