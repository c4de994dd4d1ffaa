"""A query is segmented once per search (the work is done once at the boundary, not per stage).

Counts calls of the segmenter entry point (`segment._tokens_from_folded`, which runs Jieba
over every CJK run) while the index is already built, so every call is for the query.
"""

from __future__ import annotations

import pytest

from memories_tui.engine import parse_query
from memories_tui.errors import ModelError
from memories_tui.text import segment
from tests.helpers.homes import minilm_config, write_config
from tests.helpers.paths import MINILM_DIR

QUERY = "咖啡豆 coffee 烘焙"
PHRASE = "咖啡豆 coffee"  # occurs as written
MINILM = MINILM_DIR


@pytest.fixture
def counted(monkeypatch):
    calls: list[str] = []
    real = segment._tokens_from_folded

    def counting(folded: str, *more: list[str] | None, **named: list[str] | None) -> list[str]:
        calls.append(folded)
        return real(folded, *more, **named)

    def start() -> list[str]:
        calls.clear()
        monkeypatch.setattr(segment, "_tokens_from_folded", counting)
        return calls

    return start


def _vault(engine) -> str:
    vid = engine.test_vault_id
    engine.add_record(vid, kind="memory", title="咖啡", body="咖啡豆 coffee beans 的烘焙，深焙與淺焙。")
    engine.add_record(vid, kind="card", title="Tea", body="Oolong tea, steeped three minutes.")
    engine._context(vid).index()  # built before counting: only the query is segmented below
    return vid


@pytest.mark.parametrize("match_mode", ["any", "all", "phrase"])
def test_bm25_search_segments_the_query_once(engine, counted, match_mode):
    vid = _vault(engine)
    calls = counted()
    response = engine.search(vid, PHRASE if match_mode == "phrase" else QUERY, match_mode=match_mode)
    assert response.results and response.results[0].title == "咖啡"
    assert len(calls) == 1
    # the hit carries what a front end needs to highlight it, without segmenting again
    hit = response.results[0]
    assert hit.spans and "咖啡" in hit.snippet
    assert len(calls) == 1


def test_memory_search_segments_the_query_once(engine, counted):
    vid = _vault(engine)
    calls = counted()
    rows = engine.memory_search(vid, QUERY, match_mode="all")
    assert [r.title for r in rows] == ["咖啡"] and "咖啡" in rows[0].snippet
    assert len(calls) == 1


def test_one_parse_serves_every_mode(engine, counted):
    vid = _vault(engine)
    calls = counted()
    query = parse_query(QUERY, match_mode="all", limit=5)
    assert len(calls) == 1
    engine.search(vid, query.with_mode("bm25"))
    with pytest.raises(ModelError) as err:  # no embedding model here: vector search fails after the parse
        engine.search(vid, query.with_mode("vector"))
    assert err.value.code == "model_not_installed"
    assert engine.search(vid, query.with_mode("hybrid")).fallback == "bm25"  # hybrid answers with BM25
    assert len(calls) == 1


@pytest.mark.usefixtures("minilm_dir")  # skip with a reason outside CI, fail in CI (tests/helpers/paths.py)
def test_vector_and_hybrid_search_segment_the_query_once(tmp_path, counted, cheap_kdf):
    from memories_tui.engine import Engine

    home = write_config(tmp_path / "home", minilm_config(MINILM))
    engine = Engine.open(home)
    try:
        vid = engine.create_vault("v", "pw").vault_id
        engine.unlock(vid, "pw")
        engine.test_vault_id = vid
        _vault(engine)
        engine.build_vector_index(vid)
        for mode in ("vector", "hybrid"):
            for match_mode in ("any", "all", "phrase"):
                calls = counted()
                text = PHRASE if match_mode == "phrase" else QUERY
                response = engine.search(vid, text, mode=mode, match_mode=match_mode)
                assert response.results, (mode, match_mode)
                assert len(calls) == 1, (mode, match_mode, calls)
    finally:
        engine.close()
