"""The daemon's MCP endpoint behind the same TLS and token rules as gRPC, with the official MCP
client: HTTPS with a certificate from a CA made in the test and a bearer token; refusals (no
token, a wrong token, plaintext) answered before MCP with their reason; and each MCP session
holding the control lease as a named holder where motion needs it."""

import ssl

import httpx2
import pytest
from mcp import MCPError

from episode_script import TOOLS, error_name, http_session, ok, scripted_episode
from fakesim_hil import Client, FakesimError
from pki import TOKEN, tls_options

pytestmark = pytest.mark.anyio

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
HEADERS = {"Accept": "application/json, text/event-stream"}


def refusal(response: httpx2.Response) -> str:
    """The reason a refused request's JSON-RPC error names, checked against its message."""
    error = response.json()["error"]
    assert error["message"].startswith(error["data"]["reason"] + ": "), error
    return error["data"]["reason"]


async def initialize_refusal(url: str, **credentials) -> str:
    """The message of the MCP error the client's initialisation fails with."""
    errors: list[BaseException] = []
    try:
        async with http_session(url, **credentials):
            pass
    except* MCPError as group:
        errors.append(group)
    while errors and isinstance(errors[0], BaseExceptionGroup):
        errors = list(errors[0].exceptions)
    assert errors, "the session was initialised"
    return str(errors[0])


async def test_over_https_the_right_token_runs_the_scripted_episode(daemon, pki):
    started = daemon("--mcp-listen", "127.0.0.1:0", *tls_options(pki))
    url = started["mcp_url"]
    assert url.startswith("https://127.0.0.1:")
    async with http_session(url, token=TOKEN, ca=pki["ca"]) as session:
        listed = {tool.name for tool in (await session.list_tools()).tools}
        assert listed == TOOLS
        reasons = await scripted_episode(session, started["runs"])
    assert reasons == ["reached", "stalled", "settled", "no_op"]
    assert started["process"].stop() == 0


async def test_without_the_right_token_or_over_plaintext_the_request_is_refused_and_logged(daemon, pki):
    started = daemon("--mcp-listen", "127.0.0.1:0", *tls_options(pki))
    url = started["mcp_url"]
    refused = await initialize_refusal(url, ca=pki["ca"])
    assert refused.startswith("token_required: a bearer token is required"), refused
    refused = await initialize_refusal(url, token="mcp-test-token-0123456780", ca=pki["ca"])
    assert refused.startswith("token_invalid: the bearer token is not valid"), refused

    async with httpx2.AsyncClient(verify=ssl.create_default_context(cafile=str(pki["ca"]))) as http:
        missing = await http.post(url, json=INITIALIZE, headers=HEADERS)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"] == 'Bearer realm="fakesim-hil"'
        assert refusal(missing) == "token_required"
        assert "authorization: Bearer <token>" in missing.json()["error"]["message"]
        wrong = await http.post(url, json=INITIALIZE, headers={**HEADERS, "Authorization": "Bearer not-the-token-at-all"})
        assert wrong.status_code == 401
        assert refusal(wrong) == "token_invalid"
    async with httpx2.AsyncClient() as http:
        plain = await http.post(url.replace("https://", "http://"), json=INITIALIZE,
                                headers={**HEADERS, "Authorization": f"Bearer {TOKEN}"})
        assert plain.status_code == 400
        assert refusal(plain) == "tls_required"

    process = started["process"]
    for reason in ("token_required", "token_invalid", "token_required", "token_invalid", "tls_required"):
        process.wait_for(rf"authentication failed.*{reason}.*127\.0\.0\.1:")
    assert process.stop() == 0
    assert TOKEN not in "".join(process.seen)


async def test_a_client_certificate_from_the_daemons_client_ca_stands_in_for_the_token(daemon, pki):
    started = daemon("--mcp-listen", "127.0.0.1:0", *tls_options(pki)[:4], "--tls-client-ca", str(pki["ca"]))
    url = started["mcp_url"]
    async with http_session(url, ca=pki["ca"], client_cert=(pki["client_cert"], pki["client_key"])) as session:
        assert ok(await session.call_tool("get_session_info", {}))["status"] == "idle"
    refused = await initialize_refusal(url, ca=pki["ca"])
    assert refused.startswith("client_cert_required: a client certificate signed by the daemon's --tls-client-ca"), refused
    async with httpx2.AsyncClient(verify=ssl.create_default_context(cafile=str(pki["ca"]))) as http:
        assert (await http.post(url, json=INITIALIZE, headers=HEADERS)).status_code == 403


def test_an_mcp_endpoint_off_loopback_without_tls_is_refused_at_start(fakesim_bin, spawn, pki):
    process = spawn([fakesim_bin, "--listen", "127.0.0.1:0", "--mcp-listen", "0.0.0.0:0"])
    process.wait_for(r"the MCP endpoint \(--mcp-listen\): refusing to listen on 0\.0\.0\.0:0 without TLS.*--tls-cert")
    assert process.popen.wait(timeout=60) != 0
    # TLS alone is not enough off loopback: a token (or client certificates) too.
    tls_only = tls_options(pki)[:4]
    process = spawn([fakesim_bin, "--listen", "127.0.0.1:0", "--mcp-listen", "0.0.0.0:0", *tls_only])
    process.wait_for(r"refusing to listen on 0\.0\.0\.0:0 without authentication.*--token-file")
    assert process.popen.wait(timeout=60) != 0


async def test_each_mcp_session_takes_the_lease_as_a_named_holder_and_gives_it_back(daemon, pki):
    started = daemon("--mcp-listen", "127.0.0.1:0", "--lease-in-sim", *tls_options(pki))
    url, process = started["mcp_url"], started["process"]
    with Client(started["address"], token=TOKEN, tls_ca=pki["ca"]) as operator:
        async with http_session(url, token=TOKEN, ca=pki["ca"]) as agent:
            assert ok(await agent.call_tool("get_session_info", {}))["status"] == "idle"
            assert not operator.status().lease_holder, "reads take no lease"
            ok(await agent.call_tool("reset_task", {}))
            holder = operator.status().lease_holder
            assert holder == "MCP HTTP session 1 (mcp)", holder

            with pytest.raises(FakesimError) as refused:
                operator.move(dy=0.02)
            assert refused.value.reason == "lease_held"
            assert refused.value.metadata["holder"] == f'"{holder}"'
            async with http_session(url, token=TOKEN, ca=pki["ca"]) as second:
                refused = await second.call_tool("move", {"delta_xyz": [0.0, 0.02, 0.0]})
                assert error_name(refused) == "lease_held"
                assert refused.structured_content["details"]["holder"] == f'"{holder}"'
                assert "control lease" in refused.structured_content["what_to_do"]
            moved = ok(await agent.call_tool("move", {"delta_xyz": [0.0, 0.02, 0.0]}))
            assert moved["action"]["stop_reason"] == "reached", "the holder still moves"
        # The session ended (the client's DELETE): its lease is given back.
        process.wait_for(r"lease released.*MCP HTTP session 1")
        assert not operator.status().lease_holder
        operator.acquire_lease("operator")
        operator.stop()
        operator.release_lease()
    assert process.stop() == 0
