"""The default lightweight rerank (R-HYB-2).

A documented heuristic, not a learned cross-encoder: each candidate keeps its rank-based
base score 1/(60 + rank) and gets a multiplicative boost for lexical coverage (share of
query terms present in title + text) and for containing the exact query phrase.
"""

from __future__ import annotations

from ..text.segment import fold

COVERAGE_WEIGHT = 0.3
PHRASE_WEIGHT = 0.3
RANK_K = 60


def heuristic_rerank(query: str, terms: list[str], ranked: list[tuple[int, float]],
                     texts: dict[int, tuple[str, str]]) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """Return the new ranking and each candidate's rerank score."""
    phrase = " ".join(fold(query).split())
    scores: dict[int, float] = {}
    for rank, (key, _) in enumerate(ranked, 1):
        title, text = texts[key]
        haystack = fold(f"{title}\n{text}")
        coverage = sum(1 for t in terms if t in haystack) / len(terms) if terms else 0.0
        has_phrase = 1.0 if len(phrase) > 1 and phrase in " ".join(haystack.split()) else 0.0
        scores[key] = (1.0 / (RANK_K + rank)) * (1 + COVERAGE_WEIGHT * coverage + PHRASE_WEIGHT * has_phrase)
    reranked = sorted(((k, scores[k]) for k, _ in ranked), key=lambda item: -item[1])
    return reranked, scores
