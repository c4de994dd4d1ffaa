"""The product's hybrid fusion rule: score-aware convex combination (fusion.hybrid_fusion)."""

from __future__ import annotations

import pytest

from memories_tui.retrieval.fusion import LEXICAL_WEIGHT, hybrid_fusion, reciprocal_rank_fusion


def test_known_values_min_max_and_absent_candidates():
    lex = [("a", 10.0), ("b", 6.0), ("c", 2.0)]
    vec = [("b", 0.9), ("d", 0.7), ("a", 0.5)]
    fused = dict(hybrid_fusion(lex, vec, lexical_weight=0.5))
    assert fused["a"] == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)
    assert fused["b"] == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    assert fused["c"] == pytest.approx(0.0)  # last in BM25, absent from the vector list
    assert fused["d"] == pytest.approx(0.5 * 0.5)
    assert [k for k, _ in hybrid_fusion(lex, vec, lexical_weight=0.5)] == ["b", "a", "d", "c"]


def test_a_decisive_bm25_hit_stays_first_where_rrf_lets_a_weak_vector_list_demote_it():
    lex = [(1, 30.0), (2, 9.0), (3, 8.5)] + [(k, 8.0 - k / 100) for k in range(4, 100)]
    vec = [(3, 0.83), (2, 0.82)] + [(k, 0.80 - k / 1000) for k in range(4, 60)] + [(1, 0.70)]
    assert hybrid_fusion(lex, vec)[0][0] == 1
    assert reciprocal_rank_fusion([[k for k, _ in lex], [k for k, _ in vec]])[0][0] != 1


def test_flat_bm25_scores_let_the_vector_order_decide():
    lex = [(k, 5.0 - k / 1000) for k in range(1, 50)]
    vec = [(k, 0.3 + k / 100) for k in range(1, 50)]  # reversed order, well spread
    assert [k for k, _ in hybrid_fusion(lex, vec)][:3] == [49, 48, 47]


def test_empty_single_and_ties_are_deterministic():
    assert hybrid_fusion([], []) == []
    assert [k for k, _ in hybrid_fusion([(7, 1.0)], [])] == [7]
    assert [k for k, _ in hybrid_fusion([], [(9, 0.5), (8, 0.5)])] == [9, 8]  # equal: first seen first
    both = hybrid_fusion([(1, 2.0), (2, 1.0)], [(2, 0.9), (1, 0.1)], lexical_weight=0.5)
    assert [k for k, _ in both] == [1, 2] and both[0][1] == both[1][1]
    assert 0.0 < LEXICAL_WEIGHT < 1.0
