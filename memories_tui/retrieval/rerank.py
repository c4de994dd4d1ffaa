"""The default lightweight rerank (R-HYB-2), applied to vector and hybrid results.

A documented heuristic, not a learned cross-encoder: the top RERANK_WINDOW candidates keep
their rank-based base score 1/(60 + rank) and get a multiplicative boost for lexical
coverage (share of the query's non-stopword terms present in title + text) and for
containing the exact query phrase; candidates below the window keep their order.
Weights were chosen on SciFact with the MiniLM model (bench/bench_search.py): coverage
0.1 and phrase 0.3 lift vector-only ranking and leave hybrid at least as good as fusion alone.
"""

from __future__ import annotations

from collections.abc import Callable

from ..text.segment import fold

COVERAGE_WEIGHT = 0.1
PHRASE_WEIGHT = 0.3
RANK_K = 60
RERANK_WINDOW = 50


def heuristic_rerank(query: str, terms: list[str], ranked: list[tuple[int, float]],
                     folded_text: Callable[[int], str], *,
                     folded: str | None = None) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """Return the new ranking and the rerank score of each candidate in the window.
    `folded`: the query already folded with whitespace collapsed (a parsed Query has it)."""
    phrase = " ".join(fold(query).split()) if folded is None else folded
    scores: dict[int, float] = {}
    for rank, (key, _) in enumerate(ranked[:RERANK_WINDOW], 1):
        haystack = folded_text(key)
        coverage = sum(1 for t in terms if t in haystack) / len(terms) if terms else 0.0
        has_phrase = 1.0 if len(phrase) > 1 and phrase in haystack else 0.0
        scores[key] = (1.0 / (RANK_K + rank)) * (1 + COVERAGE_WEIGHT * coverage + PHRASE_WEIGHT * has_phrase)
    head = sorted(((k, scores[k]) for k, _ in ranked[:RERANK_WINDOW]), key=lambda item: -item[1])
    return head + ranked[RERANK_WINDOW:], scores
