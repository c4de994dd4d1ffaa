"""Markdown markers out of a one-line preview (a search snippet): `**bread**` reads as `bread`.

Only the markers go (emphasis, code ticks, heading and quote marks, list bullets, the
brackets and address of a link); every other character stays, so the positions of matched
terms can be carried over (`position_map`). The text itself is never parsed as markup.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_LINK = re.compile(r"(!?\[)[^\]\n]*(\]\([^)\n]*\))")
_MARKERS = re.compile(
    r"(?P<line>^[ \t]{0,3}(?:\#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+))"  # heading, quote, bullet
    r"|(?P<pair>\*\*|__|~~|`+)"  # strong, strike, code
    r"|(?P<em>(?<![\w*\\])[*_](?=[^\s*_])|(?<=[^\s*_\\])[*_](?![\w*]))",  # *em* / _em_ edges
    re.M,
)


def strip_markers(text: str) -> tuple[str, list[int]]:
    """The text without Markdown markers, and for every original position (0..len) the
    position it has in the result (a removed character maps to where its neighbour went)."""
    removed = bytearray(len(text))
    for m in _LINK.finditer(text):
        for group in (1, 2):
            removed[m.start(group):m.end(group)] = b"\x01" * (m.end(group) - m.start(group))
    for m in _MARKERS.finditer(text):
        if not any(removed[m.start():m.end()]):
            removed[m.start():m.end()] = b"\x01" * (m.end() - m.start())
    kept: list[str] = []
    where = [0] * (len(text) + 1)
    for n, char in enumerate(text):
        where[n] = len(kept)
        if not removed[n]:
            kept.append(char)
    where[len(text)] = len(kept)
    return "".join(kept), where


def position_map(spans: Sequence[tuple[int, int]], where: Sequence[int]) -> list[tuple[int, int]]:
    """`spans` of the original text as spans of the stripped one (empty ones dropped)."""
    out = []
    for start, end in spans:
        a, b = where[max(0, min(start, len(where) - 1))], where[max(0, min(end, len(where) - 1))]
        if b > a:
            out.append((a, b))
    return out
