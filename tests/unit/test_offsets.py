"""Byte and character offsets of mixed-script text (text/offsets.py): every conversion in one place."""

from __future__ import annotations

from memories_tui.text.offsets import (
    byte_span_to_chars,
    byte_to_char,
    ceil_char_boundary,
    char_span_to_bytes,
    char_to_byte,
    floor_char_boundary,
    utf8_len,
)

TEXT = "a酸種b😀c"  # 1, 3, 3, 1, 4, 1 bytes


def test_characters_and_bytes_convert_both_ways() -> None:
    assert utf8_len(TEXT) == 13
    assert [char_to_byte(TEXT, i) for i in range(len(TEXT) + 1)] == [0, 1, 4, 7, 8, 12, 13]
    assert [byte_to_char(TEXT, b) for b in (0, 1, 4, 7, 8, 12, 13)] == list(range(len(TEXT) + 1))
    assert char_span_to_bytes(TEXT, 1, 3, base=100) == (101, 107)
    assert byte_span_to_chars(TEXT, 1, 7) == (1, 3)


def test_offsets_inside_a_character_or_outside_the_text_are_clamped() -> None:
    assert byte_to_char(TEXT, 2) == 1 and byte_to_char(TEXT, 10) == 4  # inside 酸 / 😀: its start
    assert byte_to_char(TEXT, -5) == 0 and byte_to_char(TEXT, 99) == len(TEXT)
    data = TEXT.encode("utf-8")
    assert [floor_char_boundary(data, b) for b in (2, 3, 9, 11)] == [1, 1, 8, 8]
    assert [ceil_char_boundary(data, b) for b in (2, 3, 9, 11)] == [4, 4, 12, 12]
    assert floor_char_boundary(data, 13) == 13 and ceil_char_boundary(data, 0) == 0
