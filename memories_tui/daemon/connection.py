"""The client's side of the daemon's socket below the protocol: the connection class, which
errors mean the daemon is not there, when a failed connect is worth trying again, and how a
cancel reaches the daemon (the client closes its sending side)."""

from __future__ import annotations

import errno
import functools
import json
import os
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from .paths import DaemonPaths, read_holder_text

if TYPE_CHECKING:  # http.client (and ssl, email, which it loads) only once a socket is there to talk to
    import http.client

CONNECT_TIMEOUT_SECONDS = 5.0  # at most this long (and never past the call's silence limit) to be let in
REFUSED_RETRY_SECONDS = 0.25  # a refused connect while the daemon's process lives: it is (re)starting


def hang_up_on(cancel: threading.Event | None, sock: socket.socket | None) -> Callable[[], None]:
    """Close the sending side of `sock` once `cancel` is set (the daemon cancels the call's work
    when it sees that); returns a stopper."""
    if cancel is None or sock is None:
        return lambda: None
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if cancel.wait(0.1):
                try:
                    sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return

    thread = threading.Thread(target=watch, name="memories-cancel", daemon=True)
    thread.start()
    return done.set


@functools.cache
def connection_class() -> Callable[[str, float | None], http.client.HTTPConnection]:
    import http.client

    class UnixConnection(http.client.HTTPConnection):
        """HTTP over the daemon's Unix socket (the host name is only a label)."""

        def __init__(self, address: str, timeout: float | None) -> None:
            super().__init__("localhost", timeout=timeout)
            self._address = address

        def connect(self) -> None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.settimeout(CONNECT_TIMEOUT_SECONDS)
                sock.connect(self._address)
                sock.settimeout(self.timeout)
            except BaseException:
                sock.close()
                raise
            self.sock = sock

    return UnixConnection


def http_errors() -> tuple[type[BaseException], ...]:
    import http.client

    return (OSError, http.client.HTTPException)


def retry_window(exc: OSError, paths: DaemonPaths, wait: float) -> float:
    """How long after the first try a failed connect is worth trying again: the whole wait when
    the queue is full (someone listens), a moment when refused while the daemon's process runs."""
    if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
        return wait
    if exc.errno == errno.ECONNREFUSED and holder_alive(paths):
        return min(wait, REFUSED_RETRY_SECONDS)
    return 0.0


def holder_alive(paths: DaemonPaths) -> bool:
    """Does the lock file name a live process (a daemon starting, or one with a full queue)? A
    daemon killed outright leaves its pid there; its socket is then stale and nobody waits."""
    try:
        data = json.loads(read_holder_text(paths.lock_file))
        pid = int(data["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process: not ours to judge, and it lives
    return pid > 0
