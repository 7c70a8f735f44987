"""An agent's session on the arm through the daemon's MCP endpoint, with the official MCP Python
SDK: list the tasks, start an episode, move sideways, try a move into the table (refused by the
table layer on the real arm), close the gripper, stop. Prints each call and the answer's
structured content (images left out, floats rounded), a transcript.

    FAKESIM_HIL_TOKEN=... FAKESIM_HIL_TLS_CA=ca.pem python mcp_arm_session.py https://HOST:PORT/mcp

The token and the CA are optional (a loopback daemon without them takes http://127.0.0.1:PORT/mcp).
Exits 1 if a call other than the move into the table is refused.
"""

import asyncio
import json
import os
import ssl
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

CALLS = [
    ("list_tasks", {}),
    ("reset_task", {}),
    ("move", {"delta_xyz": [0.0, 0.05, 0.0]}),
    ("move", {"delta_xyz": [0.0, 0.0, -0.3]}),
    ("gripper", {"command": "close"}),
    ("stop_episode", {}),
]
#: The one call the script expects to be refused.
INTO_THE_TABLE = 3


def rounded(value):
    """`value` with floats rounded to 4 places."""
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, list):
        return [rounded(item) for item in value]
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    return value


def summary(result) -> str:
    """One line for an answer: error or not, its structured content, how many images came along."""
    images = sum(block.type == "image" for block in result.content)
    structured = {key: value for key, value in (result.structured_content or {}).items() if key != "images"}
    line = ("tool error " if result.is_error else "") + json.dumps(rounded(structured), sort_keys=True)
    return line + (f" + {images} PNG images" if images else "")


async def main(url: str) -> int:
    token = os.environ.get("FAKESIM_HIL_TOKEN")
    ca = os.environ.get("FAKESIM_HIL_TLS_CA")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    verify = ssl.create_default_context(cafile=ca) if ca else True
    http = httpx2.AsyncClient(headers=headers, verify=verify, timeout=httpx2.Timeout(30, read=300))
    unexpected = 0
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            info = await session.initialize()
            print(f"connected to {info.server_info.name} {info.server_info.version} ({info.protocol_version})")
            for index, (tool, arguments) in enumerate(CALLS):
                print(f"-> {tool} {json.dumps(arguments)}")
                result = await session.call_tool(tool, arguments)
                print(f"<- {summary(result)}")
                unexpected += result.is_error and index != INTO_THE_TABLE
    return 1 if unexpected else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(asyncio.run(main(sys.argv[1])))
