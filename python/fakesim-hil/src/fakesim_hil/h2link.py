"""One HTTP/2 connection for unary gRPC calls, written and read by the thread that calls, with
blocking socket calls: only what a unary call needs of HTTP/2 (RFC 9113) is here — the
connection preface and settings, HEADERS/CONTINUATION, DATA within the flow-control windows, PING
and SETTINGS acknowledgements, RST_STREAM and GOAWAY. The answers' header blocks are decoded with
the ``hpack`` package; the daemon's dynamic table is set to zero, so a block decodes the same
every time and its decoding is kept.
"""

from __future__ import annotations

import base64
import select
import socket
import struct
import threading
import time
from collections.abc import Sequence
from urllib.parse import unquote

import grpc
import hpack

from .errors import FakesimError

#: The client connection preface (RFC 9113, section 3.4).
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#: Frame types used here.
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
#: Frame flags used here.
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY = 0x1, 0x1, 0x4, 0x8, 0x20
#: Settings identifiers used here.
HEADER_TABLE_SIZE, ENABLE_PUSH, INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE = 1, 2, 4, 5
#: The largest flow-control window and stream identifier.
MAX_WINDOW = MAX_STREAM_ID = 2**31 - 1
#: The window both sides start with, and the frame size they may send before settings say more.
DEFAULT_WINDOW, DEFAULT_FRAME_SIZE = 65_535, 16_384
#: Header blocks whose decoding is kept per connection (the date in an answer's headers changes
#: once a second; the rest repeat).
DECODED_BLOCKS_KEPT = 64
#: gRPC codes of an RST_STREAM's HTTP/2 error codes (gRPC's HTTP/2 protocol mapping); others INTERNAL.
RST_CODES = {7: grpc.StatusCode.UNAVAILABLE, 8: grpc.StatusCode.CANCELLED, 11: grpc.StatusCode.RESOURCE_EXHAUSTED, 12: grpc.StatusCode.PERMISSION_DENIED}
#: gRPC codes of an answer's HTTP status other than 200 (the same mapping); others UNKNOWN.
HTTP_CODES = {
    "400": grpc.StatusCode.INTERNAL,
    "401": grpc.StatusCode.UNAUTHENTICATED,
    "403": grpc.StatusCode.PERMISSION_DENIED,
    "404": grpc.StatusCode.UNIMPLEMENTED,
    "429": grpc.StatusCode.UNAVAILABLE,
    "502": grpc.StatusCode.UNAVAILABLE,
    "503": grpc.StatusCode.UNAVAILABLE,
    "504": grpc.StatusCode.UNAVAILABLE,
}
_CODES = {code.value[0]: code for code in grpc.StatusCode}
_HEADER = struct.Struct(">I")


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    """One HTTP/2 frame."""
    return _HEADER.pack(len(payload))[1:] + bytes((kind, flags)) + _HEADER.pack(stream) + payload


def hpack_int(value: int, prefix_bits: int, first: int = 0) -> bytes:
    """An HPACK integer (RFC 7541, section 5.1) in a prefix of ``prefix_bits``, ``first`` the
    bits above the prefix in its first byte."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes((first | value,))
    out, value = bytearray((first | limit,)), value - limit
    while value >= 128:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def literal(name: str | int, value: str) -> bytes:
    """A header field as a literal never indexed (RFC 7541, section 6.2.3: no table of ours or of
    a proxy's keeps it, a token included), its name a static table index or a string, neither
    Huffman-coded."""
    encoded = value.encode()
    if isinstance(name, int):
        head = hpack_int(name, 4, 0x10)
    else:
        head = b"\x10" + hpack_int(len(name), 7) + name.encode()
    return head + hpack_int(len(encoded), 7) + encoded


def request_headers(path: str, authority: str, timeout_s: float | None, metadata: Sequence[tuple[str, str]]) -> bytes:
    """The header block of a unary call to ``path``: POST, http, the path and authority (static
    table names 4 and 1), gRPC's content type (name 31) and ``te: trailers``, the deadline as
    ``grpc-timeout`` in milliseconds, then ``metadata``."""
    block = b"\x83\x86" + literal(4, path) + literal(1, authority) + literal(31, "application/grpc") + literal("te", "trailers")
    if timeout_s is not None:
        block += literal("grpc-timeout", f"{min(max(round(timeout_s * 1e3), 1), 99_999_999)}m")
    for name, value in metadata:
        block += literal(name, value)
    return block


class Link:
    """One HTTP/2 connection to the daemon, used by one thread at a time, one call at a time."""

    def __init__(self, address: str, timeout_s: float | None) -> None:
        if address.startswith("unix:"):
            self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            target: str | tuple[str, int] = address[len("unix:") :]
        else:
            host, _, port = address.rpartition(":")
            target = (host.strip("[]"), int(port))
            self._socket = socket.socket(socket.AF_INET6 if ":" in target[0] else socket.AF_INET, socket.SOCK_STREAM)
            self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socket.settimeout(timeout_s)
        try:
            self._socket.connect(target)
            settings = struct.pack(">HIHIHI", HEADER_TABLE_SIZE, 0, ENABLE_PUSH, 0, INITIAL_WINDOW_SIZE, MAX_WINDOW)
            window = frame(WINDOW_UPDATE, 0, 0, _HEADER.pack(MAX_WINDOW - DEFAULT_WINDOW))
            self._socket.sendall(PREFACE + frame(SETTINGS, 0, 0, settings) + window)
        except OSError:
            self._socket.close()
            raise
        self._buffer = bytearray()
        self._next_stream = 1
        self._send_window = DEFAULT_WINDOW
        self._stream_window_start = DEFAULT_WINDOW
        self._max_frame = DEFAULT_FRAME_SIZE
        self._received = 0
        self._decoder = hpack.Decoder()
        self._decoder.max_allowed_table_size = 0
        self._decoded: dict[bytes, list[tuple[str, str]]] = {}
        #: Set once the daemon has said GOAWAY or closed: no new call is sent on this connection.
        self.closing = False
        #: Held while a call or `answer_idle` uses the connection.
        self.busy = threading.Lock()
        #: The thread whose calls use the connection.
        self.owner = threading.current_thread()

    def close(self) -> None:
        """Closes the socket."""
        self._socket.close()

    def call(self, headers: bytes, message: bytes, deadline: float | None) -> bytes:
        """Sends one unary call (its header block, its serialized request) and returns the
        answer's serialized message, or raises `FakesimError` with the daemon's status."""
        stream = self._next_stream
        if stream > MAX_STREAM_ID:
            raise ConnectionResetError("stream identifiers used up")
        self._next_stream += 2
        self._send(stream, headers, b"\x00" + _HEADER.pack(len(message)) + message, deadline)
        blocks: list[list[tuple[str, str]]] = []
        body = bytearray()
        while True:
            kind, flags, on, payload = self._read_frame(deadline)
            if on != stream:
                continue
            if kind == HEADERS:
                blocks.append(self._header_block(flags, payload, deadline))
            elif kind == DATA:
                body += _unpadded(flags, payload)
            elif kind == RST_STREAM:
                code = _HEADER.unpack(payload[:4])[0]
                raise FakesimError(RST_CODES.get(code, grpc.StatusCode.INTERNAL), f"stream reset by the daemon (HTTP/2 error {code})")
            if flags & END_STREAM and kind in (HEADERS, DATA):
                return _answer(blocks, body)

    def _send(self, stream: int, block: bytes, data: bytes, deadline: float | None) -> None:
        """The call's frames in one write when its windows allow: HEADERS (CONTINUATION if its
        block is longer than a frame), then DATA, the last ending the stream."""
        out = []
        for start in range(0, len(block), self._max_frame):
            last = start + self._max_frame >= len(block)
            out.append(frame(CONTINUATION if start else HEADERS, END_HEADERS if last else 0, stream, block[start : start + self._max_frame]))
        stream_window = self._stream_window_start
        while data:
            allowed = min(self._send_window, stream_window, self._max_frame)
            if allowed <= 0:
                self._socket.sendall(b"".join(out))
                out = []
                kind, _, on, payload = self._read_frame(deadline)
                if kind == WINDOW_UPDATE and on == stream:
                    stream_window += _HEADER.unpack(payload[:4])[0] & MAX_WINDOW
                continue
            piece, data = data[:allowed], data[allowed:]
            self._send_window -= len(piece)
            stream_window -= len(piece)
            out.append(frame(DATA, 0 if data else END_STREAM, stream, piece))
        self._socket.sendall(b"".join(out))

    def _header_block(self, flags: int, payload: bytes, deadline: float | None) -> list[tuple[str, str]]:
        """The decoded header block starting in a HEADERS frame's payload (CONTINUATION frames
        read until its end)."""
        block = bytes(_unpadded(flags, payload))
        if flags & PRIORITY:
            block = block[5:]
        while not flags & END_HEADERS:
            kind, flags, _, more = self._read_frame(deadline)
            if kind != CONTINUATION:
                raise ConnectionResetError("a header block broken off by another frame")
            block += more
        decoded = self._decoded.get(block)
        if decoded is None:
            decoded = [(str(name), str(value)) for name, value in self._decoder.decode(block)]
            if len(self._decoded) >= DECODED_BLOCKS_KEPT:
                self._decoded.clear()
            self._decoded[block] = decoded
        return decoded

    def _read_frame(self, deadline: float | None) -> tuple[int, int, int, bytes]:
        """The next frame for a stream, waiting for it until the deadline."""
        while True:
            got = self._parse()
            if got is not None:
                return got
            self._fill(deadline)

    def _parse(self) -> tuple[int, int, int, bytes] | None:
        """The next frame for a stream in the read buffer (None: no whole one there); the
        connection's own frames (SETTINGS, PING, WINDOW_UPDATE, GOAWAY) are answered or applied
        on the way."""
        buffer = self._buffer
        while len(buffer) >= 9:
            length = int.from_bytes(buffer[:3], "big")
            if len(buffer) < 9 + length:
                return None
            kind, flags, stream = buffer[3], buffer[4], int.from_bytes(buffer[5:9], "big") & MAX_WINDOW
            payload = bytes(buffer[9 : 9 + length])
            del buffer[: 9 + length]
            if stream:
                if kind == DATA:
                    self._credit(length)
                return kind, flags, stream, payload
            if kind == SETTINGS and not flags & ACK:
                self._apply_settings(payload)
            elif kind == PING and not flags & ACK:
                self._socket.sendall(frame(PING, ACK, 0, payload))
            elif kind == WINDOW_UPDATE:
                self._send_window += _HEADER.unpack(payload[:4])[0] & MAX_WINDOW
            elif kind == GOAWAY:
                self.closing = True
                if _HEADER.unpack(payload[:4])[0] & MAX_WINDOW < self._next_stream - 2:
                    raise FakesimError(grpc.StatusCode.UNAVAILABLE, "the daemon closed the connection before this call (GOAWAY)")
        return None

    def answer_idle(self) -> None:
        """Reads what the daemon sent while no call was running and answers it: a PING its ACK
        (a daemon shutting down waits for that), a GOAWAY or the end of the connection marks it
        closing."""
        while select.select([self._socket], [], [], 0)[0]:
            chunk = self._socket.recv(65_536)
            if not chunk:
                self.closing = True
                return
            self._buffer += chunk
            while self._parse() is not None:
                pass

    def _apply_settings(self, payload: bytes) -> None:
        """Takes the daemon's settings and acknowledges them."""
        for offset in range(0, len(payload) - len(payload) % 6, 6):
            key, value = struct.unpack_from(">HI", payload, offset)
            if key == INITIAL_WINDOW_SIZE:
                self._stream_window_start = value
            elif key == MAX_FRAME_SIZE:
                self._max_frame = value
        self._socket.sendall(frame(SETTINGS, ACK, 0))

    def _credit(self, length: int) -> None:
        """Counts received DATA and gives the connection's window back once half of it is used."""
        self._received += length
        if self._received > MAX_WINDOW // 2:
            self._socket.sendall(frame(WINDOW_UPDATE, 0, 0, _HEADER.pack(self._received)))
            self._received = 0

    def _fill(self, deadline: float | None) -> None:
        """Appends what the connection has to the read buffer, waiting until the deadline."""
        if deadline is not None:
            self._socket.settimeout(max(deadline - time.monotonic(), 1e-6))
        chunk = self._socket.recv(65_536)
        if not chunk:
            raise ConnectionResetError("the daemon closed the connection")
        self._buffer += chunk


def _unpadded(flags: int, payload: bytes) -> bytes:
    """A DATA or HEADERS payload without its padding."""
    if flags & PADDED:
        return payload[1 : len(payload) - payload[0]]
    return payload


def _answer(blocks: list[list[tuple[str, str]]], body: bytearray) -> bytes:
    """The serialized message of a finished call, or `FakesimError` for its status."""
    fields = dict(field for block in blocks for field in block)
    http = fields.get(":status", "")
    if http != "200":
        raise FakesimError(HTTP_CODES.get(http, grpc.StatusCode.UNKNOWN), f"HTTP status {http or 'missing'} from the daemon")
    status = fields.get("grpc-status")
    if status != "0":
        code = _CODES.get(int(status), grpc.StatusCode.UNKNOWN) if status and status.isdigit() else grpc.StatusCode.UNKNOWN
        details = fields.get("grpc-status-details-bin")
        raw = base64.b64decode(details + "=" * (-len(details) % 4)) if details else None
        raise FakesimError.from_status(code, unquote(fields.get("grpc-message", "")), raw)
    if len(body) < 5 or body[0] != 0:
        raise FakesimError(grpc.StatusCode.INTERNAL, "an answer without one uncompressed message")
    length = _HEADER.unpack(body[1:5])[0]
    return bytes(body[5 : 5 + length])
