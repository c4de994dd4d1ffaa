"""One call of the resident engine, whoever carries it (the socket's handler in server.py, or
the daemon itself on a client's behalf, in_process.py): what a method gets (`Call`), what the
server asks of the service (`Dispatcher`), the call's answer line, and while it runs the
heartbeats that tell the client it is alive and the watch that cancels it when the client
hangs up.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from ..errors import ErrorCode, InternalError, MemoriesError, UsageError
from ..i18n import msg
from .peer import Peer
from .protocol import encode_line, error_line

log = logging.getLogger("memories.daemon")
MAX_HEARTBEAT_SECONDS = 15.0  # a heartbeat at least this often while a call runs, whatever the client says
MIN_HEARTBEAT_SECONDS = 0.05


@dataclass
class Call:
    """What a method gets besides its arguments: who asks, a cancel flag and a progress line."""

    peer: Peer
    cancel: threading.Event = field(default_factory=threading.Event)
    send_progress: Callable[[dict[str, Any]], None] = lambda _data: None

    def progress(self, data: dict[str, Any]) -> None:
        if not self.cancel.is_set():
            self.send_progress(data)


Method = Callable[[dict[str, Any], Call], object]
# A method that keeps its connection (an MCP session relayed to the daemon): it writes one
# `{"result": …}` line once ready, then owns both directions until either side hangs up.
StreamMethod = Callable[[dict[str, Any], Call, IO[bytes], IO[bytes]], None]


class Dispatcher:
    """What the server asks of the service behind it."""

    def method(self, name: str) -> Method | None:  # pragma: no cover - interface
        raise NotImplementedError

    def stream(self, name: str) -> StreamMethod | None:
        """The method that keeps its connection by this name, if any."""
        return None

    def before_call(self) -> None:
        """Runs before every method (the service locks vaults whose time is up)."""

    def build(self) -> dict[str, Any]:
        """Who serves: version, api, kind, unlocked, config (see handshake.py)."""
        return {}


def answer_line(dispatcher: Dispatcher, name: str, method: Method, args: dict[str, Any],
                call: Call) -> tuple[bytes, str]:
    """Run one method as the socket does (the dispatcher's check first) and its answer line
    with the outcome to log: the result, or the error as the client reads it back. Also how the
    daemon runs a method for itself on a client's behalf (the same answer, not a socket's)."""
    try:
        dispatcher.before_call()
        return encode_line({"result": method(args, call)}), "ok"
    except MemoriesError as exc:
        return error_line(exc), exc.code
    except (KeyError, TypeError, ValueError) as exc:  # arguments of the wrong shape
        refusal = UsageError(msg("Bad arguments for {name}: {kind}.",
                                 name=name, kind=type(exc).__name__), code=ErrorCode.DAEMON_BAD_REQUEST)
        return error_line(refusal), refusal.code
    except Exception as exc:  # noqa: BLE001 - never crash on a request; never echo its text
        log.error("%s failed: unexpected %s", name, type(exc).__name__)
        error = InternalError(msg("Unexpected {kind} in the daemon while running {name}. This is a "
                                  "bug in Memories; the daemon log has the place.",
                                  kind=type(exc).__name__, name=name))
        return error_line(error), error.code


def beat_seconds(limit_text: str | None) -> float:
    """A quarter of the client's silence limit (within bounds): three beats may be late before
    the client gives up on a daemon that is alive."""
    try:
        limit = float(limit_text or "nan")
    except ValueError:
        limit = float("nan")
    if not limit > 0:  # absent, not a number: an old client's default
        return MAX_HEARTBEAT_SECONDS
    return min(MAX_HEARTBEAT_SECONDS, max(MIN_HEARTBEAT_SECONDS, limit / 4))


def heartbeat(beat: Callable[[], None], every: float) -> Callable[[], None]:
    """Call `beat` every `every` seconds from a thread until the returned stopper is called."""
    done = threading.Event()

    def run() -> None:
        while not done.wait(every):
            beat()

    thread = threading.Thread(target=run, name="memories-daemon-heartbeat", daemon=True)
    thread.start()

    def stop() -> None:
        done.set()
        thread.join()

    return stop


def watch_hangup(conn: socket.socket, cancel: threading.Event) -> Callable[[], None]:
    """Set `cancel` when the client closes its end while the method runs; returns a stopper."""
    read_end, write_end = os.pipe()

    def watch() -> None:
        poller = select.poll()
        poller.register(conn, select.POLLIN | getattr(select, "POLLRDHUP", 0))
        poller.register(read_end, select.POLLIN)
        while True:
            events = dict(poller.poll())
            if read_end in events:
                return
            try:
                peeked = conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
            except BlockingIOError:
                continue
            except OSError:
                peeked = b""
            if not peeked:  # end of stream: the client hung up
                cancel.set()
                return
            poller.unregister(conn)  # a client that talks out of turn: stop watching it

    thread = threading.Thread(target=watch, name="memories-daemon-hangup", daemon=True)
    thread.start()

    def stop() -> None:
        os.write(write_end, b"x")
        thread.join()
        os.close(read_end)
        os.close(write_end)

    return stop
