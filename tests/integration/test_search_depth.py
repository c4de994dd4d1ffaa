"""How deep each stage looks before the result is cut to `limit`.

Hybrid fuses candidate lists deeper than the limit, so asking for fewer results gives the top
of the same ranking (same hits, same scores); the rerank service sees more candidates than the
limit, so it can lift one that BM25 ranked below the cut. Engine in-process, embeddings and the
rerank service over loopback HTTP.
"""

from __future__ import annotations

import pytest

from memories_tui.engine import Engine, NewRecord
from tests.helpers.model_server import RERANK
from tests.helpers.vaults import open_vault

NOTES = [
    ("Starter", "Feed the sourdough starter twice a day with rye flour and water."),
    ("Loaf", "A sourdough loaf needs a lively starter, flour, water and salt."),
    ("Crust", "For a dark crust bake the loaf hot, then lower the oven."),
    ("Rye", "Rye flour ferments fast; the starter doubles in four hours."),
    ("Market", "Bought flour, salt and a banneton at the market."),
    ("Travel", "Kyoto by train: the sourdough bakery near the station opens at seven."),
    ("Hydration", "High hydration dough is sticky; wet hands help with the starter and the loaf."),
    ("Fridge", "A starter kept in the fridge needs feeding once a week."),
    ("Discard", "Sourdough discard makes good crackers with olive oil and salt."),
    ("Oven", "Preheat the oven with the dutch oven inside for a full hour before the loaf."),
    ("Notes", "Flour, water, salt, time: sourdough is patience more than recipe."),
    ("Coffee", "Pour-over coffee at 92 degrees; nothing to do with bread."),
]


def open_engine(home, config: str) -> tuple[Engine, str]:
    eng, vid = open_vault(home, config)
    eng.add_records(vid, [NewRecord("memory", title, body) for title, body in NOTES])
    return eng, vid


def _ranking(hits) -> list[tuple[str, str, float]]:
    return [(h.record_id, h.chunk_hash, round(h.score, 9)) for h in hits]


@pytest.mark.parametrize("fusion", ["score", "rrf"])
def test_hybrid_with_a_smaller_limit_is_the_top_of_the_same_ranking(tmp_path, cheap_kdf, srv, fusion):
    srv.embed_dims = 32
    config = (f'[rag]\nfusion = "{fusion}"\n\n[rag.embedding]\nprotocol = "compatible"\n'
              f'url = "{srv.compat_embed_url}"\nmodel = "bag"\ndimensions = 32\n')
    eng, vid = open_engine(tmp_path / "home", config)
    try:
        eng.build_vector_index(vid)
        for query in ("sourdough starter flour", "loaf oven salt water"):
            full = eng.search(vid, query, mode="hybrid", limit=12).results
            assert len(full) >= 8
            lexical = eng.search(vid, query, mode="bm25", limit=12).results
            assert _ranking(full) != _ranking(lexical)  # the vector list changes the order
            for limit in (1, 2, 3, 5):
                top = eng.search(vid, query, mode="hybrid", limit=limit).results
                assert _ranking(top) == _ranking(full[:limit]), (query, limit)
    finally:
        eng.close()


def test_rerank_service_sees_candidates_below_the_limit(tmp_path, cheap_kdf, srv):
    """The service prefers the last candidate it is sent: with limit 1 it must be sent more than
    one, and its choice (a note BM25 ranked below the cut) becomes the one result."""
    srv.rerank = lambda query, docs, top_n: [{"index": len(docs) - 1 - i, "relevance_score": 1.0 - i / 100}
                                             for i in range(len(docs))]
    config = f'[rag.rerank]\nprotocol = "compatible"\nurl = "{srv.rerank_url}"\nmodel = "rr"\n'
    eng, vid = open_engine(tmp_path / "home", config)
    try:
        lexical = eng.search(vid, "sourdough starter", limit=12, rerank=False).results
        assert len(lexical) >= 4
        (top,) = eng.search(vid, "sourdough starter", limit=1).results
        (sent,) = srv.requests_for(RERANK)
        documents = sent.json()["documents"]
        assert len(documents) > 1
        assert documents == [h.text for h in lexical[:len(documents)]]  # BM25's best, in order
        last = lexical[len(documents) - 1]
        assert (top.record_id, top.citation, top.scores["service"]) == (last.record_id, "S1", 1.0)
    finally:
        eng.close()
