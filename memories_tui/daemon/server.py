"""The socket side of the resident engine: stdlib `http.server` on a Unix stream socket, one
thread per connection (the engine is synchronous and thread-safe).

Per connection the kernel's peer credentials are read and another user is refused before any
argument is looked at. Per request: the version in the path, a `Content-Length` within the
cap, a JSON object body and a known method, else a clear JSON error; then the method runs
with a cancel event that is set as soon as the client hangs up (ctrl+c in the CLI), and its
progress is streamed as it happens. Nothing a client sends can end the server: every failure
becomes an error line, and an unexpected exception is logged by type only (its text may
quote vault content) and answered as `internal_error`. One call's own parts (its answer line,
heartbeats, the hang-up watch) are in calls.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import socketserver
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any

from ..errors import ErrorCode, MemoriesError
from ..frontend.daemon_socket import API_HEADER, VERSION_HEADER
from ..i18n import msg
from .calls import Call, Dispatcher, Method, StreamMethod, answer_line, beat_seconds, heartbeat, watch_hangup
from .handshake import RESTARTABLE, Build, mismatch
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
        stop_watch = watch_hangup(self.connection, call.cancel)
        stop_beat = heartbeat(lambda: send(encode_line(HEARTBEAT)), beat_seconds(self.headers.get(SILENCE_HEADER)))
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
            outcome = ErrorCode.INTERNAL_ERROR
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
