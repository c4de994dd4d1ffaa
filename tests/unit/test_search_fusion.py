"""Hybrid fusion on the real search path: the default score fusion (0.6 x min-max BM25 +
0.4 x min-max cosine) and `fusion="rrf"` (reciprocal rank fusion, k = 60).

The index is real (FTS5 + a VectorMatrix); the query "embedding" is a fixed vector so the
vector ranking and cosines are known by construction. Expected fused scores are computed
here by hand: RRF from the two rankings, 1/(60 + bm25 rank) + 1/(60 + vector rank); score
fusion from the BM25 scores the index returns and the constructed cosines.
"""

from __future__ import annotations

import numpy as np
import pytest

from memories_tui.config import Limits
from memories_tui.errors import LimitError, UsageError
from memories_tui.index.cache import VaultIndex
from memories_tui.index.vectors import VectorMatrix
from memories_tui.retrieval.fusion import reciprocal_rank_fusion
from memories_tui.retrieval.search import search
from memories_tui.text.query import parse_query
from memories_tui.vault.records import Record

# bm25 order for "apple" is d1 > d2 > d3 > d4 (term frequency 4, 3, 2, 1 in equally long
# bodies); d5 has no "apple". The vector order is the reverse: d5 > d4 > d3 > d2 > d1.
BODIES = {
    "d1": "apple apple apple apple pear",
    "d2": "apple apple apple pear pear",
    "d3": "apple apple pear pear pear",
    "d4": "apple pear pear pear pear",
    "d5": "pear pear pear pear pear",
}
COSINE = {"d5": 0.9, "d4": 0.7, "d3": 0.5, "d2": 0.3, "d1": 0.1}
BM25_RANK = {"d1": 1, "d2": 2, "d3": 3, "d4": 4}
VECTOR_RANK = {"d5": 1, "d4": 2, "d3": 3, "d2": 4, "d1": 5}


def _unit(cos: float) -> np.ndarray:
    return np.array([cos, np.sqrt(1 - cos * cos), 0.0, 0.0], dtype=np.float32)


@pytest.fixture
def index() -> VaultIndex:
    ix = VaultIndex("v", Limits())
    ix.sync([Record(id=rid, revision=1, kind="memory", title="", body=body) for rid, body in BODIES.items()])
    key_of = {c.record_id: k for k, c in ix.chunks.items()}
    ix.vectors = VectorMatrix(4)
    ix.vectors.add([key_of[r] for r in COSINE], np.stack([_unit(c) for c in COSINE.values()]))
    return ix


def query_vector(_: str) -> np.ndarray:
    return np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)


def test_the_two_input_rankings_are_as_constructed(index):
    bm25 = search(index, parse_query("apple", mode="bm25"))
    assert [h.record_id for h in bm25.results] == ["d1", "d2", "d3", "d4"]
    vec = search(index, parse_query("apple", mode="vector"), rerank=False, embed_query=query_vector)
    assert [h.record_id for h in vec.results] == ["d5", "d4", "d3", "d2", "d1"]
    assert [h.score for h in vec.results] == pytest.approx([0.9, 0.7, 0.5, 0.3, 0.1], abs=1e-6)


def test_hybrid_scores_are_rrf_with_k_60(index):
    hybrid = search(index, parse_query("apple", mode="hybrid"), rerank=False, embed_query=query_vector, fusion="rrf")
    got = {h.record_id: h for h in hybrid.results}
    assert set(got) == set(BODIES)
    for rid, hit in got.items():
        expected = 1 / (60 + VECTOR_RANK[rid]) + (1 / (60 + BM25_RANK[rid]) if rid in BM25_RANK else 0.0)
        assert hit.scores["fusion"] == pytest.approx(expected, rel=1e-9), rid
        assert hit.score == pytest.approx(expected, rel=1e-9), rid
    # d1: 1/61 + 1/65 = 0.0317780…; d5 (vector only): 1/61 = 0.0163934…
    assert got["d1"].score == pytest.approx(0.031778058, abs=1e-9)
    assert got["d5"].score == pytest.approx(0.016393443, abs=1e-9)
    assert [h.record_id for h in hybrid.results][0] == "d1" and hybrid.results[-1].record_id == "d5"


def test_default_hybrid_is_score_fusion(index):
    bm25 = {h.record_id: h.score for h in search(index, parse_query("apple", mode="bm25")).results}
    hybrid = search(index, parse_query("apple", mode="hybrid"), rerank=False, embed_query=query_vector)
    got = {h.record_id: h for h in hybrid.results}
    assert set(got) == set(BODIES)
    hi, lo = bm25["d1"], bm25["d4"]
    for rid, hit in got.items():
        lexical = (bm25[rid] - lo) / (hi - lo) if rid in bm25 else 0.0  # d5 has no "apple": 0
        cosine = (COSINE[rid] - 0.1) / (0.9 - 0.1)
        assert hit.scores["fusion"] == pytest.approx(0.6 * lexical + 0.4 * cosine, abs=1e-6), rid
        assert hit.score == hit.scores["fusion"]
    # top of BM25 / bottom of cosine, and the reverse: 0.6 x 1 + 0.4 x 0 and 0.6 x 0 + 0.4 x 1
    assert got["d1"].score == pytest.approx(0.6, abs=1e-6) and got["d5"].score == pytest.approx(0.4, abs=1e-6)
    assert got["d4"].score == pytest.approx(0.4 * 0.75, abs=1e-6)
    assert [h.record_id for h in hybrid.results][0] == "d1"
    assert [h.score for h in hybrid.results] == sorted((h.score for h in hybrid.results), reverse=True)


def test_score_fusion_rerank_boosts_the_fused_score_not_the_rank(index):
    plain = {h.record_id: h.score for h in search(index, parse_query("apple", mode="hybrid"), rerank=False,
                                                      embed_query=query_vector).results}
    hybrid = search(index, parse_query("apple", mode="hybrid"), embed_query=query_vector)
    got = {h.record_id: h for h in hybrid.results}
    # d1-d4 contain the term and the phrase "apple": x (1 + 0.1 + 0.3); d5 neither: x 1
    for rid in ("d1", "d2", "d3", "d4"):
        assert got[rid].scores["rerank"] == pytest.approx(plain[rid] * 1.4, abs=1e-6), rid
    assert got["d5"].scores["rerank"] == pytest.approx(plain["d5"], abs=1e-6)
    assert [h.record_id for h in hybrid.results] == ["d1", "d2", "d3", "d4", "d5"]
    # the same candidates fused by rank: the rerank base is 1/(60 + rank)
    rrf = search(index, parse_query("apple", mode="hybrid"), embed_query=query_vector, fusion="rrf")
    first = rrf.results[0]
    assert first.scores["rerank"] == pytest.approx(1.4 / 61, abs=1e-9)


def test_fusion_default_k_is_60():
    fused = dict(reciprocal_rank_fusion([["a", "b"], ["b", "c"]]))
    assert fused == pytest.approx({"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 62})


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
@pytest.mark.parametrize("limit", [0, 101])
def test_result_limit_is_checked_when_the_query_is_parsed(index, mode, limit):
    # 0 is a usage error (exit 2); 101 is over the documented limit of 100
    expected, code = (UsageError, "usage_error") if limit < 1 else (LimitError, "limit_exceeded")
    with pytest.raises(expected) as err:
        parse_query("apple", mode=mode, limit=limit)
    assert err.value.code == code and "100" in err.value.message
    parsed = parse_query("apple", mode=mode, limit=100)  # 100 itself is fine
    assert search(index, parsed, embed_query=query_vector).results
