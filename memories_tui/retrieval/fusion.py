"""Hybrid fusion (R-HYB-1): how BM25 and vector candidate lists become one ranking.

``hybrid_fusion`` (the product's rule): a convex combination of per-query min-max
normalised scores, ``0.6 · bm25' + 0.4 · cosine'``, where a candidate absent from one list
counts as that list's minimum. Why scores and not ranks: equal-weight RRF throws the
scores away, so a BM25 hit that stands far above the rest (the usual case when a query
shares rare words with one passage) is pushed down by a weaker vector model's ordering; it
lost two points of nDCG@10 to BM25 alone on a Traditional-Chinese set with e5-small. With
scores each list speaks as confidently as its own score gaps, per query. Why 0.6, measured
with ``bench/bench_fusion.py`` (README, "Hybrid quality"): where the two lists are about
equally good (SciFact, MiniLM) 0.5-0.6 are best and all beat RRF; where the vector list is
nearly useless (MiniLM on Chinese with the [UNK] guard off, vector nDCG@10 0.09) only
weights from 0.6 up stay within 0.005 of BM25 alone. 0.6 is the smallest weight that does
both, so it leans on neither test. Queries the model cannot read skip fusion entirely (the
[UNK] guard in search.py).

``reciprocal_rank_fusion`` (score(d) = Σ 1 / (k + rank_i(d))) is kept as the reference.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

LEXICAL_WEIGHT = 0.6


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
