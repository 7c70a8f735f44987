"""TickChunk through the client: a chunk gives the states the same ticks one by one give."""

from __future__ import annotations

import grpc
import numpy as np
import pytest

from fakesim_hil import Client


def _chunk_actions(client: Client, n: int) -> list[list[float]]:
    """N joint-target vectors moving away from the current targets."""
    start = np.array(client.robot_state().ctrl_targets)
    return [list(start + 0.02 * (i + 1) * np.array([1.0, -0.5, 0.5, 0.3, -0.2, 0.4])) for i in range(n)]


def test_a_chunk_is_bit_identical_to_its_ticks_one_by_one(client: Client) -> None:
    options = {"images": True, "cameras": ["agentview"], "width": 32, "height": 24}
    client.reset("so101_tabletop", 0, 1, max_steps=0)
    actions = _chunk_actions(client, 8)
    one_by_one = [client.tick(action, **options) for action in actions]
    client.stop()
    client.reset("so101_tabletop", 0, 1, max_steps=0)
    chunk = client.tick_chunk(actions, **options)
    client.stop()
    assert chunk.stopped is None
    assert len(chunk.ticks) == 8
    for single, chunked in zip(one_by_one, chunk.ticks):
        assert chunked.observation.tobytes() == single.observation.tobytes()
        assert chunked.physics_steps - chunk.ticks[0].physics_steps == single.physics_steps - one_by_one[0].physics_steps
        assert chunked.images["agentview"].shape == (24, 32, 3)
        assert np.array_equal(chunked.images["agentview"], single.images["agentview"])
    assert not np.array_equal(chunk.ticks[0].observation, chunk.ticks[-1].observation), "the arm moved"


def test_a_chunk_past_the_step_budget_stops_at_the_refused_tick(client: Client) -> None:
    client.reset("so101_tabletop", 0, 0, max_steps=3)
    chunk = client.tick_chunk(_chunk_actions(client, 8))
    assert len(chunk.ticks) == 3
    assert chunk.stopped is not None
    assert chunk.stopped.tick_index == 3
    assert chunk.stopped.code != grpc.StatusCode.OK
    assert chunk.stopped.reason and chunk.stopped.message


def test_an_unknown_tick_option_is_refused_before_any_call(client: Client) -> None:
    with pytest.raises(TypeError, match="imagse"):
        client.tick_chunk([list(client.robot_state().ctrl_targets)], imagse=True)  # type: ignore[call-arg]
