"""Hybrid fusion of the BM25 and vector candidate lists.

Default, ``[rag] fusion = "score"``: per query, each list's scores are min-max normalised
to 0..1 and fused as ``BM25_WEIGHT * bm25 + (1 - BM25_WEIGHT) * cosine`` (a candidate
missing from a list gets that list's 0). Unlike rank fusion it keeps each list's margins:
a BM25 hit far above the rest keeps its lead when the embedding model reads the query
worse than BM25 does, and a confident vector hit still rises. ``fusion = "rrf"`` keeps the
seed's reciprocal rank fusion, score(d) = Σ 1 / (60 + rank_i(d)).

Evidence (docs/performance.md, "Hybrid quality"; ``bench/bench_fusion.py``): with a real multilingual
model (e5-small) the score rule is above both single lists on SciFact, zh-cmrc2018 and its
Traditional copy where RRF fell below BM25 on the Chinese sets, and with a model that cannot
read the text at all it stays within 0.005 of BM25 where RRF lost 0.26. 0.6 is the smallest
BM25 weight that held the latter.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

BM25_WEIGHT = 0.6


def reciprocal_rank_fusion(rankings: Sequence[Sequence[K]], k: int = 60) -> list[tuple[K, float]]:
    scores: dict[K, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, 1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    # Ties keep first-seen order (Python's sort is stable), so output is deterministic.
    return sorted(scores.items(), key=lambda item: -item[1])


def min_max(ranked: Sequence[tuple[K, float]]) -> dict[K, float]:
    """Scores of one best-first list mapped to 0..1 (all 1.0 when they are all equal)."""
    if not ranked:
        return {}
    scores = [score for _, score in ranked]
    hi, lo = max(scores), min(scores)
    span = hi - lo
    return {key: (score - lo) / span if span > 0 else 1.0 for key, score in ranked}


def score_fusion(lexical: Sequence[tuple[K, float]], vector: Sequence[tuple[K, float]],
                 bm25_weight: float = BM25_WEIGHT) -> list[tuple[K, float]]:
    """Convex combination of the per-query min-max normalised BM25 and cosine scores."""
    lex, vec = min_max(lexical), min_max(vector)
    keys = dict.fromkeys([key for key, _ in lexical] + [key for key, _ in vector])
    fused = [(key, bm25_weight * lex.get(key, 0.0) + (1.0 - bm25_weight) * vec.get(key, 0.0)) for key in keys]
    # Ties keep first-seen order (BM25's first), so output is deterministic.
    return sorted(fused, key=lambda item: -item[1])
