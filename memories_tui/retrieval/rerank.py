"""The default lightweight rerank, applied to vector and hybrid results.

A documented heuristic, not a learned cross-encoder: the top RERANK_WINDOW candidates get a
multiplicative boost for lexical coverage (share of the query's terms present in title +
text) and for containing the exact query phrase; candidates below the window keep their
order. The base is the rank, 1/(60 + rank), for vector results and RRF; a score-fused
hybrid list (fusion.py) boosts its fused score instead, so the fusion's margins survive
(bench/bench_fusion.py: rank-based boosts cost that fusion up to 0.004 nDCG@10).
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
                     folded: str | None = None,
                     keep_scores: bool = False) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """Return the new ranking and the rerank score of each candidate in the window.
    `folded`: the query already folded with whitespace collapsed (a parsed Query has it).
    `keep_scores`: boost each candidate's own score rather than its rank."""
    phrase = " ".join(fold(query).split()) if folded is None else folded
    scores: dict[int, float] = {}
    for rank, (key, score) in enumerate(ranked[:RERANK_WINDOW], 1):
        haystack = folded_text(key)
        coverage = sum(1 for t in terms if t in haystack) / len(terms) if terms else 0.0
        has_phrase = 1.0 if len(phrase) > 1 and phrase in haystack else 0.0
        base = score if keep_scores else 1.0 / (RANK_K + rank)
        scores[key] = base * (1 + COVERAGE_WEIGHT * coverage + PHRASE_WEIGHT * has_phrase)
    head = sorted(((k, scores[k]) for k, _ in ranked[:RERANK_WINDOW]), key=lambda item: -item[1])
    return head + ranked[RERANK_WINDOW:], scores
