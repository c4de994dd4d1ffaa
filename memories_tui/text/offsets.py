"""Byte offsets and character offsets of text, converted in one place.

The vault, citations, quotes and the MCP tools locate text by UTF-8 byte offsets into a record's
body (stable whatever language reads them); Python strings, Rich and the TUI count characters.
Every conversion between the two goes through here.
"""

from __future__ import annotations


def utf8_len(text: str) -> int:
    """Bytes `text` takes in UTF-8."""
    return len(text.encode("utf-8"))


def char_to_byte(text: str, index: int) -> int:
    """The byte offset of character `index` of `text`."""
    return utf8_len(text[:index])


def char_span_to_bytes(text: str, start: int, end: int, base: int = 0) -> tuple[int, int]:
    """Characters `start:end` of `text` as byte offsets, counted from `base` (where `text` begins)."""
    byte_start = base + char_to_byte(text, start)
    return byte_start, byte_start + utf8_len(text[start:end])


def byte_to_char(text: str, offset: int) -> int:
    """The character at byte `offset` of `text` (clamped to the text; an offset inside a
    character counts as that character's start)."""
    data = text.encode("utf-8")
    offset = max(0, min(offset, len(data)))
    return len(data[:offset].decode("utf-8", errors="ignore"))


def byte_span_to_chars(text: str, byte_start: int, byte_end: int) -> tuple[int, int]:
    """Byte offsets within `text` as character offsets (for highlighting)."""
    return byte_to_char(text, byte_start), byte_to_char(text, byte_end)


def floor_char_boundary(data: bytes, offset: int) -> int:
    """Move `offset` back to the first byte of the UTF-8 character it falls in."""
    while 0 < offset < len(data) and data[offset] & 0xC0 == 0x80:
        offset -= 1
    return offset


def ceil_char_boundary(data: bytes, offset: int) -> int:
    """Move `offset` forward past the UTF-8 character it falls in."""
    while 0 < offset < len(data) and data[offset] & 0xC0 == 0x80:
        offset += 1
    return offset
