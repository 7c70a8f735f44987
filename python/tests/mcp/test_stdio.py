"""The MCP server over stdio, as an agent host launches it: `fakesim-hil mcp` with a sim-only
daemon in the process, driven by the official MCP Python SDK."""

import pytest
from mcp.shared.exceptions import MCPError

from episode_script import (OBSERVE_ONLY_TOOLS, TOOLS, error_name, ok, scripted_episode,
                            stdio_session)

pytestmark = pytest.mark.anyio


def twin(tmp_path, *extra: str) -> list[str]:
    return ["--runs-dir", str(tmp_path / "runs"), "--image-size", "32", *extra]


async def test_the_seven_tools_are_listed_with_their_input_schemas(fakesim_bin, tmp_path):
    async with stdio_session(fakesim_bin, *twin(tmp_path)) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(listed) == TOOLS
    move = listed["move"].input_schema
    assert move["required"] == ["delta_xyz"]
    xyz = move["properties"]["delta_xyz"]
    assert (xyz["type"], xyz["minItems"], xyz["maxItems"]) == ("array", 3, 3)
    rpy = move["$defs"]["DeltaRpy"]["properties"]
    assert set(rpy) == {"roll_x", "pitch_y", "yaw_z"}
    gripper = listed["gripper"].input_schema
    commands = {choice["const"] for choice in gripper["$defs"]["GripperTarget"]["oneOf"]}
    assert commands == {"open", "close"}
    assert set(listed["reset_task"].input_schema["properties"]) == {"suite", "task_index", "init_state_index"}
    assert set(listed["list_tasks"].input_schema["properties"]) == {"suite"}
    for reason in ("reached", "stalled", "step_cap", "budget"):
        assert reason in listed["move"].description
    for reason in ("settled", "step_cap", "budget", "no_op"):
        assert reason in listed["gripper"].description


async def test_a_scripted_episode_ends_with_the_documented_stop_reasons(fakesim_bin, tmp_path):
    async with stdio_session(fakesim_bin, *twin(tmp_path)) as session:
        info = ok(await session.call_tool("get_session_info", {}))
        assert info["status"] == "idle" and info["default_scene"]["task_index"] == 0
        assert "task" not in info
        suites = ok(await session.call_tool("list_tasks", {}))
        assert suites["total_tasks"] == sum(suite["n_tasks"] for suite in suites["suites"])
        suite = suites["suites"][0]["name"]
        tasks = ok(await session.call_tool("list_tasks", {"suite": suite}))["tasks"]
        assert tasks[0]["instruction"] and tasks[0]["n_init_states"] > 0
        reasons = await scripted_episode(session, tmp_path / "runs")
    assert reasons == ["reached", "stalled", "settled", "no_op"]


async def test_each_refusal_is_a_tool_error_with_the_contract_name(fakesim_bin, tmp_path):
    async with stdio_session(fakesim_bin, *twin(tmp_path, "--max-steps", "3")) as session:
        assert error_name(await session.call_tool("move", {"delta_xyz": [0, 0, 0.01]})) == "not_running"
        assert error_name(await session.call_tool("get_observation", {})) == "not_running"
        assert error_name(await session.call_tool("stop_episode", {})) == "not_running"
        assert error_name(await session.call_tool("list_tasks", {"suite": "nope"})) == "unknown_suite"
        assert error_name(await session.call_tool("reset_task", {"suite": "nope"})) == "unknown_suite"
        suite = ok(await session.call_tool("list_tasks", {}))["suites"][0]["name"]
        assert error_name(await session.call_tool("reset_task", {"suite": suite, "task_index": 99})) == "unknown_task"
        layout = {"suite": suite, "task_index": 0, "init_state_index": 9999}
        assert error_name(await session.call_tool("reset_task", layout)) == "unknown_init_state"
        ok(await session.call_tool("reset_task", {}))
        assert error_name(await session.call_tool("reset_task", {})) == "already_running"
        spent = ok(await session.call_tool("move", {"delta_xyz": [0.0, 0.1, 0.0]}))
        assert spent["action"]["stop_reason"] == "budget" and spent["steps_left"] == 0
        refused = await session.call_tool("move", {"delta_xyz": [0.0, 0.01, 0.0]})
        assert error_name(refused) == "step_limit"
        assert "stop_episode" in refused.structured_content["what_to_do"]
        assert error_name(await session.call_tool("gripper", {"command": "close"})) == "step_limit"
        bad = await session.call_tool("gripper", {"command": "half"})
        assert error_name(bad) == "invalid_argument" and "half" in bad.structured_content["message"]
        short = await session.call_tool("move", {"delta_xyz": [0.0, 0.01]})
        assert error_name(short) == "invalid_argument"
        ok(await session.call_tool("stop_episode", {}))


async def test_a_locked_task_refuses_scene_arguments(fakesim_bin, tmp_path):
    locked = twin(tmp_path, "--lock-task", "so101_tabletop", "1", "2")
    async with stdio_session(fakesim_bin, *locked) as session:
        info = ok(await session.call_tool("get_session_info", {}))
        assert info["task_locked"] is True
        refused = await session.call_tool("reset_task", {"task_index": 0})
        assert error_name(refused) == "task_locked"
        started = ok(await session.call_tool("reset_task", {}))
        assert (started["task"]["task_index"], started["task"]["init_state_index"]) == (1, 2)


async def test_observe_only_serves_only_the_tools_that_move_nothing(fakesim_bin, tmp_path):
    async with stdio_session(fakesim_bin, *twin(tmp_path), "--observe-only") as session:
        listed = {tool.name for tool in (await session.list_tools()).tools}
        assert listed == OBSERVE_ONLY_TOOLS
        with pytest.raises(MCPError, match="tool not found"):
            await session.call_tool("move", {"delta_xyz": [0, 0, 0.01]})
        ok(await session.call_tool("get_session_info", {}))


async def test_a_move_reports_progress_while_it_runs(fakesim_bin, tmp_path):
    progress: list[tuple[float, str]] = []

    async def record(value, total, message):
        progress.append((value, message))

    async with stdio_session(fakesim_bin, *twin(tmp_path)) as session:
        ok(await session.call_tool("reset_task", {}))
        moved = await session.call_tool("move", {"delta_xyz": [0.0, 0.03, 0.0]}, progress_callback=record)
        ok(moved)
    assert progress, "at least the notification at the start"
    assert progress[0][1].startswith("move running for")
    values = [value for value, _ in progress]
    assert values == sorted(values)


async def test_connect_to_nothing_fails_with_the_address(fakesim_bin, spawn):
    process = spawn([fakesim_bin, "mcp", "--connect", "127.0.0.1:1"])
    process.wait_for(r"cannot connect to the daemon at 127\.0\.0\.1:1")
    assert process.popen.wait(timeout=60) != 0


async def test_connect_refuses_options_of_the_in_process_twin(fakesim_bin, spawn):
    process = spawn([fakesim_bin, "mcp", "--connect", "127.0.0.1:1", "--max-steps", "5"])
    process.wait_for(r"--connect uses the running daemon's settings")
    assert process.popen.wait(timeout=60) != 0


async def test_closing_the_session_mid_episode_finalises_the_run(fakesim_bin, tmp_path):
    async with stdio_session(fakesim_bin, *twin(tmp_path)) as session:
        run = ok(await session.call_tool("reset_task", {}))["run"]
        ok(await session.call_tool("move", {"delta_xyz": [0.0, 0.02, 0.0]}))
    summary = tmp_path / "runs" / run / "summary.json"
    assert summary.is_file(), "the in-process daemon finalised the open episode on exit"
    assert "interrupted" in summary.read_text()
