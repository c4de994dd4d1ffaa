"""SQLite FTS5's documented bm25(), written out independently of the code under test.

    score(D) = Σ_q IDF(q) · f(q,D)·(k1+1) / (f(q,D) + k1·(1 − b + b·|D|/avgdl)),  k1 = 1.2, b = 0.75
    IDF(q)   = ln((N − n(q) + 0.5) / (n(q) + 0.5)), or 1e-6 when that is not positive
    f(q,D)   = Σ_column weight · (occurrences of q in that column)

|D| counts every token of the row. The index's `lex` table has a fourth, zero-weight `terms`
column holding each distinct token of the row once; it takes part in |D| and avgdl, so the
reference adds it. Rows are given as already-tokenised text (title, body, meta), written by
hand in the tests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

K1, B = 1.2, 0.75
SHIPPED_WEIGHTS = (5.0, 1.0, 2.0)


def fts5_bm25(rows: Mapping[int, tuple[str, str, str]], terms: Sequence[str],
              weights: tuple[float, float, float] = SHIPPED_WEIGHTS) -> dict[int, float]:
    """Positive scores (higher is better) of every row holding at least one of `terms`."""
    tokenised = {}
    for key, cols in rows.items():
        tokens = [c.split() for c in cols]
        distinct = list(dict.fromkeys(t for col in tokens for t in col))
        tokenised[key] = (tokens, sum(len(t) for t in tokens) + len(distinct))
    n_rows = len(tokenised)
    avgdl = sum(length for _, length in tokenised.values()) / n_rows
    idf = {}
    for term in terms:
        holders = sum(1 for t, _ in tokenised.values() if any(term in col for col in t))
        value = math.log((n_rows - holders + 0.5) / (holders + 0.5))
        idf[term] = value if value > 0 else 1e-6
    scores: dict[int, float] = {}
    for key, (tokens, length) in tokenised.items():
        total = 0.0
        matched = False
        for term in terms:
            freq = sum(w * col.count(term) for w, col in zip(weights, tokens, strict=True))
            matched = matched or any(term in col for col in tokens)
            total += idf[term] * freq * (K1 + 1) / (freq + K1 * (1 - B + B * length / avgdl))
        if matched:
            scores[key] = total
    return scores


def ranking(scores: Mapping[int, float]) -> list[int]:
    return sorted(scores, key=lambda k: (-scores[k], k))
