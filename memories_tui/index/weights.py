"""How the lexical index weighs a row: its columns, its title, its pieces and characters.

Kept apart from the index (lexical.py) because these are the ranking's tuning, each measured
on its own set, while the index is storage and query plumbing.
"""

from __future__ import annotations

from collections import Counter

from memories_tui.text import segment

WEIGHTS = (5.0, 1.0, 2.0)  # title, body, meta
# A title without CJK weighs 2, not 5: English titles are often sentence-long, Chinese ones
# the names questions ask about (each measured on its language's set: docs/performance.md).
LATIN_TITLE_WEIGHT = 2.0
# Half a word: the weight of the pieces field's BM25 beside the words'. On zh-cmrc2018
# questions 0.25-0.5 score alike (above pieces off), and partial-word queries need them to
# count (bench/bench_lexical.py, zh-cmrc2018-partial-words); 1.0 would rank a piece like a word.
PIECE_WEIGHT = 0.5
# The characters field's weight, for a query's lone CJK characters (bench_lexical.py's
# single-character rows: 0.25-1.0 score alike; questions and partial words never use it).
CHAR_WEIGHT = 0.5


def without_pieces(text: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """A row's words and phrase stream with empty pieces and characters fields (pieces off)."""
    tokens, phrase = segment.index_and_phrase_tokens(text)
    return tokens, phrase, [], []


def row_frequencies(title: list[str], body: list[str], meta: list[str], w_title: float = WEIGHTS[0]) -> Counter[str]:
    """Column-weighted term frequencies (WEIGHTS, ``w_title`` for the title) of one row."""
    _, w_body, w_meta = WEIGHTS
    freqs: Counter[str] = Counter(body)
    if w_body != 1.0:
        for t in freqs:
            freqs[t] *= w_body  # type: ignore[assignment]
    for t in title:
        freqs[t] += w_title  # type: ignore[assignment]
    for t in meta:
        freqs[t] += w_meta  # type: ignore[assignment]
    return freqs


def title_weight(tokens: list[str]) -> float:
    """WEIGHTS' title weight for a title holding a CJK word, else LATIN_TITLE_WEIGHT."""
    return WEIGHTS[0] if any(map(segment.is_cjk_word, tokens)) else LATIN_TITLE_WEIGHT
