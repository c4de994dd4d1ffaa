"""What clients may hold of the daemon while their requests arrive: time and memory.

One request is at most MAX_REQUEST_BYTES, but many connections at once could each send that
much; the bytes all of them are sending or being served for are capped together, and a
request that would pass the cap is refused (`daemon_busy`) before its body is read. A
connection that sends nothing for IDLE_SECONDS, or takes longer than REQUEST_SECONDS to send
its whole request (a byte at a time), is closed, so idle or dripping clients cannot pile up.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

from ..testhooks import daemon_limit

IDLE_SECONDS = 30.0  # nothing received for this long: the connection is closed
REQUEST_SECONDS = 60.0  # request line, headers and body must all arrive within this
MAX_INFLIGHT_BYTES = 128 * 1024 * 1024  # request bodies of every connection together


@dataclass(frozen=True)
class Limits:
    idle_seconds: float
    request_seconds: float
    inflight_bytes: int

    @classmethod
    def current(cls) -> Limits:
        return cls(idle_seconds=daemon_limit("idle", IDLE_SECONDS),
                   request_seconds=daemon_limit("request", REQUEST_SECONDS),
                   inflight_bytes=int(daemon_limit("inflight", MAX_INFLIGHT_BYTES)))


class ByteBudget:
    """Request bytes held by all connections together, at most `cap`."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.used = 0
        self._lock = threading.Lock()

    def take(self, count: int) -> bool:
        with self._lock:
            if self.used + count > self.cap:
                return False
            self.used += count
            return True

    def give_back(self, count: int) -> None:
        with self._lock:
            self.used = max(0, self.used - count)


class DeadlineSocketIO(socket.SocketIO):
    """A socket's reading side that waits at most `idle` for each piece and stops once the
    whole request has had `total` seconds: a timeout ends the connection."""

    def __init__(self, sock: socket.socket, idle: float, total: float) -> None:
        super().__init__(sock, "rb")
        self._socket = sock
        self._idle = idle
        self._deadline = time.monotonic() + total

    def readinto(self, b: bytearray | memoryview) -> int | None:  # type: ignore[override]
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError  # the whole request had its time: the connection ends
        self._socket.settimeout(min(self._idle, left))
        return super().readinto(b)
