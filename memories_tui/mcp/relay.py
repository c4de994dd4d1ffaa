"""`memories mcp` as a relay: with a daemon running, the MCP session lives in the daemon.

The process an AI client starts then imports neither the MCP SDK nor the engine (the SDK
import was most of its start-up): it opens one `mcp_relay` connection naming its vaults and
expiry, and copies newline-delimited frames between its stdio and the daemon, where
daemon/mcp_relay.py serves the very MCP server `memories mcp` runs in-process.

The relay reads only what it must to stay honest when the daemon goes away: the ids of
requests not yet answered (each gets an answer saying the daemon stopped, never silence),
and the client's `initialize`, replayed to the next daemon so the session goes on without
restarting the AI client. With no daemon at all, every request is answered at once: a tool
call with the locked-vault sentence (how to unlock), anything else with a JSON-RPC error.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..errors import ErrorCode
from .relay_socket import Opened, quick_open, this_version

if TYPE_CHECKING:
    from ..errors import MemoriesError

MAX_LINE_BYTES = 4 * 1024 * 1024  # as the server's guard (stdio_guard.py): one message
SERVER_ERROR = -32000  # JSON-RPC's range for a server's own errors
INVALID_REQUEST = -32600
STOP_SECONDS = 10.0  # after the client's end: how long answers already asked for may take
REPLAYED_ID = "memories-relay-initialize"


def quick_relay(home: str | None, config: str | None, vault_refs: list[str], expires_in: float | None) -> bool:
    """`relay` on the standard library alone (relay_socket.py); False when that cannot open
    the session, having done nothing."""
    found = quick_open(home, config, {"vaults": vault_refs, "expires_in": expires_in})
    if found is None:
        return False
    Relay(found[0], vault_refs, expires_in).run(found[1])
    return True


def relay(home: str | None, config: str | None, vault_refs: list[str], expires_in: float | None) -> bool:
    """Serve the client's stdio through the home's daemon until the client hangs up; False,
    having done nothing, when no daemon (or one without relayed sessions) serves the home.
    A daemon of another build is restarted, or its error raised, as for any call."""
    from ..engine import locate_home
    from ..errors import MemoriesError

    session = Relay(locate_home(home, config)[0], vault_refs, expires_in)
    try:
        opened = session.open()
    except MemoriesError as exc:
        if exc.code.startswith("daemon_"):  # older, busy, of another build…: the ordinary way says so per call
            return False
        raise
    if opened is None:
        return False
    session.run(opened)
    return True


class Relay:
    def __init__(self, home: Path, refs: list[str], expires_in: float | None) -> None:
        self.home = home
        self.refs = refs
        self.expires_in = expires_in
        self.grant: dict[str, Any] = {}  # vaults, started_at, expires_at: as the daemon first opened it
        self.wire: socket.socket | None = None
        self.pending: dict[str, str] = {}  # request id (as JSON) -> its method
        self.replay: list[bytes] = []  # the client's initialize and initialized, for a new daemon
        self.lock = threading.Lock()  # pending, wire, stdout
        self.reader_done = threading.Event()
        self.recorded: threading.Thread | None = None
        self.unreachable: MemoriesError | None = None  # why the last reopen failed, if not "no daemon"

    # -- the daemon's side ---------------------------------------------------------------------
    def open(self) -> Opened | None:
        """Open the session through the daemon client (again after a restart: same grant times)."""
        from ..daemon import connect

        client = connect(self.home, kind="mcp")
        if client is None:
            return None
        args: dict[str, Any] = {"vaults": self.refs, "expires_in": self.expires_in, "version": this_version()}
        if self.grant:
            args.update(started_at=self.grant["started_at"], expires_at=self.grant["expires_at"])
        opened, wire, reader = client.open_stream("mcp_relay", args)
        return opened, wire, reader

    def attach(self, opened: Opened) -> None:
        """Relay through this connection from now on (replaying the client's initialize to a
        daemon that did not see it)."""
        grant, wire, reader = opened
        if not self.grant:
            self.grant = dict(grant)
        with self.lock:
            self.wire = wire
        self.reader_done.clear()
        threading.Thread(target=self._from_daemon, args=(wire, reader, bool(self.replay)), daemon=True,
                         name="memories-relay").start()
        if self.replay:
            first, *rest = self.replay
            hidden = {**json.loads(first), "id": REPLAYED_ID}
            for frame in (json.dumps(hidden).encode() + b"\n", *rest):
                wire.sendall(frame)

    def _record(self) -> None:
        from ..frontend.grant_records import write_server_record

        write_server_record(self.home, os.getpid(), list(self.grant["vaults"]), float(self.grant["started_at"]),
                            self.grant["expires_at"])

    def _reopen(self) -> bool:
        """Open the session again; when that fails, `unreachable` keeps why (a daemon that lets
        nobody in, or of another build) unless no daemon runs at all (the vault is then locked)."""
        from ..errors import MemoriesError

        self.unreachable = None
        try:
            opened = self.open()
        except MemoriesError as exc:
            self.unreachable = exc
            return False
        if opened is None:
            return False
        self.attach(opened)
        return True

    def _from_daemon(self, wire: socket.socket, reader: IO[bytes], replayed: bool) -> None:
        """Daemon → client, until the daemon's end closes; then answer what it left unanswered."""
        try:
            while line := reader.readline():
                key = _response_id(line)
                if key is not None:
                    if replayed and key == json.dumps(REPLAYED_ID):
                        continue  # the answer to the replayed initialize: the client has its own
                    with self.lock:
                        self.pending.pop(key, None)
                self._write(line if line.endswith(b"\n") else line + b"\n")
                if self.recorded is None:  # for `mcp status`: once the client has its first answer
                    self.recorded = threading.Thread(target=self._record, name="memories-relay-record", daemon=True)
                    self.recorded.start()
        except (OSError, ValueError):
            pass
        finally:
            with self.lock:
                if self.wire is wire:
                    self.wire = None
                left, self.pending = self.pending, {}
            wire.close()
            for key, method in left.items():
                self._answer(json.loads(key), method, self._gone())
            self.reader_done.set()

    # -- the client's side ---------------------------------------------------------------------
    def run(self, opened: Opened) -> None:
        """Client → daemon until the client's end closes or SIGTERM; the record is removed
        and the process ends promptly either way."""
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        stdin = sys.stdin.buffer
        try:
            self.attach(opened)
            while (line := self._next_line(stdin)) is not None:
                self._forward(line)
            with self.lock:
                wire = self.wire
            if wire is not None:
                try:
                    wire.shutdown(socket.SHUT_WR)  # the daemon finishes what was asked, then hangs up
                except OSError:
                    pass
                self.reader_done.wait(STOP_SECONDS)
        except (SystemExit, KeyboardInterrupt, BrokenPipeError):
            pass
        finally:
            if self.recorded is not None:
                self.recorded.join(STOP_SECONDS)
                from ..frontend.grant_records import remove_server_record

                remove_server_record(self.home, os.getpid())
            sys.stderr.flush()
            os._exit(0)  # the reader thread may sit in a read of the daemon's socket: do not wait for it

    def _next_line(self, stdin: IO[bytes]) -> bytes | None:
        while True:
            line = stdin.readline(MAX_LINE_BYTES + 1)
            if not line:
                return None
            if line.endswith(b"\n") or len(line) <= MAX_LINE_BYTES:
                return line if line.endswith(b"\n") else line + b"\n"
            while line and not line.endswith(b"\n"):
                line = stdin.readline(64 * 1024)
            self._error(None, INVALID_REQUEST,
                        f"Invalid Request: a message is limited to {MAX_LINE_BYTES // (1024 * 1024)} MiB.")

    def _forward(self, line: bytes) -> None:
        request = _request(line)
        if request is not None and request[1] == "initialize":
            self.replay = [line]
        elif request is None and b"notifications/initialized" in line and len(self.replay) == 1:
            self.replay.append(line)
        reopened = False
        while True:
            with self.lock:
                wire = self.wire
                if wire is not None and request is not None:
                    self.pending[request[0]] = request[1]
            if wire is None:
                if reopened or not self._reopen():
                    break
                reopened = True  # a daemon again (started, or restarted): once per message
                continue
            try:
                wire.sendall(line)
                return
            except OSError:
                with self.lock:
                    if request is not None:
                        self.pending.pop(request[0], None)
                self.reader_done.wait(STOP_SECONDS)  # it answers what was pending, then lets go
                with self.lock:
                    if self.wire is wire:
                        self.wire = None
        if request is not None:
            self._answer(json.loads(request[0]), request[1], self.unreachable or self._locked(line))

    # -- answers of the relay's own ------------------------------------------------------------
    def _answer(self, request_id: Any, method: str, error: MemoriesError) -> None:
        """A tool call gets a tool error (what the server itself would say); `ping` is answered;
        any other request a JSON-RPC error carrying the same sentence."""
        text = f"{error.message} [{error.code}]"
        if method == "ping":
            self._frame({"jsonrpc": "2.0", "id": request_id, "result": {"resultType": "complete"}})
        elif method == "tools/call":
            self._frame({"jsonrpc": "2.0", "id": request_id,
                         "result": {"content": [{"type": "text", "text": text}], "isError": True,
                                    "resultType": "complete"}})  # required by newer protocol versions
        else:
            self._error(request_id, SERVER_ERROR, text)

    def _error(self, request_id: Any, code: int, message: str) -> None:
        self._frame({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    def _frame(self, frame: dict[str, Any]) -> None:
        self._write(json.dumps(frame, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")

    def _write(self, data: bytes) -> None:
        with self.lock:
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(1, view):]
                except BrokenPipeError:
                    return  # the client left; its end of stdin closes next

    def _locked(self, line: bytes) -> MemoriesError:
        from ..errors import LockedError
        from ..i18n import msg

        try:
            name = str(json.loads(line)["params"]["arguments"]["vault_id"])
        except (ValueError, KeyError, TypeError):
            name = ", ".join(self.refs)
        return LockedError(msg("Vault {name} is locked: no Memories daemon holds it unlocked. Unlock it with "
                               "`memories unlock {name}` (or in the Memories TUI), then call again.", name=name))

    def _gone(self) -> MemoriesError:
        from ..errors import MemoriesError
        from ..i18n import msg

        return MemoriesError(msg("The Memories daemon stopped while running {method}; nothing it had not finished "
                                 "was written (ingest is all or nothing). Run the command again.",
                                 method="tools/call"), code=ErrorCode.DAEMON_GONE)


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _request(line: bytes) -> tuple[str, str] | None:
    """(id as JSON, method) of a request; None for a notification, a response or garbage (the
    daemon's guard answers that)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or "id" not in message or not isinstance(message.get("method"), str):
        return None
    request_id = message["id"]
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        return None
    return json.dumps(request_id), message["method"]


def _response_id(line: bytes) -> str | None:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or "method" in message or "id" not in message:
        return None
    return json.dumps(message["id"])
