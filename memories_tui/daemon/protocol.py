"""The resident engine's wire: HTTP/1.0 with JSON bodies over the home's Unix socket.

A request is `POST /v<VERSION>/<method>` with one JSON object of arguments (at most
MAX_REQUEST_BYTES, `Content-Length` required). The answer is newline-delimited JSON: zero or
more `{"progress": {...}}` lines while long work runs, `{"alive": true}` heartbeats (at a
quarter of the silence limit the client names in `X-Memories-Silence-Limit`, so it can tell a
busy daemon from a stopped one), then exactly one `{"result": ...}` or `{"error": {...}}` line. Errors carry the engine's stable code, its sentence and the exit
status, so a front end fails exactly as it would have in-process. Anything the daemon refuses
before it reads the arguments (other user, unknown version, oversized or malformed request)
is a plain JSON `{"error": ...}` body with an HTTP error status.
"""

from __future__ import annotations

import json
import re

from ..errors import ErrorCode, MemoriesError, error_from_json

VERSION = 1
PREFIX = f"/v{VERSION}/"
# Arguments: a record body (at most 16 MiB of text, more once JSON-escaped) is the largest;
# files named on the command line never travel, the daemon reads them where the caller is.
MAX_REQUEST_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 256 * 1024 * 1024  # one answer line (a 16 MiB record body with escapes, a big batch)
CONTENT_TYPE = "application/x-ndjson"
CLIENT_HEADER = "X-Memories-Client"  # cli | mcp | tui: a label for `daemon status`, never a permission
SILENCE_HEADER = "X-Memories-Silence-Limit"  # seconds the client waits without a line before it gives up
HEARTBEAT = {"alive": True}
# The daemon's own methods: the lock state, its life and the MCP sessions. The engine's
# operations it serves are named `vault.<operation>`, from the engine's table (engine/api.py).
HELLO, STATUS, UNLOCK, LOCK, VAULT_STATE, STOP = "hello", "status", "unlock", "lock", "vault_state", "stop"
MCP_OPEN, MCP_CALL, MCP_CLOSE = "mcp_open", "mcp_call", "mcp_close"
LOOKUPS = frozenset({VAULT_STATE, STATUS, LOCK, STOP, MCP_OPEN, MCP_CLOSE})  # answered from memory


class DaemonProtocolError(MemoriesError):
    """A request the daemon will not read: malformed, oversized, unknown version or method."""

    code = ErrorCode.DAEMON_BAD_REQUEST


class DaemonConnectionError(MemoriesError):
    """The daemon went away or answered something that is not the protocol."""

    code = ErrorCode.DAEMON_UNREACHABLE


class PeerRefusedError(MemoriesError):
    """The other end of the socket is another user."""

    code = ErrorCode.DAEMON_PEER_REFUSED


_SURROGATE = re.compile("[\ud800-\udfff]")


def encode_json(obj: object) -> bytes:
    """`obj` as UTF-8 JSON. A path that is not UTF-8 holds lone surrogates (Python's stand-ins
    for its bytes), which UTF-8 cannot carry: they travel as `\\udcXX` escapes, and `json.loads`
    on the other side gives the same path back."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def encode_line(obj: object) -> bytes:
    return encode_json(obj) + b"\n"


def error_line(exc: MemoriesError) -> bytes:
    """An error as it travels: the code and sentence `--json` shows, and its class, so the
    client raises the very error (exit status included) the engine raised in-process."""
    return encode_line(exc.to_wire())


def read_error(message: object) -> MemoriesError:
    """The error an `{"error": …}` line or body describes (errors.error_from_json)."""
    return error_from_json(message)
