"""`fakesim-hil mcp --connect` to a daemon that requires TLS and a bearer token: the tools
authenticate like any gRPC client, and a missing token is a tool error naming the refusal."""

import datetime
import ipaddress

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from episode_script import error_name, ok, stdio_session

pytestmark = pytest.mark.anyio

TOKEN = "mcp-test-token-0123456789"


def certificate(subject: str, key, issuer_name, issuer_key, ca: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(issuer_name or x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(issuer_key or key, hashes.SHA256())


def pem(obj) -> bytes:
    if isinstance(obj, x509.Certificate):
        return obj.public_bytes(serialization.Encoding.PEM)
    return obj.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


@pytest.fixture
def pki(tmp_path):
    """A throw-away CA, a server certificate for 127.0.0.1 signed by it, and a token file."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = certificate("fakesim test CA", ca_key, None, None, ca=True)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = certificate("127.0.0.1", server_key, ca.subject, ca_key, ca=False)
    files = {"ca": tmp_path / "ca.pem", "cert": tmp_path / "server.pem", "key": tmp_path / "server.key",
             "token": tmp_path / "token"}
    files["ca"].write_bytes(pem(ca))
    files["cert"].write_bytes(pem(server))
    files["key"].write_bytes(pem(server_key))
    files["token"].write_text(TOKEN + "\n")
    return files


async def test_connect_speaks_tls_and_sends_the_token(daemon, pki, fakesim_bin):
    started = daemon("--tls-cert", str(pki["cert"]), "--tls-key", str(pki["key"]), "--token-file", str(pki["token"]))
    tls = ["--connect", started["address"], "--tls-ca", str(pki["ca"])]
    async with stdio_session(fakesim_bin, *tls) as session:
        refused = await session.call_tool("get_session_info", {})
        assert error_name(refused) == "token_required"
    async with stdio_session(fakesim_bin, *tls, "--token-file", str(pki["token"])) as session:
        assert ok(await session.call_tool("get_session_info", {}))["status"] == "idle"
        ok(await session.call_tool("reset_task", {}))
        ok(await session.call_tool("stop_episode", {}))


def test_an_mcp_endpoint_on_a_daemon_that_requires_a_token_is_refused(fakesim_bin, spawn, pki):
    args = [fakesim_bin, "--listen", "127.0.0.1:0", "--mcp-listen", "127.0.0.1:0", "--token-file", str(pki["token"])]
    process = spawn(args)
    process.wait_for(r"--mcp-listen cannot serve a daemon that requires TLS, a token")
    assert process.popen.wait(timeout=60) != 0
