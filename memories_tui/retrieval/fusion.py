"""Hybrid fusion (R-HYB-1): how BM25 and vector candidate lists become one ranking.

``reciprocal_rank_fusion``: score(d) = Σ 1 / (k + rank_i(d)), ranks from 1 (kept for
reference and the benches).

``hybrid_fusion`` (the product's rule): a convex combination of per-query min-max
normalised scores, ``w · bm25' + (1 − w) · cosine'``, a candidate absent from one list
counting as that list's minimum. Why not RRF: RRF throws the scores away, so a BM25 hit
that stands far above the rest (the usual case when the query shares rare words with one
passage) can be pushed down by a weaker vector model's ordering; equal-weight RRF lost two
points of nDCG@10 to BM25 alone on a Traditional-Chinese set with e5-small. With scores,
each list speaks as confidently as its own score gaps, per query: a decisive BM25 top hit
stays on top, and where BM25 scores are flat the vector ranking decides. Figures:
``bench/bench_fusion.py`` (README, "Hybrid quality").
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

LEXICAL_WEIGHT = 0.5


def reciprocal_rank_fusion(rankings: Sequence[Sequence[K]], k: int = 60) -> list[tuple[K, float]]:
    scores: dict[K, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, 1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    # Ties keep first-seen order (Python's sort is stable), so output is deterministic.
    return sorted(scores.items(), key=lambda item: -item[1])


def _min_max(ranked: Sequence[tuple[K, float]]) -> dict[K, float]:
    if not ranked:
        return {}
    scores = [s for _, s in ranked]
    hi, lo = max(scores), min(scores)
    span = hi - lo
    return {key: ((s - lo) / span if span > 0 else 1.0) for key, s in ranked}


def hybrid_fusion(lexical: Sequence[tuple[K, float]], vector: Sequence[tuple[K, float]],
                  lexical_weight: float = LEXICAL_WEIGHT) -> list[tuple[K, float]]:
    """Best first; each input is (key, score) best first (BM25 score, cosine)."""
    lex, vec = _min_max(lexical), _min_max(vector)
    keys = dict.fromkeys([k for k, _ in lexical] + [k for k, _ in vector])
    fused = [(k, lexical_weight * lex.get(k, 0.0) + (1.0 - lexical_weight) * vec.get(k, 0.0)) for k in keys]
    # Ties keep first-seen order (BM25's first), so output is deterministic.
    return sorted(fused, key=lambda item: -item[1])
