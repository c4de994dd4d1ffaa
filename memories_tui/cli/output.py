"""What the CLI prints: every value cleaned of terminal escapes, tables that align CJK."""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Sequence
from typing import TextIO

Payload = dict[str, object]  # the one JSON object a verb prints with --json

_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f\x9b]")


_LINE_BREAKS = str.maketrans({"\n": "\\n", "\t": " ", "\u0085": "\\n", "\u2028": "\\n", "\u2029": "\\n"})


def clean(text: object, *, multiline: bool = False) -> str:
    """Strip terminal escape sequences and control characters from anything we print. Line
    breaks become a visible `\\n` unless `multiline` (a record body), so a file name or title
    cannot forge a table row or an output line."""
    out = _ESCAPES.sub("", str(text))
    return out if multiline else out.translate(_LINE_BREAKS)


def print_table(headers: list[str], rows: Sequence[Sequence[object]], bold: bool) -> None:
    cells = [[clean(c) for c in row] for row in rows]
    widths = [max([cell_width(h)] + [cell_width(r[i]) for r in cells]) for i, h in enumerate(headers)]
    head = "  ".join(pad_cells(h, w) for h, w in zip(headers, widths, strict=True)).rstrip()
    print(f"\x1b[1m{head}\x1b[0m" if bold else head)
    for row in cells:
        print("  ".join(pad_cells(c, w) for c, w in zip(row, widths, strict=True)).rstrip())


def cell_width(text: str) -> int:
    """Terminal cells `text` takes: CJK and full-width characters take two, combining marks none."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
               for ch in text)


def pad_cells(text: str, width: int, *, right: bool = False) -> str:
    """`text` padded with spaces to `width` cells (on the left when `right`), as ljust/rjust
    would if every character took one cell."""
    fill = " " * max(0, width - cell_width(text))
    return fill + text if right else text + fill


def cut_cells(text: str, width: int) -> str:
    """At most `width` cells of `text`, never half of a double-width character."""
    used = 0
    for i, ch in enumerate(text):
        used += cell_width(ch)
        if used > width:
            return text[:i]
    return text


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(text: str) -> str:
    """JSON as printed: a lone surrogate (a file name byte that is not UTF-8, as Python keeps
    it) is written as its `\\udcXX` escape, so the output stays UTF-8 and a reader that decodes
    it gets the same name back (`os.fsencode` turns it into the original bytes)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def printable(text: str) -> str:
    """Text for people: bytes of a name that is not UTF-8 appear as `\\xNN` (as `rag ingest`
    names such files), where printing the raw surrogate would fail on a UTF-8 terminal."""
    return _SURROGATE.sub(_byte_or_escape, text) if _SURROGATE.search(text) else text


def _byte_or_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


class OutputFailed(Exception):
    """Writing standard output failed (a full disk, an I/O error): not a bug of the verb, and
    nothing more can be said there. Deliberately not an OSError, so no verb's own file
    handling mistakes it for its own."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(cause.strerror or str(cause))
        self.cause = cause


class GuardedStdout:
    """sys.stdout for the length of one command: a failed write or flush becomes OutputFailed
    (a reader that left, BrokenPipeError, stays what it is); everything else is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(printable(text))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputFailed(exc) from exc

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputFailed(exc) from exc

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def say_on_stderr(text: str) -> None:
    """One line on stderr when there is a usable stderr (closed or full: nothing to be done)."""
    if sys.stderr is None:  # print(file=None) would write to stdout
        return
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
