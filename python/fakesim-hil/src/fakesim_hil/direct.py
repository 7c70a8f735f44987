"""The client's direct route: unary gRPC calls on an HTTP/2 connection of the calling thread's
own (`fakesim_hil.h2link.Link`), written and read on that thread with blocking socket calls.

grpcio hands every call to its own I/O threads and back (a completion queue, a wake-up each
way), which costs a Python caller more than the daemon's whole answer to a light call. The
client's hot calls (`Client.tick`, `Client.robot_state`) take this route instead on a
connection without TLS: one ``sendall`` of the request's frames, then ``recv`` until the
answer's trailers, as a current-thread Rust client does.
"""

from __future__ import annotations

import os
import struct
import threading
import time
import weakref

import grpc
import hpack

from .errors import FakesimError
from .h2link import Link, request_headers

#: Seconds between two looks at the links no call is using.
IDLE_CHECK_S = 0.25
#: Request header blocks kept (one per path, timeout and metadata in use).
HEADER_BLOCKS_KEPT = 64


def supports(address: str) -> bool:
    """Whether ``address`` is one this route connects to: ``unix:PATH`` or ``HOST:PORT``."""
    if address.startswith("unix:"):
        return len(address) > len("unix:")
    host, _, port = address.rpartition(":")
    return bool(host) and port.isdigit() and "/" not in host


class DirectCalls:
    """Unary calls to one daemon, each thread on a `Link` of its own made on its first call; a
    link that failed or is closing is closed and made again on the thread's next call. A
    background thread answers idle links every `IDLE_CHECK_S` seconds, so that a daemon shutting
    down is not kept waiting by a client that is not calling."""

    def __init__(self, address: str) -> None:
        self.address = address
        self._authority = "localhost" if address.startswith("unix:") else address
        self._local = threading.local()
        self._links: list[Link] = []
        # A client dropped without closing closes its connections all the same.
        weakref.finalize(self, _close_links, self._links)
        self._lock = threading.Lock()
        self._headers: dict[tuple[str, float | None, tuple[tuple[str, str], ...]], bytes] = {}
        self._closed = threading.Event()
        self._watcher: threading.Thread | None = None
        _EVERY.add(self)

    def unary(
        self, path: str, request: bytes, timeout_s: float | None, metadata: tuple[tuple[str, str], ...]
    ) -> bytes:
        """Runs the call to ``path`` with a serialized request and returns the serialized
        answer; a refusal, a deadline passed or a lost connection raises `FakesimError`."""
        key = (path, timeout_s, metadata)
        headers = self._headers.get(key)
        if headers is None:
            if len(self._headers) >= HEADER_BLOCKS_KEPT:
                self._headers.clear()
            headers = self._headers[key] = request_headers(path, self._authority, timeout_s, metadata)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        link = None
        try:
            while True:
                link = getattr(self._local, "link", None) or self._connect(timeout_s)
                with link.busy:
                    if not link.closing:
                        return link.call(headers, request, deadline)
                self._drop(link)
        except TimeoutError:
            self._drop(link)
            raise FakesimError(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded") from None
        except (OSError, ValueError, IndexError, struct.error, hpack.HPACKError) as error:
            self._drop(link)
            raise FakesimError(grpc.StatusCode.UNAVAILABLE, f"connection to {self.address} failed: {error}") from None
        finally:
            if link is not None and link.closing:
                self._drop(link)

    def close(self) -> None:
        """Closes every thread's connection and stops the idle links' thread."""
        self._closed.set()
        with self._lock:
            links = list(self._links)
            self._links.clear()
        for link in links:
            link.close()

    def _connect(self, timeout_s: float | None) -> Link:
        """A new connection for this thread (and the idle links' thread, on the first)."""
        link = Link(self.address, timeout_s)
        with self._lock:
            self._links.append(link)
            if self._watcher is None:
                watch = (weakref.ref(self), self._closed)
                self._watcher = threading.Thread(target=_watch_idle_links, args=watch, name="fakesim-direct-idle", daemon=True)
                self._watcher.start()
        self._local.link = link
        return link

    def _drop(self, link: Link | None) -> None:
        """Closes a connection that failed or is closing; the thread's next call makes a new one."""
        if getattr(self._local, "link", None) is link:
            self._local.link = None
        if link is not None:
            with self._lock:
                if link in self._links:
                    self._links.remove(link)
            link.close()

    def forget_links(self) -> None:
        """In a child this process forked: closes the child's copies of the parent's sockets
        without a word on them (the parent's connections go on) and starts afresh, so that no
        call of the child is written into a connection the parent is using."""
        links = list(self._links)
        self._links.clear()
        self._lock = threading.Lock()
        self._local = threading.local()
        self._watcher = None
        for link in links:
            link.close()

    def answer_idle_links(self) -> None:
        """Answers what the links no call is using have received, and closes those the daemon
        is closing and those of threads that have ended."""
        with self._lock:
            links = list(self._links)
        for link in links:
            if not link.busy.acquire(blocking=False):
                continue
            if not link.owner.is_alive():
                link.closing = True
            try:
                if not link.closing:
                    link.answer_idle()
            except (OSError, ValueError, IndexError, struct.error, hpack.HPACKError, FakesimError):
                link.closing = True
            finally:
                link.busy.release()
            if link.closing:
                with self._lock:
                    if link in self._links:
                        self._links.remove(link)
                link.close()


def _close_links(links: list[Link]) -> None:
    """Closes the connections of a `DirectCalls` that is gone."""
    for link in links:
        link.close()


def _watch_idle_links(calls: weakref.ref[DirectCalls], closed: threading.Event) -> None:
    """The idle links' thread: every `IDLE_CHECK_S` until ``closed`` is set or the calls are
    gone (a client dropped without closing), `DirectCalls.answer_idle_links`."""
    while not closed.wait(IDLE_CHECK_S):
        alive = calls()
        if alive is None:
            return
        alive.answer_idle_links()
        del alive


#: Every `DirectCalls` of this process, for `_after_fork`.
_EVERY: weakref.WeakSet[DirectCalls] = weakref.WeakSet()


def _after_fork() -> None:
    """Run in a child after a fork: every `DirectCalls` forgets the parent's connections."""
    for calls in list(_EVERY):
        calls.forget_links()


os.register_at_fork(after_in_child=_after_fork)
