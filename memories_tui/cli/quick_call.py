"""A served verb's command line run by the daemon, before the parser is even built.

`memories rag search notes "words"` through a daemon spends most of its time building the CLI
(argparse, every verb's module, the catalogs) to send one request. With a daemon running, this
sends the command line itself, with what its output depends on (working folder, locale
variables, whether stdout is a terminal, NO_COLOR), and the daemon, which has the parser, the
engine and the printers loaded, runs it exactly as the ordinary way would (cli/served_run.py)
and answers the text for stdout and stderr and the exit status; this writes them out.

Only the standard library loads here. Anything short of an answer (no daemon, another user's
socket, a verb the daemon does not run this way, a vault it does not hold, another build, an
error of any kind before something was written) answers None, and the command goes the
ordinary way, which has the full handshake and says what is wrong as every command does.
"""

from __future__ import annotations

import _socket
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..frontend.daemon_socket import (
    API_HEADER,
    VERSION_HEADER,
    Lines,
    open_own,
    peer_pid,
    supported,
    this_api,
    this_version,
)

TYPE_CHECKING = False  # typing itself is a tenth of this path's imports
if TYPE_CHECKING:
    from typing import IO, Any

METHOD = "cli_run"
# The command words the daemon may run this way (it checks the parsed command again, against
# the engine's table: cli/served_run.py); anything else is not even asked.
COMMANDS = {("rag", "search"), ("rag", "ask"), ("rag", "status"), ("memory", "add"), ("memory", "read"),
            ("memory", "search"), ("memory", "list"), ("memory", "update"), ("memory", "delete")}
# Options whose work is the caller's own (help, files, stdin, tracebacks), or that turn the daemon off
REFUSED = ("-h", "--help", "--version", "--no-daemon", "--debug", "--file", "--queries", "--questions")
LOCALE = ("LC_ALL", "LC_MESSAGES", "LANG")  # what i18n.resolve_language reads
SILENCE_SECONDS = 30.0  # as the daemon client's for vault work: heartbeats come at a quarter of it
LOOKUP_SECONDS = 10.0  # as its wait for a lookup: a daemon that does not even start answering is stuck
QUICK_OFF_ENV = "MEMORIES_QUICK_OFF"  # any value but 0/empty: always the ordinary way (tests compare both)
MAX_LINE_BYTES = 256 * 1024 * 1024


def served(argv: Sequence[str]) -> int | None:
    """The exit status of the command as the daemon ran it, or None: run it the ordinary way."""
    words = list(argv[: argv.index("--") if "--" in argv else len(argv)])
    if not _servable(words):
        return None
    home = _home(words)
    if home is None or sys.stdout is None or sys.stderr is None or not _utf8(sys.stdout) or not _utf8(sys.stderr):
        return None
    request = {"argv": list(argv), "cwd": os.getcwd(), "home": str(home), "version": this_version(),
               "env": {k: os.environ[k] for k in LOCALE if k in os.environ},
               "color": _tty(sys.stdout) and "NO_COLOR" not in os.environ, "stderr_tty": _tty(sys.stderr)}
    call = _Call(home)
    try:
        return call.run(request)
    except KeyboardInterrupt:
        call.close()  # the daemon sees the hang-up and cancels the work
        return _say(argv, "interrupted")
    finally:
        call.close()


def _servable(words: list[str]) -> bool:
    if not supported():
        return False
    if any(word in REFUSED or word.partition("=")[0] in REFUSED for word in words):
        return False
    if any(os.environ.get(name, "").strip() not in ("", "0") for name in ("MEMORIES_NO_DAEMON", QUICK_OFF_ENV)):
        return False
    if "_ARGCOMPLETE" in os.environ:  # the shell's completion asking: the parser answers it
        return False
    return any(pair in COMMANDS for pair in zip(words, words[1:], strict=False))


def _home(words: list[str]) -> Path | None:
    """The home as home.resolve_home finds it: `--home` (the last), $MEMORIES_HOME, else the
    platform's data folder as platformdirs names it on Linux. The daemon checks it again."""
    given = None
    for i, word in enumerate(words):
        if word == "--home" and i + 1 < len(words):
            given = words[i + 1]
        elif word.startswith("--home="):
            given = word[len("--home="):]
    text = given or os.environ.get("MEMORIES_HOME")
    if text:
        path = Path(text).expanduser().resolve()
    else:
        data = os.environ.get("XDG_DATA_HOME", "")
        path = Path(data if data.strip() else os.path.expanduser("~/.local/share")) / "memories"
    return path if path.is_dir() else None


def _utf8(stream: IO[str]) -> bool:
    """The daemon's text is written as UTF-8; another encoding goes the ordinary way."""
    return str(getattr(stream, "encoding", "") or "").lower().replace("-", "").replace("_", "") == "utf8"


def _tty(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _silence(default: float) -> float:
    """$MEMORIES_DAEMON_TIMEOUT when it is a positive number of seconds (daemon/client.py), else `default`."""
    try:
        chosen = float(os.environ.get("MEMORIES_DAEMON_TIMEOUT", "") or 0)
    except ValueError:
        chosen = 0.0
    return chosen if 0 < chosen < float("inf") else default


class _Stuck(Exception):
    """The daemon took the request and said nothing at all: stopped (SIGSTOP) or wedged."""

    def __init__(self, pid: int, seconds: float) -> None:
        super().__init__(pid, seconds)
        self.pid, self.seconds = pid, seconds


class _Call:
    """One request and its answer lines; `written` once any of the answer reached the caller."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.sock: _socket.socket | None = None
        self.written = False

    def run(self, request: dict[str, Any]) -> int | None:
        try:
            reader = self._send(request)
            if reader is None:
                return None
            return self._answer(reader, request["argv"])
        except _Stuck as exc:  # what the ordinary way's first question would have met
            return _say(request["argv"], "stuck", stuck=exc, home=self.home)
        except (OSError, ValueError):
            if not self.written:
                return None
            return _say(request["argv"], "gone")

    def _send(self, request: dict[str, Any]) -> Lines | None:
        self.sock = sock = open_own(self.home)
        if sock is None:
            return None
        silence, lookup = _silence(SILENCE_SECONDS), _silence(LOOKUP_SECONDS)
        body = json.dumps(request, separators=(",", ":")).encode("utf-8")
        # The build headers: a daemon of another version or API refuses before it runs anything (the
        # ordinary way then says to restart it), as daemons since the handshake do
        sock.sendall(f"POST /v1/{METHOD} HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
                     f"\r\nX-Memories-Client: cli\r\nX-Memories-Silence-Limit: {silence:g}\r\n{VERSION_HEADER}: "
                     f"{this_version()}\r\n{API_HEADER}: {this_api()}\r\n\r\n".encode() + body)
        sock.settimeout(lookup)  # the daemon answers its headers before it runs anything
        reader = Lines(sock)
        try:
            status = reader.readline(1024)
        except TimeoutError:
            raise _Stuck(peer_pid(sock), lookup) from None
        sock.settimeout(silence)
        if status.split(b" ", 2)[1:2] != [b"200"]:
            return None
        built = False  # a daemon from before the version handshake names no version: not asked further
        while (line := reader.readline(8192)).strip():
            built = built or line.lower().startswith(VERSION_HEADER.lower().encode() + b":")
        return reader if built else None

    def _answer(self, reader: Lines, argv: list[str]) -> int | None:
        while True:
            line = reader.readline(MAX_LINE_BYTES)
            if not line.endswith(b"\n"):
                raise OSError("the answer ended early")
            message = json.loads(line)
            if "progress" in message:
                text = message["progress"].get("stderr")
                if isinstance(text, str) and text:
                    self.written = True
                    sys.stderr.write(text)
                    sys.stderr.flush()
                continue
            result = message.get("result")
            if isinstance(result, dict) and isinstance(result.get("status"), int):
                return self._write(result, argv)
            if "alive" not in message:  # an error, or the daemon passed the command back
                if not self.written:
                    return None
                raise OSError("no answer")

    def _write(self, result: dict[str, Any], argv: list[str]) -> int:
        status: int = result["status"]
        self.written = True
        try:
            sys.stdout.write(result.get("stdout", ""))
            sys.stdout.flush()
            sys.stderr.write(result.get("stderr", ""))
            sys.stderr.flush()
        except BrokenPipeError:
            from .run import _reader_left

            return _reader_left(status if "--json" in argv and status else 0)
        except OSError as exc:
            return _say(argv, "output", exc)
        return status

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.shutdown(_socket.SHUT_RDWR)
            except OSError:
                pass
            self.sock.close()
            self.sock = None


def _say(argv: Sequence[str], what: str, cause: OSError | None = None, stuck: _Stuck | None = None,
         home: Path | None = None) -> int:
    """What the ordinary way says when it is interrupted, finds the daemon stuck, loses it after
    part of the answer was written, or cannot write standard output (its modules load only here)."""
    from ..errors import CancelledError, ErrorCode
    from ..i18n import msg
    from .language import choose_language
    from .run import _fail, _options, _output_failed, _wants_json

    choose_language(list(argv))
    if what == "output":
        return _output_failed(msg("Could not write to standard output ({reason}); the output is lost. What the "
                                  "command changed, if anything, stays changed.",
                                  reason=(cause.strerror if cause else None) or str(cause)))
    if what == "interrupted":
        return _fail(CancelledError(msg("Interrupted.")), _wants_json(argv))
    if what == "stuck" and stuck is not None and home is not None:
        from ..daemon import VAULT_STATE, DaemonClient

        client = DaemonClient(home)
        client.pid = stuck.pid or None
        return _fail(client._silent(VAULT_STATE, stuck.seconds), _wants_json(argv))  # its very sentence
    from ..daemon.protocol import DaemonConnectionError

    command = " ".join(w for w in _options(argv) if not w.startswith("-"))[:60]
    return _fail(DaemonConnectionError(
        msg("The Memories daemon stopped while running {method}; nothing it had not finished was written "
            "(ingest is all or nothing). Run the command again.", method=command), code=ErrorCode.DAEMON_GONE),
        _wants_json(argv))
