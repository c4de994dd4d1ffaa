"""Engine.ask and remote embeddings in-process: late results dropped on lock or source change,
device-only vaults refused before any connection (the loopback guard would fail the test)."""

from __future__ import annotations

import json

import pytest

from memories_tui.engine import ANSWERED, Engine
from memories_tui.errors import CancelledError, PolicyError
from tests.helpers.model_server import generation_toml, naive_model
from tests.helpers.vaults import open_vault


def open_engine(tmp_path, config: str) -> tuple[Engine, str]:
    eng, vid = open_vault(tmp_path / "home", config)
    eng.add_record(vid, kind="card", title="混合搜尋", body="混合搜尋把 BM25 與向量排名融合。")
    eng.add_record(vid, kind="private", title="日記 混合搜尋", body="混合搜尋 PRIVATE-CANARY-1")
    eng.add_record(vid, kind="credential", title="token 混合搜尋", body="混合搜尋 CRED-CANARY-2")
    return eng, vid


def test_ask_answers_and_sends_no_excluded_text(tmp_path, cheap_kdf, srv):
    eng, vid = open_engine(tmp_path, srv.generation_toml())
    try:
        ans = eng.ask(vid, "混合搜尋")
        assert ans.status == ANSWERED and len(ans.sources) == 1
        body = srv.all_bodies().decode()
        assert "PRIVATE-CANARY-1" not in body and "CRED-CANARY-2" not in body
    finally:
        eng.close()


def test_lock_during_the_call_drops_the_late_answer(tmp_path, cheap_kdf, srv):
    eng, vid = open_engine(tmp_path, srv.generation_toml())

    def lock_then_answer(system: str, user: str) -> str:
        eng.lock()
        return naive_model(system, user)

    srv.chat = lock_then_answer
    with pytest.raises(CancelledError, match="late answer was dropped"):
        eng.ask(vid, "混合搜尋")
    eng.close()


def test_source_change_during_the_call_drops_the_late_answer(tmp_path, cheap_kdf, srv):
    eng, vid = open_engine(tmp_path, srv.generation_toml())
    card = next(r for r in eng.list_records(vid) if r.kind == "card")

    def edit_then_answer(system: str, user: str) -> str:
        eng.update_record(vid, card.id, body="混合搜尋 now says something else.")
        return naive_model(system, user)

    srv.chat = edit_then_answer
    try:
        with pytest.raises(CancelledError, match="changed"):
            eng.ask(vid, "混合搜尋")
    finally:
        eng.close()


def test_lock_between_retries_stops_sending(tmp_path, cheap_kdf, srv, monkeypatch):
    from memories_tui.models import http as nethttp

    eng, vid = open_engine(tmp_path, srv.generation_toml())
    srv.queue("v1/chat/completions", 503)
    monkeypatch.setattr(nethttp, "_sleep", lambda s, cancel: eng.lock())
    with pytest.raises(CancelledError):
        eng.ask(vid, "混合搜尋")
    assert len(srv.requests) == 1  # the retry was never sent
    eng.close()


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_device_only_refuses_remote_generation_before_any_retrieval(tmp_path, cheap_kdf, srv, mode):
    """Retrieval reaches the loopback services a device-only vault may use (the rerank service in
    every mode, the embedding service for vector and hybrid): before the refusal none hears a thing."""
    config = (generation_toml("https://gen.example/v1/chat/completions")
              + f'[rag.embedding]\nprotocol = "compatible"\nurl = "{srv.compat_embed_url}"\nmodel = "m"\n'
              + f'[rag.rerank]\nprotocol = "compatible"\nurl = "{srv.rerank_url}"\nmodel = "r"\n')
    eng, vid = open_engine(tmp_path, config)
    eng.add_record(vid, kind="memory", title="second", body="混合搜尋 again")  # two hits: the rerank would send
    eng.set_device_only(vid, True)
    try:
        with pytest.raises(PolicyError) as err:
            eng.ask(vid, "混合搜尋", mode=mode)
        assert err.value.code == "device_only" and "gen.example" in err.value.message
        assert srv.requests == []
        assert eng.search(vid, "混合搜尋", mode=mode).results  # retrieval alone does reach them
        assert srv.requests_for("v1/rerank") and (mode == "bm25") != bool(srv.requests_for("v1/embeddings"))
    finally:
        eng.close()


def test_device_only_refuses_remote_embedding_and_rerank(tmp_path, cheap_kdf, monkeypatch):
    monkeypatch.setenv("K", "key-value-123")
    config = ('[rag.embedding]\nprotocol = "compatible"\nurl = "https://emb.example/v1/embeddings"\nmodel = "m"\n'
              'dimensions = 8\napi_key_env = "K"\n'
              '[rag.rerank]\nprotocol = "compatible"\nurl = "https://rr.example/v1/rerank"\nmodel = "r"\n'
              'api_key_env = "K"\n')
    eng, vid = open_engine(tmp_path, config)
    eng.add_record(vid, kind="memory", title="second", body="混合搜尋 again")  # two hits: rerank would send
    eng.set_device_only(vid, True)
    try:
        with pytest.raises(PolicyError):
            eng.build_vector_index(vid)
        with pytest.raises(PolicyError):
            eng.search(vid, "混合搜尋", mode="vector")
        with pytest.raises(PolicyError):  # the rerank service would send chunk text too
            eng.search(vid, "混合搜尋")
        assert eng.search(vid, "混合搜尋", rerank=False).results  # BM25 alone stays local
        status = eng.status(vid)
        assert status.installed is False and "device-only" in (status.problem or "")
    finally:
        eng.close()


def test_remote_embedding_index_sends_no_excluded_text(tmp_path, cheap_kdf, srv):
    config = f'[rag.embedding]\nprotocol = "compatible"\nurl = "{srv.compat_embed_url}"\nmodel = "m"\n'
    eng, vid = open_engine(tmp_path, config)
    try:
        report = eng.build_vector_index(vid)
        assert report.embedded == 1
        hits = eng.search(vid, "混合搜尋", mode="hybrid").results
        assert hits and hits[0].title == "混合搜尋"
        sent = [json.loads(r.body) for r in srv.requests]
        assert all("CANARY" not in json.dumps(b, ensure_ascii=False) for b in sent)
        assert eng.status(vid).vector_space.startswith("remote:compatible:8:")
    finally:
        eng.close()
