"""`fakesim-hil mcp --connect` to a daemon that requires TLS and a bearer token: the tools
authenticate like any gRPC client, and a missing token is a tool error naming the refusal."""

import pytest

from pki import tls_options
from episode_script import error_name, ok, stdio_session

pytestmark = pytest.mark.anyio


async def test_connect_speaks_tls_and_sends_the_token(daemon, pki, fakesim_bin):
    started = daemon(*tls_options(pki))
    tls = ["--connect", started["address"], "--tls-ca", str(pki["ca"])]
    async with stdio_session(fakesim_bin, *tls) as session:
        refused = await session.call_tool("get_session_info", {})
        assert error_name(refused) == "token_required"
    async with stdio_session(fakesim_bin, *tls, "--token-file", str(pki["token"])) as session:
        assert ok(await session.call_tool("get_session_info", {}))["status"] == "idle"
        ok(await session.call_tool("reset_task", {}))
        ok(await session.call_tool("stop_episode", {}))
