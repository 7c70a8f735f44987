"""The client's direct route (`fakesim_hil.direct`: Tick and GetRobotState on an HTTP/2
connection of the calling thread's own) against real daemons, beside the grpcio route."""

from __future__ import annotations

import gc
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import hpack
import numpy as np
import pytest

from fakesim.v1 import robot_pb2
from fakesim_hil import Client, FakesimError
from fakesim_hil.client import STATE_PATH
from fakesim_hil.daemon import LocalDaemon
from fakesim_hil.direct import DirectCalls
from fakesim_hil.h2link import request_headers


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


def test_a_client_dropped_without_closing_leaves_no_thread_behind(daemon) -> None:
    before = set(threading.enumerate())
    dropped = Client(daemon.address)
    dropped.robot_state()
    (idle_thread,) = [thread for thread in set(threading.enumerate()) - before if thread.name == "fakesim-direct-idle"]
    del dropped
    gc.collect()
    idle_thread.join(timeout=60)
    assert not idle_thread.is_alive(), "the idle connections' thread ends with its client"


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


def test_request_headers_decode_to_the_fields_sent_long_values_included() -> None:
    token = "Bearer " + "t" * 300  # a length past HPACK's one-byte prefix
    block = request_headers("/fakesim.v1.RobotService/Tick", "localhost", 2.5, (("authorization", token),))
    assert [(str(name), str(value)) for name, value in hpack.Decoder().decode(block)] == [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/fakesim.v1.RobotService/Tick"),
        (":authority", "localhost"),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
        ("grpc-timeout", "2500m"),
        ("authorization", token),
    ]


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
    calls = DirectCalls(listen)
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
