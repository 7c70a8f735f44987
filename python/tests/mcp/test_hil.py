"""The same tools with the daemon in hil on a virtual SO-101 (`fakesim-hil emulate`): the real
arm moves through the safety layers, the agent sees the stop reasons of sim, and a move into the
table is a tool error naming the table layer."""

import pytest

from episode_script import error_name, ok, scripted_episode, stdio_session

pytestmark = pytest.mark.anyio


def hil_options(arm) -> list[str]:
    return [*arm.follower_args, "--mode", "hil"]


def refused_at_the_table(refused):
    """A move into the table: the table layer refuses a TCP below its margin, or the twin's
    preview refuses first when a jaw pad would reach the table before the TCP does."""
    layer = {"below_table": "table", "preview_refused": "preview"}.get(error_name(refused))
    return layer is not None and refused.structured_content["layer"] == layer


async def test_the_scripted_episode_in_hil_and_a_move_into_the_table_refused_by_the_table_layer(daemon, virtual_arm, fakesim_bin):
    started = daemon(*hil_options(virtual_arm))
    progress = []

    async def record(value, total, message):
        progress.append(message)

    connect = ["--connect", started["address"], "--log-level", "info"]
    async with stdio_session(fakesim_bin, *connect) as session:
        reasons = await scripted_episode(session, started["runs"])
        ok(await session.call_tool("reset_task", {}))
        refused = await session.call_tool("move", {"delta_xyz": [0.0, 0.0, -0.3]})
        assert refused_at_the_table(refused)
        moved = await session.call_tool("move", {"delta_xyz": [0.0, 0.0, 0.03]}, progress_callback=record)
        assert ok(moved)["action"]["stop_reason"] == "reached"
        ok(await session.call_tool("stop_episode", {}))
    # In sim the table stops the twin (stalled); on the real arm the table layer refuses the move.
    assert reasons[0] == "reached" and reasons[2:] == ["settled", "no_op"]
    assert reasons[1] in ("below_table", "preview_refused")
    assert progress and progress[0].startswith("move running for")
    assert started["process"].stop() == 0


async def test_in_mirror_mode_motion_is_a_tool_error_naming_the_mode_layer(daemon, virtual_arm, fakesim_bin):
    options = hil_options(virtual_arm)
    options[options.index("hil")] = "mirror"
    started = daemon(*options)
    async with stdio_session(fakesim_bin, "--connect", started["address"]) as session:
        ok(await session.call_tool("reset_task", {}))
        refused = await session.call_tool("move", {"delta_xyz": [0.0, 0.02, 0.0]})
        assert error_name(refused) == "mirror_mode"
        assert refused.structured_content["layer"] == "mode"
        assert "(layer: mode)" in refused.content[0].text
        assert error_name(await session.call_tool("gripper", {"command": "close"})) == "mirror_mode"
        ok(await session.call_tool("get_observation", {}))
        ok(await session.call_tool("stop_episode", {}))



async def test_a_latched_emergency_stop_is_a_tool_error_naming_the_layer(daemon, virtual_arm, fakesim_bin):
    from fakesim_hil import Client, FakesimError  # the project's gRPC client, as an operator's console

    started = daemon(*hil_options(virtual_arm))
    async with stdio_session(fakesim_bin, "--connect", started["address"]) as session:
        ok(await session.call_tool("reset_task", {}))
        with Client(started["address"]) as operator:
            operator.emergency_stop("hand in the workspace")
            refused = await session.call_tool("move", {"delta_xyz": [0.0, 0.02, 0.0]})
            assert error_name(refused) == "estop_latched"
            assert refused.structured_content["layer"] == "emergency_stop"
            assert "(layer: emergency_stop)" in refused.content[0].text
            assert error_name(await session.call_tool("gripper", {"command": "close"})) == "estop_latched"
            ok(await session.call_tool("get_observation", {}))
            # Anyone may stop the arm; only the lease holder (here the MCP session) may reset it.
            with pytest.raises(FakesimError) as refused:
                operator.reset_emergency_stop()
            assert refused.value.reason == "lease_held"
            assert refused.value.metadata["holder"] == '"fakesim-hil mcp"'
        ok(await session.call_tool("stop_episode", {}))
