"""Reciprocal rank fusion (R-HYB-1): score(d) = Σ 1 / (k + rank_i(d)), ranks from 1.

The seed fixes hybrid fusion to RRF with k = 60. ``bench/bench_fusion.py`` compares it with
score-aware alternatives (README, "Hybrid quality"): a convex combination of per-query
min-max normalised scores beat it on SciFact and held up far better when the vector model
is much weaker than BM25; adopting one would be a change to R-HYB-1.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def reciprocal_rank_fusion(rankings: Sequence[Sequence[K]], k: int = 60) -> list[tuple[K, float]]:
    scores: dict[K, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, 1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    # Ties keep first-seen order (Python's sort is stable), so output is deterministic.
    return sorted(scores.items(), key=lambda item: -item[1])
