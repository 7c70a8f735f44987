"""What every MCP test does with a client session: open one (stdio or streamable HTTP), run
the scripted episode, and read results (structured content, error names, PNG sizes)."""

import base64
import json
import ssl
import struct
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

TOOLS = {"list_tasks", "reset_task", "get_observation", "move", "gripper", "stop_episode", "get_session_info"}
OBSERVE_ONLY_TOOLS = {"list_tasks", "get_observation", "get_session_info"}
IMAGE_SIZE = 32


@asynccontextmanager
async def stdio_session(fakesim_bin: str, *args: str):
    params = StdioServerParameters(command=fakesim_bin, args=["mcp", *args])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


@asynccontextmanager
async def http_session(url: str, token: str | None = None, ca: Path | None = None,
                       client_cert: tuple[Path, Path] | None = None):
    """An MCP session over streamable HTTP, sending `token` as a bearer token, trusting
    certificates from the CA file `ca`, and showing `client_cert` (certificate, key), when given."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    verify = ssl.create_default_context(cafile=str(ca) if ca else None)
    if client_cert:
        verify.load_cert_chain(*map(str, client_cert))
    http = httpx2.AsyncClient(headers=headers, verify=verify, timeout=httpx2.Timeout(30, read=300))
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def ok(result) -> dict:
    """The structured content of a successful result."""
    assert not result.is_error, result.content[0].text
    return result.structured_content


def error_name(result) -> str:
    """The contract's error name of a tool error, checked against its text and advice."""
    assert result.is_error, result.structured_content
    structured = result.structured_content
    assert result.content[0].text.startswith(structured["error"]), result.content[0].text
    assert structured["what_to_do"] and structured["message"]
    return structured["error"]


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def images(result) -> list[bytes]:
    """The two camera images of a result, checked to be PNGs of the configured size."""
    blocks = [block for block in result.content if block.type == "image"]
    assert [block.mime_type for block in blocks] == ["image/png", "image/png"]
    decoded = [base64.b64decode(block.data) for block in blocks]
    assert [png_size(png) for png in decoded] == [(IMAGE_SIZE, IMAGE_SIZE)] * 2
    index = result.structured_content["images"]
    assert [index[name]["content_index"] for name in ("agentview", "robot0_eye_in_hand")] == [1, 2]
    return decoded


async def scripted_episode(session: ClientSession, runs: Path | None) -> list[str]:
    """Resets, moves sideways, moves into the table, closes the gripper twice, observes and
    stops; checks images, state and artifacts; answers the stop reasons in order. With `runs`
    the artifacts must lie under it."""
    received: list[bytes] = []
    started = await session.call_tool("reset_task", {})
    run = ok(started)["run"]
    received += images(started)
    before = started.structured_content["state"]["eef_pos_m"]
    reasons = []

    sideways = await session.call_tool("move", {"delta_xyz": [0.0, 0.05, 0.0]})
    action = ok(sideways)["action"]
    received += images(sideways)
    reasons.append(action["stop_reason"])
    after = sideways.structured_content["state"]["eef_pos_m"]
    assert abs(after[1] - before[1] - 0.05) < 0.01, (before, after)
    assert action["delta_xyz"] == [0.0, 0.05, 0.0] and action["executed_steps"] > 0

    into_table = await session.call_tool("move", {"delta_xyz": [0.0, 0.0, -0.3]})
    if into_table.is_error:
        reasons.append(error_name(into_table))
    else:
        received += images(into_table)
        action = into_table.structured_content["action"]
        reasons.append(action["stop_reason"])
        assert into_table.structured_content["state"]["eef_pos_m"][2] > 0.79
        assert action["remaining_distance_m"] > 0.1

    for _ in range(2):
        closed = await session.call_tool("gripper", {"command": "close"})
        received += images(closed)
        reasons.append(ok(closed)["action"]["stop_reason"])

    observed = await session.call_tool("get_observation", {})
    received += images(observed)
    assert ok(observed)["step"] == closed.structured_content["step"], "observing uses no budget"

    stopped = ok(await session.call_tool("stop_episode", {}))
    assert stopped["run"] == run and stopped["status"] == "stopped"
    artifacts = {name: Path(path) for name, path in stopped["artifacts"].items()}
    if runs is not None:
        assert artifacts["events"].parent == runs / run
    events = [json.loads(line) for line in artifacts["events"].read_text().splitlines()]
    assert len(events) >= 7, events
    frames = {path.read_bytes() for path in artifacts["frames"].iterdir()}
    assert set(received) <= frames, "every image the agent saw is a frame on disk"
    summary = json.loads(artifacts["summary"].read_text())
    assert summary, summary
    return reasons
