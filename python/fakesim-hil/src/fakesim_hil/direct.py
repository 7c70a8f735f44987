"""The client's direct route: its hot unary calls (`Client.tick`, `Client.robot_state`) on the
``fakesim_hil._native`` extension, tonic's HTTP/2 client (the ``fakesim-client`` crate) on a
connection of the calling thread's own, driven by that thread with the GIL released.

grpcio hands every call to its own I/O threads and back (a completion queue, a wake-up each
way), which costs a Python caller more than the daemon's whole answer to a light call; here the
thread that calls writes the request and reads the answer, as a current-thread Rust client does.
A target form the extension does not dial (or a checkout where it is not built) leaves the calls
to grpcio.
"""

from __future__ import annotations

from .connection import Connection
from .errors import FakesimError, status_code

try:
    from . import _native
except ImportError:  # a source checkout without the extension built: grpcio takes every call
    _native = None


def supports(address: str) -> bool:
    """Whether the extension is there and dials ``address`` (every gRPC target form grpcio takes
    but ``dns://SERVER/...``, ``vsock:`` and name-service schemes such as ``xds:``)."""
    return _native is not None and _native.supports(address)


class DirectCalls:
    """Unary calls to one daemon with the connection's address and TLS settings; each thread
    that calls has a connection of its own, closed when the thread ends or `close` is called."""

    def __init__(self, connection: Connection) -> None:
        self.address = connection.address
        pem = [path.read_bytes() if path is not None else None for path in (connection.tls_ca, connection.tls_cert, connection.tls_key)]
        self._calls = _native.Calls(connection.address, *pem)

    def unary(self, path: str, request: bytes, timeout_s: float | None, metadata: tuple[tuple[str, str], ...]) -> bytes:
        """Runs the call to ``path`` with a serialized request and returns the serialized
        answer; a refusal, a deadline passed or a lost connection raises `FakesimError`."""
        try:
            return self._calls.unary(path, request, timeout_s, metadata)
        except _native.CallError as error:
            code, message, details = error.args
            raise FakesimError.from_status(status_code(code), message, details or None) from None

    def close(self) -> None:
        """Closes the idle connections; one in a call closes when its call ends."""
        self._calls.close()
