"""Turn engine text into Rich `Text` objects: never markup, offsets in characters.

Document text can contain `[S1]`, `[b]x[/b]` or `[@click=…]`; all of it must show literally,
so nothing here ever parses markup.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from rich.cells import cell_len
from rich.text import Text

from ..engine import byte_span_to_chars
from ..i18n import _
from .markdown_plain import position_map, strip_markers


def match_spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """The engine's `match_spans` (where hit text is highlighted), loaded on first use: the
    first frame needs no segmenter code."""
    from ..engine import match_spans as spans

    return spans(text, terms)

HIGHLIGHT = "bold black on yellow"
CHUNK = "on #2f4f6f"


byte_range_to_chars = byte_span_to_chars  # where a hit or quote's byte range falls, in characters


def _latin(char: str) -> bool:
    """A letter or digit of a script that separates words with spaces (below the CJK blocks)."""
    return char.isalnum() and ord(char) < 0x2E80


def snippet_text(text: str, terms: Sequence[str] = (), cells: int = 150, *,
                 spans: Sequence[tuple[int, int]] | None = None) -> Text:
    """A window of `text` around its first matched term, at most `cells` terminal cells wide
    (CJK characters take two), terms highlighted. A search hit brings its `spans`.

    Markdown markers are left out (`**bread**` reads `bread`), the spans moved with the text;
    whitespace is replaced one character for one."""
    if spans is None:
        spans = match_spans(text, terms)
    text, where = strip_markers(text)
    spans = position_map(spans, where)
    start = 0
    if spans:
        # back up about a third of the budget before the first match
        start, budget = spans[0][0], cells // 3
        while start > 0 and budget > 0:
            budget -= cell_len(text[start - 1])
            start -= 1
    if spans and 0 < start < spans[0][0] and _latin(text[start - 1]) and _latin(text[start]):
        # not in the middle of a word ("…ess s and search"): from the next word on
        while start < spans[0][0] and _latin(text[start - 1]):
            start += 1
    while start < len(text) and text[start].isspace() and (not spans or start < spans[0][0]):
        start += 1
    end, used = start, 0
    while end < len(text) and used + cell_len(text[end]) <= cells:
        used += cell_len(text[end])
        end += 1
    flat = "".join(" " if ch.isspace() else ch for ch in text[start:end])
    out = Text("…" if start > 0 else "")
    offset = len(out)
    out.append(flat)
    for s, e in spans:
        if e <= start or s >= end:
            continue
        out.stylize(HIGHLIGHT, offset + max(s, start) - start, offset + min(e, end) - start)
    if end < len(text):
        out.append("…")
    return out


def human_eta(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    seconds = int(round(seconds))
    if seconds >= 3600:
        return _("{hours}h{minutes:02d}m").format(hours=seconds // 3600, minutes=seconds % 3600 // 60)
    if seconds >= 60:
        return _("{minutes}m{seconds:02d}s").format(minutes=seconds // 60, seconds=seconds % 60)
    return _("{seconds}s").format(seconds=seconds)


def plain(value: object, style: str = "") -> Text:
    """Any value as literal text (for DataTable cells, which parse plain `str` as markup)."""
    return Text("" if value is None else str(value), style=style)


def utc_stamp(stamp: str | None) -> str | None:
    """An ISO UTC stamp (`2026-12-07T11:34:01Z`) as the tables show times: `2026-12-07 11:34:01 UTC`."""
    if not stamp:
        return None
    return stamp.replace("T", " ").removesuffix("Z") + (" UTC" if stamp.endswith("Z") else "")


def tilde(path: str | os.PathLike[str]) -> str:
    """A path as people see it: the home folder written `~` (`~/notes`, not `/home/ana/notes`)."""
    text = str(path)
    home = str(Path.home())
    if home not in ("", "/") and (text == home or text.startswith(home.rstrip(os.sep) + os.sep)):
        return "~" + text[len(home.rstrip(os.sep)):]
    return text


def tilde_paths(message: str) -> str:
    """A message with every path under the home folder written from `~` (engine messages name
    files by their whole path)."""
    home = str(Path.home()).rstrip(os.sep)
    if home in ("", "/"):
        return message
    return re.sub(re.escape(home) + r"(?=[/\s:;,)]|$)", "~", message)
