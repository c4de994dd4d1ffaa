"""What the TUI does with an exception nobody planned for: one line for the user, and a log
entry in the home that says only what failed and where.

Textual's own report is a Rich traceback with every frame's local variables, printed to the
terminal when the app stops: a passphrase, a decrypted note or a query would stay in the
scroll-back. Here nothing of the exception but its type and its frames (file, line, function)
is kept: its message can quote vault text, so it is never shown or written either.
"""

from __future__ import annotations

import os
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text

from ..errors import MemoriesError
from ..i18n import _
from .text import tilde

LOG_FOLDER = "logs"
LOG_NAME = "tui-errors.log"
LOG_MAX_BYTES = 256 * 1024  # a bigger log starts again: it only has to hold the latest reports
LIBRARIES = ("textual/", "rich/", "asyncio/", "concurrent/", "threading.py")  # not where a bug of ours is


@dataclass(frozen=True)
class Crash:
    """An unexpected exception reduced to what is safe to show: type and frames, no text."""

    kind: str
    frames: tuple[str, ...]  # "memories_tui/tui/widgets/results.py:145 in mark_shared", outermost first

    @property
    def place(self) -> str:
        """The innermost frame outside the libraries (else the innermost), as `file.py:LINE`."""
        ours = [f for f in self.frames if not f.startswith(LIBRARIES)] or list(self.frames)
        if not ours:
            return ""
        where = ours[-1].split(" in ", 1)[0]
        return where.rsplit("/", 1)[-1]

    def summary(self) -> str:
        if self.place:
            return _("unexpected {kind} in {place}").format(kind=self.kind, place=self.place)
        return _("unexpected {kind}").format(kind=self.kind)


def _short(filename: str) -> str:
    """A frame's file relative to its package root (no home folder, no user name)."""
    parts = Path(filename).parts
    for anchor in ("memories_tui", *(lib.rstrip("/") for lib in LIBRARIES)):
        if anchor in parts:
            index = len(parts) - 1 - parts[::-1].index(anchor)
            return "/".join(parts[index:])
    return Path(filename).name


def describe(exc: BaseException) -> Crash:
    frames = tuple(f"{_short(f.filename)}:{f.lineno} in {f.name}" for f in traceback.extract_tb(exc.__traceback__))
    return Crash(type(exc).__name__, frames)


def write_log(crash: Crash, home: Path) -> Path | None:
    """Append one report to `<home>/logs/tui-errors.log` (folder 0700, file 0600); None when
    it cannot be written (a read-only home must not turn one error into two)."""
    folder = home / LOG_FOLDER
    path = folder / LOG_NAME
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    entry = "".join([f"{stamp} {crash.kind}\n", *(f"  {frame}\n" for frame in crash.frames), "\n"])
    try:
        if not folder.is_dir():
            folder.mkdir(mode=0o700)  # inside the home, which exists once the app runs
            os.chmod(folder, 0o700)  # mkdir's mode is filtered by the umask
        if path.is_file() and path.stat().st_size > LOG_MAX_BYTES:
            path.unlink()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(entry)
    except Exception:  # noqa: BLE001 - the report itself must never fail
        return None
    return path


def report(exc: BaseException, home: Path | None, *, stopped: bool = True) -> str:
    """Log `exc` (when the home is known) and return the one line to show the user
    (`stopped`: the app ends)."""
    crash = describe(exc)
    path = write_log(crash, home) if home is not None else None
    where = _("; details (no note text) in {path}").format(path=tilde(path)) if path is not None else ""
    if stopped:
        return _("Memories stopped after an {error}{where}. This is a bug: please report it.").format(
            error=crash.summary(), where=where)
    return _("An {error}{where}. This is a bug: please report it.").format(error=crash.summary(), where=where)


def as_error(exc: Exception, home: Path | None) -> MemoriesError:
    """`exc` as the error a dialog shows inline: itself when it is one of ours, else a bug's
    one line (logged as `report` does), so a dialog never stays on "Checking…" after a bug."""
    if isinstance(exc, MemoriesError):
        return exc
    return MemoriesError(report(exc, home, stopped=False))


class StoppedError(Exception):
    """Stands in for an unexpected exception when the app stops: Textual prints what an
    exception's `__rich__` renders instead of a traceback, so only the one line is shown."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line

    def __rich__(self) -> Text:
        return Text(self.line, style="bold red")
