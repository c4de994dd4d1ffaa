"""Where query terms occur in original text, for snippets and highlighting.

Terms are folded (script-folded, case-folded, possibly stemmed); we search the folded text
and map positions back, which is exact when folding kept the length (it does for case and
for Traditional↔Simplified character conversion), and falls back to no highlight otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..text.segment import fold


def term_spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """Character spans of every term occurrence in `text`, merged and sorted."""
    folded = fold(text)
    if len(folded) != len(text):
        return []
    spans = []
    for term in terms:
        if not term:
            continue
        start = folded.find(term)
        while start != -1:
            spans.append((start, start + len(term)))
            start = folded.find(term, start + len(term))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def snippet(text: str, terms: Sequence[str], width: int = 160) -> str:
    """A one-line window of `text` around its first matched term."""
    flat = " ".join(text.split())
    spans = term_spans(flat, terms)
    start = max(0, spans[0][0] - width // 3) if spans else 0
    while spans and 0 < start < spans[0][0] and _word_char(flat[start - 1]):
        start += 1  # not in the middle of a word ("…ess s and search"): from the next word on
    while spans and start < spans[0][0] and flat[start] == " ":
        start += 1
    out = flat[start:start + width]
    return ("…" if start > 0 else "") + out + ("…" if start + width < len(flat) else "")


def _word_char(ch: str) -> bool:
    """A letter or digit of a space-separated script (below the CJK blocks)."""
    return ch.isalnum() and ord(ch) < 0x2E80


def match_spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """`term_spans` without matches that start inside a word ("at" in "water", "to" in "Kyoto").

    Engine terms are stems or CJK n-grams: they match as word prefixes ("appl" in "apples") in
    space-separated text and anywhere in CJK text, which has no word boundaries."""
    return [(start, end) for start, end in term_spans(text, terms)
            if start == 0 or not (_word_char(text[start]) and _word_char(text[start - 1]))]
