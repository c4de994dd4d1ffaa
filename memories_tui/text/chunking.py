"""Split a document body into overlapping chunks with exact UTF-8 byte offsets (what citations point at).

Boundaries are chosen greedily from the start of the body, each one looking only at a
window of at most ``max_chars`` characters (plus one character of look-ahead), so an edit
changes only the chunks whose window contains it: chunk hashes before the edit are stable.

A cut prefers, from the back of the window towards its middle: a paragraph break (blank
line), a line break, a sentence end (Chinese 。！？；, English . ! ? followed by space or
the end), whitespace, and finally a hard cut. No cut ever falls between ``\\r`` and ``\\n``,
before a combining mark / variation selector / emoji modifier, or after a zero-width joiner.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from .offsets import utf8_len

DEFAULT_MAX_CHARS = 768
DEFAULT_OVERLAP = 128


@dataclass(frozen=True)
class Chunk:
    index: int
    text: str
    char_start: int
    char_end: int
    byte_start: int
    byte_end: int
    chunk_hash: str


_PARAGRAPH = re.compile(r"\n[^\S\n]*\n|\r[^\S\r\n]*\r(?!\n)")
_NEWLINE = re.compile(r"\r\n|\n|\r(?!\n)")
_CLOSERS = re.escape("\"'”’」』）)]】》〉")
_SENTENCE = re.compile(rf"[。！？；][{_CLOSERS}]*|[.!?][{_CLOSERS}]*(?=\s|$)|…+[{_CLOSERS}]*")
_SPACE = re.compile(r"\s+")

# Candidate kinds, best first.
_LEVELS = (_PARAGRAPH, _NEWLINE, _SENTENCE, _SPACE)


def _is_extender(ch: str) -> bool:
    """True for characters that must stay attached to the character before them."""
    cp = ord(ch)
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Mc"):
        return True
    return (
        cp == 0x200D  # zero-width joiner (the next char also stays attached, see _safe_cut)
        or 0xFE00 <= cp <= 0xFE0F  # variation selectors
        or 0xE0100 <= cp <= 0xE01EF
        or 0x1F3FB <= cp <= 0x1F3FF  # emoji skin-tone modifiers
        or 0xE0020 <= cp <= 0xE007F  # tag characters (flag sequences)
    )


def _cut_ok(body: str, pos: int) -> bool:
    """May the body be split just before index ``pos``?"""
    if pos <= 0 or pos >= len(body):
        return True
    prev, nxt = body[pos - 1], body[pos]
    if prev == "\r" and nxt == "\n":
        return False
    if prev == "\u200d":
        return False
    if 0xD800 <= ord(prev) <= 0xDBFF and 0xDC00 <= ord(nxt) <= 0xDFFF:
        return False
    return not _is_extender(nxt)


def _safe_back(body: str, pos: int, floor: int) -> int:
    """Move ``pos`` back (not below ``floor + 1``) until a split there is allowed."""
    p = pos
    while p > floor + 1 and not _cut_ok(body, p):
        p -= 1
    if _cut_ok(body, p):
        return p
    # A run of extenders longer than the window: move forward instead.
    p = pos
    while p < len(body) and not _cut_ok(body, p):
        p += 1
    return p


def _find_end(body: str, start: int, max_chars: int) -> int:
    """End (exclusive) of the chunk that starts at ``start``; the rest must be longer than max_chars."""
    limit = start + max_chars
    floor = start + max(1, max_chars // 2)
    # One character of look-ahead so "3.5" or "\r\n" at the window's edge is seen whole.
    window = body[floor : limit + 1]
    for pattern in _LEVELS:
        best = -1
        for m in pattern.finditer(window):
            cut = floor + m.end()
            if pattern is _SPACE and m.start() > 0:
                cut = floor + m.start()
            if cut <= limit and _cut_ok(body, cut):
                best = max(best, cut)
        if best > start:
            return best
    return _safe_back(body, limit, start)


def _find_next_start(body: str, start: int, end: int, overlap: int) -> int:
    """Start of the next chunk: about ``overlap`` characters before ``end``, at a boundary."""
    if overlap <= 0:
        nxt = end
    else:
        target = max(start + 1, end - overlap)
        lo = max(start + 1, target - overlap // 2)
        hi = max(lo, min(end, target + overlap // 2))
        window = body[lo : hi + 1]
        nxt = -1
        for pattern in _LEVELS:
            candidates = [lo + m.end() for m in pattern.finditer(window) if _cut_ok(body, lo + m.end())]
            candidates = [c for c in candidates if start < c < end and c <= hi]
            if candidates:
                nxt = min(candidates, key=lambda c: (abs(c - target), c))
                break
        if nxt < 0:
            nxt = _safe_back(body, target, start)
            if nxt <= start:
                nxt = end
    # Do not begin a chunk with whitespace.
    while nxt < end and body[nxt].isspace():
        nxt += 1
    return nxt


def _make_chunk(index: int, text: str, char_start: int, char_end: int, byte_start: int) -> Chunk:
    raw = text.encode("utf-8")
    return Chunk(
        index=index,
        text=text,
        char_start=char_start,
        char_end=char_end,
        byte_start=byte_start,
        byte_end=byte_start + len(raw),
        chunk_hash=hashlib.sha256(raw).hexdigest(),
    )


def chunk_text(body: str, max_chars: int = DEFAULT_MAX_CHARS, overlap: int = DEFAULT_OVERLAP) -> list[Chunk]:
    """Split ``body`` into chunks of at most ``max_chars`` characters with about ``overlap`` overlap.

    Whitespace-only bodies give no chunks; leading whitespace of a chunk is skipped.
    """
    if max_chars < 16:
        raise ValueError("max_chars must be at least 16")
    if overlap < 0 or overlap > max_chars // 4:
        raise ValueError("overlap must be between 0 and max_chars / 4")
    n = len(body)
    chunks: list[Chunk] = []
    start = 0
    while start < n and body[start].isspace():
        start += 1
    # Running UTF-8 offset: byte offset of char index ``cursor``.
    cursor, cursor_byte = 0, 0
    while start < n:
        end = n if n - start <= max_chars else _find_end(body, start, max_chars)
        if start > cursor:
            cursor_byte += utf8_len(body[cursor:start])
        else:
            cursor_byte -= utf8_len(body[start:cursor])
        cursor = start
        text = body[start:end]
        if text.strip():
            chunks.append(_make_chunk(len(chunks), text, start, end, cursor_byte))
        if end >= n:
            break
        start = _find_next_start(body, start, end, overlap)
        if start >= end:
            start = end
            while start < n and body[start].isspace():
                start += 1
    return chunks
