"""Connection settings shared by every client of the daemon: address, bearer token, TLS."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import grpc

#: Environment variable holding the bearer token.
TOKEN_ENV = "FAKESIM_HIL_TOKEN"
#: Environment variable holding the path of the CA file that enables TLS.
TLS_CA_ENV = "FAKESIM_HIL_TLS_CA"
#: Address used when none is given.
DEFAULT_ADDRESS = "127.0.0.1:50051"


@dataclass(frozen=True)
class Connection:
    """Where the daemon is and how to authenticate to it.

    ``address`` is ``HOST:PORT`` or ``unix:PATH``. The token is sent as
    ``authorization: Bearer <token>`` on every call. TLS is on when ``tls_ca`` names a CA file;
    ``tls_cert`` and ``tls_key`` add a client certificate.
    """

    address: str = DEFAULT_ADDRESS
    token: str | None = None
    tls_ca: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None

    @classmethod
    def resolve(
        cls,
        address: str = DEFAULT_ADDRESS,
        *,
        token: str | None = None,
        token_file: str | os.PathLike[str] | None = None,
        tls_ca: str | os.PathLike[str] | None = None,
        tls_cert: str | os.PathLike[str] | None = None,
        tls_key: str | os.PathLike[str] | None = None,
    ) -> Connection:
        """Settings from explicit values, falling back to ``FAKESIM_HIL_TOKEN`` / ``FAKESIM_HIL_TLS_CA``."""
        if token is None and token_file is not None:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        if token is None:
            token = os.environ.get(TOKEN_ENV) or None
        if tls_ca is None:
            tls_ca = os.environ.get(TLS_CA_ENV) or None
        if (tls_cert is None) != (tls_key is None):
            raise ValueError("a client certificate needs both tls_cert and tls_key")
        if tls_cert is not None and tls_ca is None:
            raise ValueError("a client certificate needs TLS: give tls_ca too")
        return cls(
            address=address,
            token=token,
            tls_ca=Path(tls_ca) if tls_ca is not None else None,
            tls_cert=Path(tls_cert) if tls_cert is not None else None,
            tls_key=Path(tls_key) if tls_key is not None else None,
        )

    def channel(self, options: list[tuple[str, int | str]] | None = None) -> grpc.Channel:
        """Opens a channel to the daemon with these settings."""
        options = list(options or [])
        if self.address.startswith("unix:"):
            # grpcio names a socket's path as the HTTP/2 authority, which the daemon's HTTP/2
            # server refuses as malformed (RST_STREAM, protocol error): name the local host.
            options.append(("grpc.default_authority", "localhost"))
        if self.tls_ca is None:
            return grpc.insecure_channel(self.address, options=options)
        credentials = grpc.ssl_channel_credentials(
            root_certificates=self.tls_ca.read_bytes(),
            private_key=self.tls_key.read_bytes() if self.tls_key else None,
            certificate_chain=self.tls_cert.read_bytes() if self.tls_cert else None,
        )
        return grpc.secure_channel(self.address, credentials, options=options)

    def call_metadata(self) -> tuple[tuple[str, str], ...]:
        """Metadata sent with every call (the bearer token, when there is one)."""
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()
