"""The same tools over MCP's streamable HTTP, served by the daemon itself (--mcp-listen)."""

import pytest

from episode_script import OBSERVE_ONLY_TOOLS, TOOLS, error_name, http_session, ok, scripted_episode

pytestmark = pytest.mark.anyio


async def test_the_daemon_serves_the_scripted_episode_over_http(daemon):
    started = daemon("--mcp-listen", "127.0.0.1:0", "--max-steps", "300")
    assert started["mcp_url"].endswith("/mcp")
    async with http_session(started["mcp_url"]) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(listed) == TOOLS
        assert listed["move"].input_schema["required"] == ["delta_xyz"]
        assert error_name(await session.call_tool("stop_episode", {})) == "not_running"
        reasons = await scripted_episode(session, started["runs"])
        assert error_name(await session.call_tool("get_observation", {})) == "not_running"
    assert reasons == ["reached", "stalled", "settled", "no_op"]
    assert started["process"].stop() == 0


async def test_the_http_endpoint_can_be_observe_only(daemon):
    started = daemon("--mcp-listen", "127.0.0.1:0", "--mcp-observe-only")
    async with http_session(started["mcp_url"]) as session:
        listed = {tool.name for tool in (await session.list_tools()).tools}
        assert listed == OBSERVE_ONLY_TOOLS
        assert ok(await session.call_tool("get_session_info", {}))["status"] == "idle"


async def test_on_a_pair_daemon_move_and_gripper_name_their_arm(daemon):
    started = daemon("--pair", "--mcp-listen", "127.0.0.1:0")
    async with http_session(started["mcp_url"]) as session:
        episode = ok(await session.call_tool("reset_task", {"suite": "pair_tabletop"}))
        assert episode["task"]["name"] == "lift_both"
        assert error_name(await session.call_tool("get_observation", {})) == "one_arm_verb"
        seen = ok(await session.call_tool("get_observation", {"arm": "right"}))
        assert seen["state"]["eef_pos_m"][1] < -0.1, seen["state"]
        unnamed = await session.call_tool("move", {"delta_xyz": [0.0, 0.0, 0.02]})
        assert error_name(unnamed) == "one_arm_verb" and "name the arm" in unnamed.structured_content["message"]
        left = ok(await session.call_tool("move", {"delta_xyz": [0.0, 0.0, 0.02], "arm": "left"}))
        right = ok(await session.call_tool("move", {"delta_xyz": [0.0, 0.0, -0.02], "arm": "right"}))
        assert left["action"]["stop_reason"] == right["action"]["stop_reason"] == "reached"
        # Each answer's state is its own arm's: the pair's TCPs stand 0.4 m apart in y.
        assert left["state"]["eef_pos_m"][1] - right["state"]["eef_pos_m"][1] > 0.3
        closed = ok(await session.call_tool("gripper", {"command": "close", "arm": "right"}))
        assert closed["action"]["stop_reason"] == "settled"
        bad = await session.call_tool("gripper", {"command": "close", "arm": "middle"})
        assert error_name(bad) == "invalid_argument"
        ok(await session.call_tool("stop_episode", {}))
    assert started["process"].stop() == 0
