"""RRF (R-HYB-1), the heuristic rerank (R-HYB-2) and snippet highlighting."""

from __future__ import annotations

import pytest

from memories_tui.retrieval import rerank
from memories_tui.retrieval.fusion import reciprocal_rank_fusion
from memories_tui.retrieval.highlight import snippet, term_spans


def test_rrf_known_values():
    fused = dict(reciprocal_rank_fusion([["a", "b", "c"], ["b", "d"]], k=60))
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["d"] == pytest.approx(1 / 62)
    assert [k for k, _ in reciprocal_rank_fusion([["a", "b", "c"], ["b", "d"]])][:2] == ["b", "a"]


def test_rrf_empty_and_single():
    assert reciprocal_rank_fusion([[], []]) == []
    assert [k for k, _ in reciprocal_rank_fusion([[3, 1, 2]])] == [3, 1, 2]


def test_rerank_boosts_coverage_and_phrase():
    texts = {1: "bread flour water", 2: "sourdough bread starter recipe", 3: "unrelated words"}
    ranked = [(3, 1.0), (1, 0.9), (2, 0.8)]
    new, scores = rerank.heuristic_rerank("sourdough starter", ["sourdough", "starter"], ranked, texts.__getitem__)
    assert new[0][0] == 2  # full coverage + exact phrase beats a higher base rank
    assert scores[2] > scores[1] and set(scores) == {1, 2, 3}


def test_rerank_keeps_order_without_matches_and_window_tail():
    ranked = [(k, 1.0 / k) for k in range(1, rerank.RERANK_WINDOW + 11)]
    new, scores = rerank.heuristic_rerank("zzz", ["zzz"], ranked, lambda k: "nothing")
    assert [k for k, _ in new] == [k for k, _ in ranked]
    assert len(scores) == rerank.RERANK_WINDOW


def test_term_spans_cross_script_and_case():
    text = "臺灣的 Coffee 文化"
    spans = term_spans(text, ["台湾", "coffee"])
    assert [text[a:b] for a, b in spans] == ["臺灣", "Coffee"]


def test_snippet_centres_on_first_match():
    text = "x " * 200 + "needle here" + " y" * 200
    out = snippet(text, ["needle"], width=60)
    assert "needle" in out and out.startswith("…") and out.endswith("…")
