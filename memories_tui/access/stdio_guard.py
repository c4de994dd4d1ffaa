"""The stdio transport of `memories mcp`, with a guard in front of the SDK's reader.

The SDK's stdio reader drops a line it cannot parse without answering, so a client that sent
`garbage`, `[1,2,3]`, a request without a method, a request whose id is a float, or bytes
that are not UTF-8 waited for its own timeout; and it echoed any `id`, however big. Here every
line is read with a size cap and checked first: one that is not a JSON-RPC message gets the
JSON-RPC answer itself (-32700 parse error, -32600 invalid request, with the request's id
when it is a usable one, else null) and never reaches the SDK; the rest go on unchanged.

As the SDK's own transport does, fd 0 and 1 point at the null device and stderr while
serving (a handler or a child process can neither read protocol input nor write into the
protocol), the protocol runs on private duplicates, and both are restored afterwards.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

MAX_LINE_BYTES = 4 * 1024 * 1024  # one JSON-RPC message; our tools take queries of at most 1 KB
DRAIN_SECONDS = 10.0  # at the end of the input: how long answers to requests already read may take
MAX_ID_CHARS = 128
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
_READ = 64 * 1024


class FrameWriter:
    """Whole frames to the protocol output, one at a time (the SDK's replies and ours), and
    which requests read are still unanswered: the end of the input waits for their answers, as
    the SDK would otherwise cancel them unanswered (a client that writes its requests and then
    closes its side, as a shell pipe does, still reads the answers)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self._lock = threading.Lock()
        self._answered = threading.Condition()
        self._pending: set[str] = set()  # request ids, as JSON

    def write(self, text: str) -> int:
        data = text.encode("utf-8")
        try:
            with self._lock:
                self._raw.write(data)
                self._raw.flush()
        finally:
            self.answered(_response_id(text))
        return len(text)

    def expect(self, request_id: str | int) -> None:
        with self._answered:
            self._pending.add(json.dumps(request_id))

    def answered(self, key: str | None) -> None:
        if key is not None:
            with self._answered:
                self._pending.discard(key)
                self._answered.notify_all()

    def wait_answered(self, timeout: float = DRAIN_SECONDS) -> None:
        with self._answered:
            self._answered.wait_for(lambda: not self._pending, timeout)

    def flush(self) -> None:
        """Every write is already flushed whole."""

    def error(self, request_id: str | int | None, code: int, message: str) -> None:
        frame = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        self.write(json.dumps(frame, ensure_ascii=False, separators=(",", ":")) + "\n")


class GuardedInput:
    """`readline()` returns the next line that is a JSON-RPC message; it answers the others."""

    def __init__(self, raw: IO[bytes], out: FrameWriter, max_line: int = MAX_LINE_BYTES) -> None:
        self._raw = raw
        self._out = out
        self._max = max_line

    def readline(self) -> str:
        while True:
            line = self._next_line()
            if line is None:
                self._out.wait_answered()
                return ""
            if not line.strip():
                continue
            text = self._checked(line)
            if text is not None:
                return text + "\n"

    def _next_line(self) -> bytes | None:
        """One line without its newline; None at the end. An over-long line is drained
        (never held whole) and answered here, and the next line is read."""
        while True:
            line = self._raw.readline(self._max + 1)
            if not line:
                return None
            if line.endswith(b"\n") or len(line) <= self._max:
                return line.rstrip(b"\r\n")
            while line and not line.endswith(b"\n"):
                line = self._raw.readline(_READ)
            self._out.error(None, INVALID_REQUEST,
                            f"Invalid Request: a message is limited to {self._max // (1024 * 1024)} MiB.")

    def _checked(self, line: bytes) -> str | None:
        """The line's text if it is a message the SDK can take; else answer it and return None."""
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            self._out.error(None, PARSE_ERROR, "Parse error: the message is not valid UTF-8.")
            return None
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):
            self._out.error(None, PARSE_ERROR, "Parse error: the message is not valid JSON.")
            return None
        if not isinstance(message, dict):
            self._out.error(None, INVALID_REQUEST, "Invalid Request: expected one JSON-RPC object (no batches).")
            return None
        request_id, id_problem = _usable_id(message)
        problem = id_problem or _shape_problem(message) or _sdk_problem(text)
        if problem is not None:
            self._out.error(request_id, INVALID_REQUEST, f"Invalid Request: {problem}.")
            return None
        if "method" in message and request_id is not None:
            self._out.expect(request_id)
        elif message.get("method") == "notifications/cancelled":  # a cancelled request gets no answer
            params = message.get("params")
            self._out.answered(json.dumps(params.get("requestId")) if isinstance(params, dict) else None)
        return text


def _response_id(text: str) -> str | None:
    """The id (as JSON) of an answer frame; None for anything else."""
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or "method" in message or "id" not in message:
        return None
    return json.dumps(message["id"])


def _usable_id(message: dict[str, Any]) -> tuple[str | int | None, str | None]:
    """The id to answer with (None when absent or unusable) and what is wrong with it."""
    if "id" not in message:
        return None, None
    value = message["id"]
    if isinstance(value, str) and len(value) <= MAX_ID_CHARS:
        return value, None
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63:
        return value, None
    return None, f"id must be a string of at most {MAX_ID_CHARS} characters or an integer"


def _shape_problem(message: dict[str, Any]) -> str | None:
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "method" in message:
        return None if isinstance(message["method"], str) else "method must be a string"
    if "id" in message and ("result" in message or "error" in message):
        return None  # a response to a request of ours
    return "a request needs a method"


def _sdk_problem(text: str) -> str | None:
    import mcp_types
    from pydantic import ValidationError

    try:
        mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        return f"{exc.error_count()} field(s) do not fit a JSON-RPC message"
    return None


def _private_copy(fd: int) -> int:
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


@contextmanager
def claimed_stdio() -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    """Private binary streams for the protocol; fd 0 → null device and fd 1 → stderr meanwhile."""
    wire_in, wire_out = _private_copy(0), _private_copy(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    # closefd=False: a worker thread may still block reading the wire when serving ends
    reader = os.fdopen(wire_in, "rb", closefd=False)
    writer = os.fdopen(wire_out, "wb", buffering=0, closefd=False)
    try:
        yield reader, writer
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)


def run_stdio(server: MCPServer) -> None:
    """Serve `server` over the guarded stdio until the client closes its end."""
    with claimed_stdio() as (reader, writer):
        serve_frames(server, reader, writer)


def serve_frames(server: MCPServer, reader: IO[bytes], writer: IO[bytes]) -> None:
    """Serve `server` over guarded newline-delimited frames (stdio, or a relayed session's
    connection in the daemon) until `reader` ends."""
    import anyio
    from mcp.server.stdio import stdio_server

    async def serve() -> None:
        out = FrameWriter(writer)
        guarded = GuardedInput(reader, out)
        # both have the file methods the SDK's transport calls (readline; write, flush)
        stdin, stdout = anyio.wrap_file(cast("IO[str]", guarded)), anyio.wrap_file(cast("IO[str]", out))
        async with stdio_server(stdin=stdin, stdout=stdout) as (inbox, outbox):
            low = server._lowlevel_server  # run_stdio_async does the same with the unguarded transport
            await low.run(inbox, outbox, low.create_initialization_options())

    anyio.run(serve)
