"""A throw-away certificate authority and token for the tests of TLS and tokens (nothing is
committed): the daemon's files, and the options that make it use them."""

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

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


def write_pki(directory: Path) -> dict[str, Path]:
    """Writes a throw-away CA, a server certificate for 127.0.0.1 and localhost and a client
    certificate signed by it, their keys, and a token file into `directory`; answers their
    paths."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = certificate("fakesim test CA", ca_key, None, None, ca=True)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = certificate("127.0.0.1", server_key, ca.subject, ca_key, ca=False)
    files = {"ca": directory / "ca.pem", "cert": directory / "server.pem", "key": directory / "server.key",
             "token": directory / "token"}
    files["ca"].write_bytes(pem(ca))
    files["cert"].write_bytes(pem(server))
    files["key"].write_bytes(pem(server_key))
    files["token"].write_text(TOKEN + "\n")
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = certificate("fakesim test client", client_key, ca.subject, ca_key, ca=False)
    files["client_cert"], files["client_key"] = directory / "client.pem", directory / "client.key"
    files["client_cert"].write_bytes(pem(client))
    files["client_key"].write_bytes(pem(client_key))
    return files


def tls_options(pki) -> list[str]:
    """The daemon options serving TLS with the test certificate and requiring the token."""
    return ["--tls-cert", str(pki["cert"]), "--tls-key", str(pki["key"]), "--token-file", str(pki["token"])]
