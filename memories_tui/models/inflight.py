"""Ends a request in flight the moment it must stop: cancelled, past its deadline, or its vault
locked.

httpx cannot shorten a read that is already waiting on a socket, and its read timeout starts
again with every byte, so a server that trickles one byte a second (in the headers or the
body) would keep a request alive for hours. While a request runs, a small watcher thread looks
at the cancel event, the deadline and the `stop` test (the vault was locked) every 0.1 s; when
one trips it shuts the request's
sockets down, so the blocked read returns at once and the request thread raises the matching
error (see ``models.http``). The sockets come from httpcore's documented ``trace`` extension
(``connect_tcp`` / ``start_tls`` complete), set on every request the watch covers.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

POLL_SECONDS = 0.1
_SOCKET_EVENTS = (".connect_tcp.complete", ".start_tls.complete")


def _shutdown(sock: Any) -> None:
    # socket.socket's own shutdown, also for an SSLSocket (whose override drops its TLS state
    # under a thread that may be reading); a socket already closed or detached is fine.
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except (OSError, TypeError, ValueError):
        pass


class InFlight:
    """Context manager around one request (all its attempts). `tripped` says it was cut."""

    def __init__(self, cancel: threading.Event | None, deadline: float | None,
                 stop: Callable[[], bool] | None = None) -> None:
        self.cancel = cancel
        self.deadline = deadline
        self.stop = stop  # a cheap test, true once the request must end (its vault was locked)
        self.tripped = False
        self._sockets: list[Any] = []
        self._lock = threading.Lock()
        self._done = threading.Event()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's trace callback: remember every socket this request opens."""
        if not event.endswith(_SOCKET_EVENTS):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            tripped = self.tripped
        if tripped:
            _shutdown(sock)

    def __enter__(self) -> InFlight:
        if self.cancel is not None or self.deadline is not None or self.stop is not None:
            threading.Thread(target=self._watch, name="memories-http-watch", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()

    def _due(self) -> bool:
        if self.cancel is not None and self.cancel.is_set():
            return True
        if self.stop is not None and self.stop():
            return True
        return self.deadline is not None and time.monotonic() >= self.deadline

    def _watch(self) -> None:
        while True:
            wait = POLL_SECONDS
            if self.deadline is not None:
                wait = min(wait, max(self.deadline - time.monotonic(), 0.0))
            if self._done.wait(wait):
                return
            if self._due():
                self.trip()
                return

    def trip(self) -> None:
        """Cut the request: every socket it holds is shut down (reads and writes fail at once)."""
        with self._lock:
            self.tripped = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shutdown(sock)
