"""The client's direct route (`fakesim_hil.direct`: Tick and GetRobotState through the
``fakesim_hil._native`` extension, tonic's HTTP/2 client on a connection of the calling thread's
own) against real daemons, beside the grpcio route. The hostile servers (split trailers, tiny
windows, GOAWAY and RST_STREAM mid-call) are the fakesim-client crate's tests."""

from __future__ import annotations

import gc
import importlib.util
import os
import resource
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import numpy as np
import pytest

from fakesim.v1 import robot_pb2
from fakesim_hil import Client, FakesimError
from fakesim_hil.client import STATE_PATH
from fakesim_hil.connection import Connection
from fakesim_hil.daemon import LocalDaemon
from fakesim_hil.direct import DirectCalls, supports

#: The MCP suite's throw-away certificate authority (python/tests/mcp/pki.py).
_pki_spec = importlib.util.spec_from_file_location("fakesim_test_pki", Path(__file__).parent / "mcp" / "pki.py")
pki = importlib.util.module_from_spec(_pki_spec)
_pki_spec.loader.exec_module(pki)


def test_the_suite_runs_the_extension(client: Client) -> None:
    assert client._direct is not None, "fakesim_hil._native is built and takes the hot calls"


@pytest.fixture
def both(daemon) -> Iterator[tuple[Client, Client]]:
    """A client on the direct route and one on grpcio alone, to the session daemon."""
    with Client(daemon.address) as direct, Client(daemon.address, direct=False) as through_grpcio:
        yield direct, through_grpcio


def test_both_routes_read_the_same_state_and_refuse_alike(both: tuple[Client, Client]) -> None:
    direct, through_grpcio = both
    for unit in ("rad", "lerobot_degrees"):
        assert direct.robot_state(unit) == through_grpcio.robot_state(unit)
    refusals = []
    for client in both:
        with pytest.raises(FakesimError) as refused:
            client.tick([0.0])
        refusals.append(refused.value)
    assert refusals[0].code == refusals[1].code == grpc.StatusCode.INVALID_ARGUMENT
    assert refusals[0].reason == refusals[1].reason == "wrong_length"
    assert refusals[0].message == refusals[1].message and "got 1" in refusals[0].message
    assert refusals[0].metadata == refusals[1].metadata and refusals[0].metadata["got"] == "1"


def test_a_direct_tick_steps_the_twin_as_a_grpcio_tick_does(both: tuple[Client, Client]) -> None:
    direct, through_grpcio = both
    action = np.array(direct.robot_state().ctrl_targets)
    first = direct.tick(action)
    second = through_grpcio.tick(action)
    assert second.physics_steps > first.physics_steps, "each tick advanced the one twin"
    assert first.observation.shape == second.observation.shape == (len(direct.model_info().observation_keys),)
    framed = direct.tick(action, cameras=["agentview"], width=64, height=48)
    assert framed.images["agentview"].shape == (48, 64, 3) and framed.image_timing is not None


def test_threads_tick_at_once_each_on_its_own_connection(client: Client) -> None:
    action = np.array(client.robot_state().ctrl_targets)
    steps: dict[int, list[int]] = {0: [], 1: []}
    failures: list[BaseException] = []

    def run(index: int) -> None:
        try:
            for _ in range(100):
                steps[index].append(client.tick(action).physics_steps)
        except BaseException as failure:  # noqa: BLE001 - handed to the main thread
            failures.append(failure)

    threads = [threading.Thread(target=run, args=(i,)) for i in steps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    for seen in steps.values():
        assert len(seen) == 100 and seen == sorted(seen), "each thread's answers come in its order"
    assert not set(steps[0]) & set(steps[1]), "every tick answered once, to the thread that sent it"


def test_threads_use_connections_of_their_own(daemon) -> None:
    with Client(daemon.address) as client:
        before = sockets().keys()
        client.robot_state()
        first = sockets().keys() - before
        other = threading.Thread(target=client.robot_state)
        other.start()
        other.join()
        second = sockets().keys() - before - first
        client.robot_state()
        assert len(first) == 1 and len(second) == 1, "one connection each, the first thread's kept"
        assert first <= sockets().keys()


def sockets() -> dict[str, int]:
    """The sockets this process has open: their inodes and descriptors."""
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:"):
            found[target] = int(fd)
    return found


def idle_threads() -> set[str]:
    """The thread ids of the extension's idle-connection threads running in this process."""
    found = set()
    for task in os.listdir("/proc/self/task"):
        try:
            if Path(f"/proc/self/task/{task}/comm").read_text().strip() == "fakesim-idle":
                found.add(task)
        except OSError:
            continue
    return found


def started_idle_threads(before: set[str]) -> set[str]:
    """The idle-connection threads started since ``before`` was taken: a new thread names itself
    once it runs (Rust's std sets the name from inside it), which on a busy machine can come after
    the call that started it has returned."""
    for _ in range(400):
        started = idle_threads() - before
        if started:
            return started
        threading.Event().wait(0.05)
    return set()


def test_a_client_dropped_without_closing_leaves_no_thread_behind(daemon) -> None:
    before = idle_threads()
    dropped = Client(daemon.address)
    dropped.robot_state()
    (idle_thread,) = started_idle_threads(before)
    del dropped
    gc.collect()
    # The thread ends at its next look (every 0.25 s) once its client is gone.
    for _ in range(400):
        if idle_thread not in idle_threads():
            break
        threading.Event().wait(0.05)
    assert idle_thread not in idle_threads(), "the idle connections' thread ends with its client"


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_calls_on_a_connection_of_its_own(client: Client) -> None:
    before = client.robot_state()
    child = os.fork()
    if child == 0:
        try:
            answered = client.robot_state() == before
        except BaseException:  # noqa: BLE001 - the exit code says it
            answered = False
        os._exit(0 if answered else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child's call was answered"
    assert client.robot_state() == before, "the parent's connection is as it was (no stream of the child's on it)"


def test_token_and_lease_go_with_direct_calls(daemon_factory, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret-direct-token\n")
    daemon = daemon_factory("--token-file", str(token), "--lease-in-sim")
    with Client(daemon.address) as stranger:
        with pytest.raises(FakesimError) as refused:
            stranger.robot_state()
        assert refused.value.code == grpc.StatusCode.UNAUTHENTICATED and refused.value.reason == "token_required"
    with Client(daemon.address, token_file=token) as holder, Client(daemon.address, token_file=token) as other:
        action = np.array(holder.robot_state().ctrl_targets)
        holder.acquire_lease("direct-test")
        holder.tick(action)
        with pytest.raises(FakesimError) as refused:
            other.tick(action)
        assert refused.value.reason == "lease_held" and "direct-test" in str(refused.value)
        holder.release_lease()
        other.acquire_lease("other")
        other.tick(action)


def test_a_call_without_a_deadline_after_a_timed_one_is_answered() -> None:
    # A server (grpcio's) that answers the first GetRobotState at once, later ones 0.4 s after
    # they arrive.
    calls = []

    def slow_state(request: bytes, context: grpc.ServicerContext) -> bytes:
        calls.append(request)
        if len(calls) > 1:
            threading.Event().wait(0.4)
        return robot_pb2.GetRobotStateResponse(ctrl_targets=[1.0] * 6).SerializeToString()

    handler = grpc.method_handlers_generic_handler(
        "fakesim.v1.RobotService", {"GetRobotState": grpc.unary_unary_rpc_method_handler(slow_state)}
    )
    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with Client(f"127.0.0.1:{port}", timeout_s=0.25) as client:
            assert client._direct is not None
            assert list(client.robot_state().ctrl_targets) == [1.0] * 6, "the quick answer within 0.25 s"
            client.timeout_s = None
            assert list(client.robot_state().ctrl_targets) == [1.0] * 6, "the slow answer, no deadline"
            client.timeout_s = 0.25
            with pytest.raises(FakesimError) as refused:
                client.robot_state()
            assert refused.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
    finally:
        server.stop(None)


def test_every_target_form_of_the_daemon_takes_the_direct_route(daemon, tmp_path: Path, fakesim_bin: str) -> None:
    port = daemon.address.rpartition(":")[2]
    unix = LocalDaemon.start(tmp_path / "unix", binary=fakesim_bin)
    try:
        path = unix.address.removeprefix("unix:")
        forms = [
            f"127.0.0.1:{port}",
            f"localhost:{port}",
            f"ipv4:127.0.0.1:{port}",
            f"dns:127.0.0.1:{port}",
            f"dns:///localhost:{port}",
            f"unix:{path}",
            f"unix://{path}",
        ]
        for form in forms:
            with Client(form) as direct, Client(form, direct=False) as through_grpcio:
                assert direct._direct is not None, form
                assert direct.robot_state() == through_grpcio.robot_state(), form
    finally:
        unix.stop()
    for form in ("dns://127.0.0.1:53/localhost:1", "vsock:3:50051", "xds:///fakesim"):
        assert not supports(form), f"{form} is left to grpcio"
        assert Client(form)._direct is None


def test_tls_and_token_daemons_take_the_direct_route(daemon_factory, tmp_path: Path) -> None:
    files = pki.write_pki(tmp_path)
    secured = daemon_factory(*pki.tls_options(files))
    with Client(secured.address, tls_ca=files["ca"]) as stranger:
        assert stranger._direct is not None
        with pytest.raises(FakesimError) as refused:
            stranger.robot_state()
        assert refused.value.code == grpc.StatusCode.UNAUTHENTICATED and refused.value.reason == "token_required"
    options = {"tls_ca": files["ca"], "token_file": files["token"]}
    with Client(secured.address, **options) as direct, Client(secured.address, direct=False, **options) as through_grpcio:
        assert direct.robot_state() == through_grpcio.robot_state()
        action = np.array(direct.robot_state().ctrl_targets)
        assert direct.tick(action).physics_steps < through_grpcio.tick(action).physics_steps
    for direct in (True, False):
        with Client(secured.address, token_file=files["token"], direct=direct) as plaintext:
            with pytest.raises(FakesimError) as refused:
                plaintext.robot_state()
            assert (refused.value.code, refused.value.reason) == (grpc.StatusCode.UNAUTHENTICATED, "tls_required")


def test_with_2000_files_open_ticks_stay_on_one_connection(daemon) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    files = [open(os.devnull, "rb") for _ in range(2000)]  # noqa: SIM115 - held open on purpose
    try:
        with Client(daemon.address) as client:
            before = sockets().keys()
            action = np.array(client.robot_state().ctrl_targets)
            seen: dict[str, int] = {}
            for i in range(200):
                client.tick(action)
                seen |= {inode: fd for inode, fd in sockets().items() if inode not in before}
                if i % 50 == 49:
                    # An idle spell past the idle connections' look (every 0.25 s).
                    threading.Event().wait(0.3)
            assert len(seen) == 1, f"{len(seen)} connections for 200 ticks"
            assert min(seen.values()) >= 2000, "its descriptor is past select()'s 1024"
    finally:
        for file in files:
            file.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_daemon_that_never_answers_is_a_deadline_exceeded(tmp_path: Path) -> None:
    path = tmp_path / "silent.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
        silent.bind(str(path))
        silent.listen()
        with Client(f"unix:{path}", timeout_s=0.3) as client:
            with pytest.raises(FakesimError) as refused:
                client.robot_state()
            assert refused.value.code == grpc.StatusCode.DEADLINE_EXCEEDED


def test_a_lost_daemon_is_unavailable_and_the_next_call_connects_again(tmp_path: Path, fakesim_bin: str) -> None:
    listen = f"unix:{tmp_path / 'daemon.sock'}"
    request = robot_pb2.GetRobotStateRequest().SerializeToString()
    calls = DirectCalls(Connection.resolve(listen))
    try:
        first = LocalDaemon.start(tmp_path / "first", binary=fakesim_bin, listen=listen)
        try:
            assert len(robot_pb2.GetRobotStateResponse.FromString(calls.unary(STATE_PATH, request, 10.0, ())).ctrl_targets) == 6
        finally:
            first.stop()
        log = (tmp_path / "first" / "daemon.log").read_text(encoding="utf-8")
        assert "still open" not in log, "the idle connection answered the daemon's shutdown"
        with pytest.raises(FakesimError) as lost:
            calls.unary(STATE_PATH, request, 10.0, ())
        assert lost.value.code == grpc.StatusCode.UNAVAILABLE
        second = LocalDaemon.start(tmp_path / "second", binary=fakesim_bin, listen=listen)
        try:
            assert len(robot_pb2.GetRobotStateResponse.FromString(calls.unary(STATE_PATH, request, 10.0, ())).ctrl_targets) == 6
        finally:
            second.stop()
    finally:
        calls.close()
