"""Waiting for a process the test did not start to end."""

from __future__ import annotations

import os
import select


def wait_gone(pid: int, timeout_s: float = 30.0) -> bool:
    """Whether process ``pid`` has ended within ``timeout_s`` (woken by its pidfd, not polled)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout_s)[0])
    finally:
        os.close(fd)
