"""The socket side of the resident engine: stdlib `http.server` on a Unix stream socket, one
thread per connection (the engine is synchronous and thread-safe).

Per connection the kernel's peer credentials are read and another user is refused before any
argument is looked at. Per request: the version in the path, a `Content-Length` within the
cap, a JSON object body and a known method, else a clear JSON error; then the method runs
with a cancel event that is set as soon as the client hangs up (ctrl+c in the CLI), and its
progress is streamed as it happens. Nothing a client sends can end the server: every failure
becomes an error line, and an unexpected exception is logged by type only (its text may
quote vault content) and answered as `internal_error`.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import select
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import IO, Any

from ..errors import ErrorCode, InternalError, MemoriesError, UsageError
from ..i18n import msg
from .handshake import API_HEADER, RESTARTABLE, VERSION_HEADER, Build, mismatch
from .limits import ByteBudget, DeadlineSocketIO, Limits
from .peer import Peer, peer_of
from .protocol import (
    CLIENT_HEADER,
    CONTENT_TYPE,
    HEARTBEAT,
    MAX_REQUEST_BYTES,
    PREFIX,
    SILENCE_HEADER,
    VERSION,
    DaemonProtocolError,
    PeerRefusedError,
    encode_line,
    error_line,
)
from .status import ClientBook

log = logging.getLogger("memories.daemon")
LISTEN_BACKLOG = 1024  # connections the kernel queues (it may lower this): a burst of calls waits, not fails
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


class DaemonServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True  # a stuck client never blocks shutdown
    block_on_close = False
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: str, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        self.limits = Limits.current()
        self.inflight = ByteBudget(self.limits.inflight_bytes)  # request bytes of every connection together
        self.clients = ClientBook()  # who uses the daemon, for `daemon status`
        old = os.umask(0o177)  # the socket file is created 0600
        try:
            super().__init__(address, _Handler)
        finally:
            os.umask(old)
        try:
            os.chmod(address, 0o600)
        except OSError:
            pass

    def handle_error(self, request: object, client_address: object) -> None:
        log.error("connection failed unexpectedly")  # never the traceback: it may quote a request


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    server_version = f"memories-daemon/{VERSION}"
    server: DaemonServer

    def setup(self) -> None:
        limits = self.server.limits
        super().setup()
        self.connection.settimeout(limits.idle_seconds)  # also how long an answer line may wait to be read
        self.rfile.close()  # read through the idle and whole-request limits instead
        self.rfile = io.BufferedReader(DeadlineSocketIO(self.connection, limits.idle_seconds, limits.request_seconds))
        self.reserved = 0
        try:
            self.peer: Peer | None = peer_of(self.connection)
        except OSError:
            self.peer = None

    def finish(self) -> None:
        self.server.inflight.give_back(self.reserved)
        self.reserved = 0
        super().finish()

    # -- entry points ------------------------------------------------------------------------
    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self._serve(has_body=True)

    def do_GET(self) -> None:  # noqa: N802
        self._serve(has_body=False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        pass  # the service logs verbs, timings and codes itself; never request lines

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (bad request line, unknown HTTP verb) as JSON errors."""
        self._refuse(code, DaemonProtocolError(f"The daemon could not read this request ({code} {message or ''})."
                                               .replace(" )", ")")))

    # -- one request -------------------------------------------------------------------------
    def _serve(self, has_body: bool) -> None:
        if self.peer is None or self.peer.uid != os.getuid():
            who = "an unknown user" if self.peer is None else f"uid {self.peer.uid}"
            log.warning("refused a connection from %s", who)
            self._refuse(HTTPStatus.FORBIDDEN, PeerRefusedError(
                msg("This Memories daemon serves only its own user (uid {uid}); the connection came from "
                    "{who}.", uid=os.getuid(), who=who)))
            return
        name = self._method_name()
        if name is None:
            return
        args = self._arguments() if has_body else {}
        if args is None or not self._same_build(name):  # read first: closing on unread bytes resets the answer
            return
        stream = self.server.dispatcher.stream(name)
        if stream is not None:
            self._stream(name, stream, args)
            return
        method = self.server.dispatcher.method(name)
        if method is None:
            self._refuse(HTTPStatus.NOT_FOUND, DaemonProtocolError(
                msg("The daemon has no method {name!r}; is it older than this client? Restart it with "
                    "`memories daemon stop`.", name=name), code=ErrorCode.DAEMON_UNKNOWN_METHOD))
            return
        self._run(name, method, args)

    def _method_name(self) -> str | None:
        path = self.path.split("?", 1)[0]
        if not path.startswith(PREFIX):
            version = path.split("/")[1] if path.count("/") >= 2 else path
            self._refuse(HTTPStatus.BAD_REQUEST, DaemonProtocolError(
                msg("This daemon speaks protocol version {version}; the request asked for {asked!r}. Run "
                    "`memories daemon stop` and let the current version start again.",
                    version=VERSION, asked=version[:20]), code=ErrorCode.DAEMON_VERSION))
            return None
        name = path[len(PREFIX):]
        if not name or len(name) > 64 or not name.replace("_", "").replace(".", "").isalnum():
            self._refuse(HTTPStatus.NOT_FOUND, DaemonProtocolError(
                msg("The request names no valid method."), code=ErrorCode.DAEMON_UNKNOWN_METHOD))
            return None
        return name

    def _same_build(self, name: str) -> bool:
        """A client that names another version or API is refused before anything runs, with what
        it needs to restart this daemon or to say why it cannot; one that names none
        (a raw request) is served."""
        ours = self.server.dispatcher.build()
        version, api = self.headers.get(VERSION_HEADER), self.headers.get(API_HEADER)
        if name in RESTARTABLE or not ours or version is None or api is None:
            return True
        if (version, api) == (ours.get("version"), ours.get("api")):
            return True
        error = mismatch(str(ours.get("version")), Build(version, api))
        self._refuse(HTTPStatus.CONFLICT, error, extra={"daemon": ours})
        return False

    def _arguments(self) -> dict[str, Any] | None:
        length_text = self.headers.get("Content-Length")
        try:
            length = int(length_text) if length_text is not None else -1
        except ValueError:
            length = -1
        if length < 0:
            self._refuse(HTTPStatus.LENGTH_REQUIRED, DaemonProtocolError(
                msg("The request has no valid Content-Length.")))
            return None
        if length > MAX_REQUEST_BYTES:
            self._refuse(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, DaemonProtocolError(
                msg("The request is {length:,} bytes; the daemon takes at most {limit:,}.",
                    length=length, limit=MAX_REQUEST_BYTES),
                code=ErrorCode.DAEMON_REQUEST_TOO_LARGE))
            return None
        if not self.server.inflight.take(length):
            self._refuse(HTTPStatus.SERVICE_UNAVAILABLE, DaemonProtocolError(
                msg("The daemon is busy receiving other large requests; this one ({length:,} bytes) would take it "
                    "past {limit:,} bytes at once. Try again in a moment.",
                    length=length, limit=self.server.inflight.cap), code=ErrorCode.DAEMON_BUSY))
            return None
        self.reserved = length  # given back when the connection ends: the parsed arguments live that long
        try:
            raw = self.rfile.read(length)
        except TimeoutError:
            log.warning("dropped a request that did not arrive in time")
            self.close_connection = True
            return None
        finally:
            self.connection.settimeout(self.server.limits.idle_seconds)  # the reader shortened it toward its deadline
        try:
            args = json.loads(raw.decode("utf-8")) if raw else {}
        except (UnicodeDecodeError, ValueError, RecursionError):
            args = None
        if not isinstance(args, dict):
            self._refuse(HTTPStatus.BAD_REQUEST, DaemonProtocolError(
                msg("The request body must be one JSON object of arguments.")))
            return None
        return args

    def _run(self, name: str, method: Method, args: dict[str, Any]) -> None:
        assert self.peer is not None
        write_lock = threading.Lock()
        call = Call(peer=self.peer)

        def send(line: bytes) -> None:
            with write_lock:
                try:
                    self.wfile.write(line)
                    self.wfile.flush()
                except OSError:  # the client left: stop the work
                    call.cancel.set()

        call.send_progress = lambda data: send(encode_line({"progress": data}))
        self._answer_headers()
        stop_watch = _watch_hangup(self.connection, call.cancel)
        stop_beat = _heartbeat(lambda: send(encode_line(HEARTBEAT)), _beat_seconds(self.headers.get(SILENCE_HEADER)))
        kind = self.headers.get(CLIENT_HEADER, "")
        token = self.server.clients.begin(self.peer, kind, name)
        started = time.monotonic()
        try:
            line, outcome = answer_line(self.server.dispatcher, name, method, args, call)
        finally:
            stop_beat()
            stop_watch()
            self.server.clients.end(self.peer, kind, token)
        log.info("%s %s %.3fs", name, outcome, time.monotonic() - started)
        send(line)

    def _answer_headers(self) -> None:
        """The 200 headers every answer starts with: its build, for the client's check."""
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", CONTENT_TYPE)
        ours = self.server.dispatcher.build()
        if ours:
            self.send_header(VERSION_HEADER, str(ours["version"]))
            self.send_header(API_HEADER, str(ours["api"]))
        self.end_headers()
        self.wfile.flush()

    def _stream(self, name: str, stream: StreamMethod, args: dict[str, Any]) -> None:
        """Hand the connection to `stream` without a time limit (a session idles as long as its
        client); an error before it is ready is the usual error line."""
        assert self.peer is not None
        self._answer_headers()
        self.close_connection = True
        self.connection.settimeout(None)
        reader = self.connection.makefile("rb")
        writer = self.connection.makefile("wb", buffering=0)
        kind = self.headers.get(CLIENT_HEADER, "")
        token = self.server.clients.begin(self.peer, kind, name)
        started = time.monotonic()
        outcome = "ok"
        try:
            self.server.dispatcher.before_call()
            stream(args, Call(peer=self.peer), reader, writer)
        except MemoriesError as exc:
            outcome = exc.code
            with contextlib.suppress(OSError):
                writer.write(error_line(exc))
        except Exception as exc:  # noqa: BLE001 - never crash on a session; never echo its text
            outcome = "internal_error"
            log.error("%s failed: unexpected %s", name, type(exc).__name__)
        finally:
            self.server.clients.end(self.peer, kind, token)
            reader.close()
            writer.close()
        log.info("%s %s %.3fs", name, outcome, time.monotonic() - started)

    def _refuse(self, status: int, error: MemoriesError, extra: dict[str, Any] | None = None) -> None:
        body = error_line(error) if extra is None else encode_line({**error.to_wire(), **extra})
        if getattr(self, "request_version", "") in ("", "HTTP/0.9"):
            self.request_version = self.protocol_version  # answer garbage with a real status line too
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True


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


def _beat_seconds(limit_text: str | None) -> float:
    """A quarter of the client's silence limit (within bounds): three beats may be late before
    the client gives up on a daemon that is alive."""
    try:
        limit = float(limit_text or "nan")
    except ValueError:
        limit = float("nan")
    if not limit > 0:  # absent, not a number: an old client's default
        return MAX_HEARTBEAT_SECONDS
    return min(MAX_HEARTBEAT_SECONDS, max(MIN_HEARTBEAT_SECONDS, limit / 4))


def _heartbeat(beat: Callable[[], None], every: float) -> Callable[[], None]:
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


def _watch_hangup(conn: socket.socket, cancel: threading.Event) -> Callable[[], None]:
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
