"""Fusion (score fusion and RRF), the heuristic rerank, snippet highlighting
and the `[rag] fusion` setting."""

from __future__ import annotations

import pytest

from memories_tui.config import parse_config
from memories_tui.errors import ConfigError
from memories_tui.retrieval import rerank
from memories_tui.retrieval.fusion import min_max, reciprocal_rank_fusion, score_fusion
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


def test_score_fusion_known_values():
    fused = dict(score_fusion([("a", 12.0), ("b", 7.0), ("c", 2.0)], [("c", 0.9), ("d", 0.5), ("a", 0.1)]))
    assert fused["a"] == pytest.approx(0.6 * 1.0 + 0.4 * 0.0)
    assert fused["b"] == pytest.approx(0.6 * 0.5)  # absent from the vector list: its 0
    assert fused["c"] == pytest.approx(0.6 * 0.0 + 0.4 * 1.0)
    assert fused["d"] == pytest.approx(0.4 * 0.5)
    assert [k for k, _ in score_fusion([("a", 12.0), ("b", 7.0)], [("b", 0.9), ("a", 0.1)], bm25_weight=0.3)] \
        == ["b", "a"]


def test_score_fusion_edges():
    assert score_fusion([], []) == []
    assert min_max([("x", 3.0), ("y", 3.0)]) == {"x": 1.0, "y": 1.0}  # all equal: no say, no division by 0
    # one list empty (e.g. the [UNK] guard left the vectors out): the other's order is kept
    assert [k for k, _ in score_fusion([("a", 5.0), ("b", 4.0), ("c", 1.0)], [])] == ["a", "b", "c"]
    # ties keep first-seen order, BM25's first
    assert [k for k, _ in score_fusion([("a", 1.0)], [("b", 1.0)], bm25_weight=0.5)] == ["a", "b"]


@pytest.mark.parametrize("value", ["score", "rrf"])
def test_fusion_setting(tmp_path, value):
    assert parse_config({}, tmp_path / "config.toml", tmp_path).rag.fusion == "score"
    assert parse_config({"rag": {"fusion": value}}, tmp_path / "config.toml", tmp_path).rag.fusion == value


@pytest.mark.parametrize("value", ["RRF", "convex", 1, ""])
def test_fusion_setting_refused(tmp_path, value):
    with pytest.raises(ConfigError, match="rag.fusion"):
        parse_config({"rag": {"fusion": value}}, tmp_path / "config.toml", tmp_path)


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


def test_snippet_starts_at_a_word_not_inside_one():
    text = "The process ran on the hosts and search found it in the logs. " * 3 + "needle in the haystack"
    out = snippet(text, ["needle"], width=60)
    assert out.startswith("…") and "needle" in out
    first = out[1:].split(" ")[0]
    assert first in text.split(" "), out  # a whole word, never "ess" or "s"
