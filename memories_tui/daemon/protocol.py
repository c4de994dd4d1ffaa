"""The resident engine's wire: HTTP/1.0 with JSON bodies over the home's Unix socket.

A request is `POST /v<VERSION>/<method>` with one JSON object of arguments (at most
MAX_REQUEST_BYTES, `Content-Length` required). The answer is newline-delimited JSON: zero or
more `{"progress": {...}}` lines while long work runs, then exactly one `{"result": ...}` or
`{"error": {...}}` line. Errors carry the engine's stable code, its sentence and the exit
status, so a front end fails exactly as it would have in-process. Anything the daemon refuses
before it reads the arguments (other user, unknown version, oversized or malformed request)
is a plain JSON `{"error": ...}` body with an HTTP error status.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import MemoriesError

VERSION = 1
PREFIX = f"/v{VERSION}/"
# Arguments: a record body (at most 16 MiB of text, more once JSON-escaped) is the largest;
# files named on the command line never travel, the daemon reads them where the caller is.
MAX_REQUEST_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 256 * 1024 * 1024  # one answer line (a 16 MiB record body with escapes, a big batch)
CONTENT_TYPE = "application/x-ndjson"


class DaemonProtocolError(MemoriesError):
    """A request the daemon will not read: malformed, oversized, unknown version or method."""

    code = "daemon_bad_request"


class DaemonConnectionError(MemoriesError):
    """The daemon went away or answered something that is not the protocol."""

    code = "daemon_unreachable"


class PeerRefusedError(MemoriesError):
    """The other end of the socket is another user."""

    code = "daemon_peer_refused"


def encode_line(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def error_body(exc: MemoriesError) -> dict[str, Any]:
    """An error as it travels: code and sentence as `--json` shows them, plus what rebuilds it."""
    out: dict[str, Any] = {"code": exc.code, "message": exc.message, "exit_code": exc.exit_code,
                           "type": type(exc).__name__}
    extra = getattr(exc, "extra", None)
    if isinstance(extra, dict):
        out["extra"] = extra
    return {"error": out}


def _error_classes() -> dict[str, type[MemoriesError]]:
    found: dict[str, type[MemoriesError]] = {}
    pending: list[type[MemoriesError]] = [MemoriesError]
    while pending:
        cls = pending.pop()
        found.setdefault(cls.__name__, cls)
        pending.extend(cls.__subclasses__())
    return found


def rebuild_error(body: object) -> MemoriesError:
    """The MemoriesError a front end would have caught in-process (same class where it is
    loaded here, same code, message and exit status either way)."""
    if not isinstance(body, dict):
        return DaemonConnectionError("The daemon answered with an error this client cannot read.")
    code, message = body.get("code"), body.get("message")
    if not isinstance(code, str) or not isinstance(message, str):
        return DaemonConnectionError("The daemon answered with an error this client cannot read.")
    cls = _error_classes().get(str(body.get("type")), MemoriesError)
    try:
        exc = cls(message, code=code)
    except TypeError:  # a subclass with another constructor
        exc = MemoriesError(message, code=code)
    exit_code = body.get("exit_code")
    if isinstance(exit_code, int) and exit_code != exc.exit_code:
        exc.exit_code = exit_code
    if isinstance(body.get("extra"), dict):
        exc.extra = body["extra"]  # type: ignore[attr-defined]
    return exc
