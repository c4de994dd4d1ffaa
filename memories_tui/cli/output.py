"""What the CLI prints: every value cleaned of terminal escapes, tables that align CJK."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

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
    widths = [max([len(h)] + [_width(r[i]) for r in cells]) for i, h in enumerate(headers)]
    head = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()
    print(f"\x1b[1m{head}\x1b[0m" if bold else head)
    for row in cells:
        print("  ".join(_pad(c, w) for c, w in zip(row, widths, strict=True)).rstrip())


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))
