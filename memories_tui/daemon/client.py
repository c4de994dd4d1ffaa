"""Talking to the home's resident engine: the stdlib HTTP client over its Unix socket.

`connect(home)` answers None quickly when no daemon runs (no socket, or a stale one left by
a killed daemon: nothing accepts on it), so every front end can ask on every call and fall
back to working in-process. The client checks the server's peer credentials too: a
passphrase is never handed to a socket another user serves.

A daemon that is stopped (SIGSTOP, a debugger) or wedged must not hang its clients: the kernel
still accepts connections for it, so every call has a silence limit, the time the client waits
without a line from the daemon (progress, a heartbeat or the answer) before it gives up with a
clear error. The daemon sends a heartbeat line at a quarter of the limit the client names in
its request while a call runs, so long work (ingest, index, a generated answer) is never cut
while the daemon lives; only a daemon that says nothing at all for the whole limit is given up.

(`http.client` rather than httpx: it loads in ~10 ms against httpx's 0.2-0.7 s on these
machines, which would be most of a daemon-served CLI call.)
"""

from __future__ import annotations

import errno
import json
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import CancelledError, ErrorCode, MemoriesError
from ..frontend.daemon_socket import API_HEADER, VERSION_HEADER
from ..i18n import msg
from .connection import CONNECT_TIMEOUT_SECONDS, connection_class, hang_up_on, http_errors, retry_window
from .handshake import (
    MISMATCH_CODE,
    RESTARTABLE,
    DaemonBuild,
    DaemonVersionError,
    mismatch,
    older_daemon,
    this_build,
)
from .paths import DaemonPaths, SocketAddress, unix_sockets_supported
from .peer import peer_of
from .protocol import (
    CLIENT_HEADER,
    HELLO,
    LOOKUPS,
    MAX_LINE_BYTES,
    PREFIX,
    SILENCE_HEADER,
    STOP,
    DaemonConnectionError,
    PeerRefusedError,
    encode_json,
    read_error,
)

if TYPE_CHECKING:  # http.client (and ssl, email, which it loads) only once a socket is there to talk to
    import http.client

NO_DAEMON_ENV = "MEMORIES_NO_DAEMON"
SILENCE_ENV = "MEMORIES_DAEMON_TIMEOUT"  # seconds: one silence limit for every call (tests, slow machines)
LOOKUP_SILENCE_SECONDS = 10.0  # lock state, status, sessions: answered from memory
WORK_SILENCE_SECONDS = 30.0  # vault work, unlock (the KDF runs there): heartbeats carry it past this
ProgressFn = Callable[[dict[str, Any]], None]
T = TypeVar("T")
# Errors a front end reports instead of falling back to working in-process: the daemon is there
# but stuck, or of another build (waiting or working around it could not help).
REPORTED = frozenset({ErrorCode.DAEMON_NOT_ANSWERING, MISMATCH_CODE, ErrorCode.DAEMON_INCOMPATIBLE})
# What reading an answer of another shape raises (a field missing, renamed or of another type).
MISREAD = (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError)


def daemon_disabled() -> bool:
    """`MEMORIES_NO_DAEMON=1` (or any value but 0/empty) keeps every front end in-process."""
    return os.environ.get(NO_DAEMON_ENV, "").strip() not in ("", "0")


def silence_limit(method: str) -> float:
    """How long a call of `method` waits without hearing from the daemon: $MEMORIES_DAEMON_TIMEOUT
    when it is a positive number of seconds, else by the kind of call."""
    try:
        chosen = float(os.environ.get(SILENCE_ENV, "") or 0)
    except ValueError:
        chosen = 0.0
    if chosen > 0 and chosen != float("inf"):
        return chosen
    return LOOKUP_SILENCE_SECONDS if method in LOOKUPS or _quick(method) else WORK_SILENCE_SECONDS


def _quick(method: str) -> bool:
    """A quick lookup of the engine's table (answered from memory)."""
    if not method.startswith("vault."):
        return False
    from ..engine import quick_verbs

    return method in quick_verbs()


class DaemonClient:
    """One home's daemon. Each `call` is one request on its own connection."""

    def __init__(self, home: Path, timeout: float | None = None, *, kind: str = "cli") -> None:
        self.home = home
        self.kind = kind  # cli | mcp | tui: how `daemon status` labels this process
        self.paths = DaemonPaths(home)
        self.timeout = timeout  # the silence limit of every call; None: by the kind of call
        self.hello: dict[str, Any] = {}
        self.pid: int | None = None  # the serving process, as the kernel names it

    def call(self, method: str, args: dict[str, Any] | None = None, *, progress: ProgressFn | None = None,
             cancel: threading.Event | None = None) -> Any:
        """Run `method` in the daemon and return its result; its errors are raised as the same
        MemoriesError (code, sentence, exit status) the engine raises in-process. A daemon of
        another build that holds no unlocked vault is restarted as this build first. Setting
        `cancel` closes the sending side: the daemon stops the work as it does for ctrl+c, and
        its own sentence for the stop (a CancelledError) comes back on the side still open."""
        try:
            return self._call_once(method, args, progress, cancel)
        except DaemonVersionError as exc:
            if not self._restart_for(exc.daemon):
                raise
        return self._call_once(method, args, progress, cancel)

    def _restart_for(self, daemon: DaemonBuild | None) -> bool:
        """Stop a detached daemon of another build that holds no unlocked vault and start this
        build with the daemon's config; whether it did (else the caller says to restart it)."""
        if daemon is None or daemon.kind != "daemon" or daemon.unlocked or daemon.config is None:
            return False
        from .spawn import DaemonRunningError, start_detached, stop_daemon

        try:
            pid = int(self._call_once(STOP, {"if_none_unlocked": True}, None, None)["pid"])
        except (MemoriesError, *MISREAD):
            return False  # a vault was unlocked meanwhile, or it is not ours to stop
        stop_daemon(self.paths, pid)
        try:
            start_detached(self.home, Path(daemon.config))
        except DaemonRunningError:
            pass  # another client restarted it first
        return True

    def _call_once(self, method: str, args: dict[str, Any] | None, progress: ProgressFn | None,
                   cancel: threading.Event | None) -> Any:
        build = this_build()
        body = encode_json(args or {})
        limit = self.timeout or silence_limit(method)
        conn = self._open(limit)
        sock = conn.sock  # http.client lets go of it once the answer starts: the cancel watcher keeps it
        try:
            try:
                conn.request("POST", PREFIX + method, body=body,
                             headers={"Content-Type": "application/json", "Content-Length": str(len(body)),
                                      CLIENT_HEADER: self.kind, SILENCE_HEADER: f"{limit:g}",
                                      VERSION_HEADER: build.version, API_HEADER: build.api})
                response = conn.getresponse()
            except TimeoutError:
                raise self._silent(method, limit) from None
            except http_errors():
                raise self._gone(method) from None
            if response.status != 200:
                raise _error_from(response)
            if response.getheader(VERSION_HEADER) is None and method not in RESTARTABLE:  # from before the handshake
                raise older_daemon(build)
            stop_watch = hang_up_on(cancel, sock)
            try:
                return self._read_stream(response, method, progress, limit)
            except DaemonConnectionError:
                if cancel is not None and cancel.is_set():
                    raise CancelledError(msg("Cancelled.")) from None
                raise
            finally:
                stop_watch()
        except KeyboardInterrupt:
            conn.close()  # the daemon sees the hang-up and cancels the work
            raise CancelledError(msg("Interrupted.")) from None
        finally:
            conn.close()

    def open_stream(self, method: str, args: dict[str, Any]) -> tuple[Any, socket.socket, http.client.HTTPResponse]:
        """Start a method that keeps its connection (server.StreamMethod): its opening result, the
        socket to write to and the reader of what follows, both the caller's to close. A daemon of
        another build is restarted first, as for `call`."""
        try:
            return self._open_stream_once(method, args)
        except DaemonVersionError as exc:
            if not self._restart_for(exc.daemon):
                raise
        return self._open_stream_once(method, args)

    def _open_stream_once(self, method: str, args: dict[str, Any]
                          ) -> tuple[Any, socket.socket, http.client.HTTPResponse]:
        import http.client

        build = this_build()
        body = encode_json(args)
        limit = self.timeout or silence_limit(method)
        conn = self._open(limit)
        sock, conn.sock = conn.sock, None  # ours from here on, beyond one request and answer
        assert sock is not None
        head = (f"POST {PREFIX}{method} HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n{CLIENT_HEADER}: {self.kind}\r\n{SILENCE_HEADER}: {limit:g}\r\n"
                f"{VERSION_HEADER}: {build.version}\r\n{API_HEADER}: {build.api}\r\n\r\n")
        try:
            try:
                sock.sendall(head.encode("latin-1") + body)
                response = http.client.HTTPResponse(sock, method="POST")
                response.begin()
            except TimeoutError:
                raise self._silent(method, limit) from None
            except http_errors():
                raise self._gone(method) from None
            if response.status != 200:
                raise _error_from(response)
            if response.getheader(VERSION_HEADER) is None:
                raise older_daemon(build)
            opened = self._read_stream(response, method, None, limit)
        except BaseException:
            sock.close()
            raise
        sock.settimeout(None)  # a session idles as long as its client does
        return opened, sock, response  # (the response owns the reader: it closes it when collected)

    def call_as(self, method: str, args: dict[str, Any] | None, read: Callable[[Any], T]) -> T:
        """`call`, then `read` its result; an answer `read` cannot take (a daemon of another
        version) is `daemon_incompatible`, which says to restart it, never an internal error."""
        return understood(method, read, self.call(method, args))

    def call_quietly(self, method: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """`call` for work nobody waits on (a status line, a lock mirrored in the background):
        the result if it is an object, else {} — also when the daemon is gone."""
        try:
            result = self.call(method, args)
        except MemoriesError:
            return {}
        return result if isinstance(result, dict) else {}

    def _open(self, limit: float | None = None) -> http.client.HTTPConnection:
        """A connection to the daemon. A full listen queue (a burst of calls) answers EAGAIN at once
        to a connect with a timeout, and a refused connect can be a daemon between two lives: both
        are tried again, briefly, within the connect time and the call's silence limit."""
        started = time.monotonic()
        wait = min(CONNECT_TIMEOUT_SECONDS, limit or CONNECT_TIMEOUT_SECONDS)
        delay = 0.002
        with SocketAddress(self.paths.socket) as address:
            while True:
                conn = connection_class()(address.path, limit)
                try:
                    conn.connect()
                    break
                except OSError as exc:
                    conn.close()
                    spent = time.monotonic() - started
                    if spent + delay < retry_window(exc, self.paths, wait):
                        time.sleep(delay)
                        delay = min(delay * 2, 0.05)
                        continue
                    if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                        raise self._shut_out(wait) from None
                    raise DaemonConnectionError(msg("Cannot reach the daemon at {socket}: {problem}.",
                                                    socket=self.paths.socket, problem=exc.strerror or exc)
                                                ) from None
        assert conn.sock is not None
        try:
            peer = peer_of(conn.sock)
        except OSError:
            conn.close()
            raise PeerRefusedError(msg("Cannot tell who serves the daemon socket; not using it.")) from None
        if peer.uid != os.getuid():
            conn.close()
            raise PeerRefusedError(msg("The daemon socket {socket} is served by uid {uid}, not by you; not "
                                       "using it.", socket=self.paths.socket, uid=peer.uid))
        self.pid = peer.pid
        return conn

    def _read_stream(self, response: http.client.HTTPResponse, method: str, progress: ProgressFn | None,
                     limit: float) -> Any:
        while True:
            try:
                line = response.readline(MAX_LINE_BYTES + 1)
            except TimeoutError:
                raise self._silent(method, limit) from None
            except http_errors():
                raise self._gone(method) from None
            if not line:
                raise self._gone(method)
            if len(line) > MAX_LINE_BYTES:
                raise DaemonConnectionError(msg("The daemon's answer to {method} is over {limit:,} "
                                                "bytes.", method=method, limit=MAX_LINE_BYTES))
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                raise DaemonConnectionError(msg("The daemon answered {method} with something that is not JSON.",
                                                method=method)) from None
            if not isinstance(message, dict):
                raise DaemonConnectionError(msg("The daemon answered {method} with something that is not the "
                                                "protocol.", method=method))
            if "alive" in message:  # a heartbeat: the daemon is still at it
                continue
            if "progress" in message:
                if progress is not None and isinstance(message["progress"], dict):
                    progress(message["progress"])
                continue
            if "error" in message:
                raise read_error(message)
            if "result" in message:
                return message["result"]
            raise DaemonConnectionError(msg("The daemon answered {method} with something that is not the "
                                            "protocol.", method=method))

    def _silent(self, method: str, limit: float) -> DaemonConnectionError:
        """The daemon said nothing, not even a heartbeat, for the whole silence limit."""
        pid = str(self.pid) if self.pid else "PID"  # the kernel names it on Linux and macOS
        return DaemonConnectionError(
            msg("The Memories daemon (pid {pid}) has not answered {method} for {seconds:g} s: it is stopped or "
                "stuck, so this command gave up. Resume it (`kill -CONT {pid}`) or end it (`kill -9 {pid}`: work it "
                "had not finished is not written, ingest is all or nothing), or run the command with --no-daemon.",
                pid=pid, method=method, seconds=limit),
            code=ErrorCode.DAEMON_NOT_ANSWERING)

    def _shut_out(self, seconds: float) -> DaemonConnectionError:
        """The daemon lives (its socket listens, or its process runs) but let nobody in."""
        return DaemonConnectionError(
            msg("The Memories daemon serving {home} did not let this command in for {seconds:g} s: it is overloaded, "
                "stopped or stuck. Run the command again; if this persists, end the daemon (`memories daemon stop`) "
                "or run the command with --no-daemon.", home=self.home, seconds=seconds),
            code=ErrorCode.DAEMON_NOT_ANSWERING)

    def _gone(self, method: str) -> DaemonConnectionError:
        return DaemonConnectionError(
            msg("The Memories daemon stopped while running {method}; nothing it had not finished was written "
                "(ingest is all or nothing). Run the command again.", method=method), code=ErrorCode.DAEMON_GONE)


def _error_from(response: http.client.HTTPResponse) -> MemoriesError:
    unreadable: tuple[type[BaseException], ...] = (ValueError, RecursionError, *http_errors())
    try:
        message = json.loads(response.read(1024 * 1024))
        if response.status == 409 and isinstance(message, dict) and isinstance(message.get("error"), dict) \
                and message["error"].get("code") == MISMATCH_CODE:
            daemon = DaemonBuild.from_wire(message.get("daemon"))
            if daemon is not None:
                error = mismatch(daemon.version, this_build())
                error.daemon = daemon
                return error
        return read_error(message)
    except unreadable:
        return DaemonConnectionError(msg("The daemon refused the request (HTTP {status}).", status=response.status))


def understood(method: str, read: Callable[[Any], T], data: Any) -> T:
    """`read(data)` for an answer to `method`, or `daemon_incompatible` when it is of a shape
    this version does not know."""
    try:
        return read(data)
    except MISREAD:
        raise incompatible(method) from None


def incompatible(method: str) -> DaemonConnectionError:
    return DaemonConnectionError(
        msg("The Memories daemon answered {method} with something this version of Memories does not understand: "
            "a daemon of another version is probably still running. Run `memories daemon restart` (it locks every "
            "vault), then run the command again.", method=method),
        code=ErrorCode.DAEMON_INCOMPATIBLE)


def connect(home: Path, *, kind: str = "cli") -> DaemonClient | None:
    """The home's daemon if one accepts connections, else None (also when disabled or
    unsupported). A socket file nobody accepts on (left by a killed daemon) counts as none;
    a daemon that lives but lets nobody in is `daemon_not_answering`, never "no daemon"
    (the caller would ask for a passphrase or call the vault locked)."""
    if daemon_disabled() or not unix_sockets_supported():
        return None
    client = DaemonClient(home, kind=kind)
    if not client.paths.socket.exists():
        return None
    try:
        client._open(silence_limit(HELLO)).close()
    except PeerRefusedError:
        raise
    except MemoriesError as exc:
        if exc.code == ErrorCode.DAEMON_NOT_ANSWERING:
            raise
        return None
    return client
