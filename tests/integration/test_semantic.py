"""Vector and hybrid search end to end.

Real onnxruntime on real graphs: the all-MiniLM-L6-v2 int8 model (fetched from PyPI by
scripts/fetch-test-models; skipped with a reason when absent) for semantic ranking, and an
EmbeddingGemma-shaped graph for the default profile.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memories_tui.engine import Engine
from memories_tui.errors import BudgetExceededError, LimitError, ModelError
from memories_tui.index import embedding
from tests.helpers.cli import call_cli
from tests.helpers.onnx_models import build_gemma_shaped_model
from tests.helpers.paths import MINILM_DIR as MINILM
from tests.helpers.paths import require_gemma_small_files, require_gemma_tokenizer, require_minilm

# Missing inputs skip with a reason outside CI and fail in CI (tests/helpers/paths.py).
needs_minilm = pytest.mark.usefixtures("minilm_dir")

NOTES = {
    "bread.md": "# Baking bread\n\nKnead the dough, let it rise overnight, then bake it in a hot oven until the crust is golden.",
    "bikes.md": "# Bicycle repair\n\nTo fix a flat tyre, remove the inner tube, find the puncture and apply a patch.",
    "tax.md": "# Tax return\n\nThe annual income tax declaration is due at the end of May; keep receipts for deductions.",
    "garden.md": "# Garden\n\nTomatoes need full sun and regular watering; pinch off side shoots in summer.",
}


def _config(home: Path, model_dir: Path, profile: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'[rag]\nlocal_model_dir = "{model_dir}"\nlocal_model_profile = "{profile}"\nlocal_threads = 1\n')


def _write_notes(folder: Path) -> list[str]:
    folder.mkdir(exist_ok=True)
    paths = []
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
        paths.append(str(folder / name))
    return paths


class FakeClock:
    """Stands in for the `time` module of memories_tui.index.embedding (monotonic only)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def minilm_engine(tmp_path, cheap_kdf):
    require_minilm()
    home = tmp_path / "home"
    _config(home, MINILM, "sentence-transformers")
    eng = Engine.open(home)
    vid = eng.create_vault("notes", "pw").vault_id
    eng.unlock(vid, "pw")
    eng.ingest(vid, [Path(p) for p in _write_notes(tmp_path / "notes")])
    eng.test_vault_id = vid
    yield eng
    eng.close()


@needs_minilm
def test_cli_index_vector_hybrid_status_and_encrypted_cache(tmp_path):
    home = tmp_path / "home"
    _config(home, MINILM, "sentence-transformers")
    vault = call_cli(home, "vault", "create", "notes", "--json").json["vault_id"]
    assert call_cli(home, "rag", "ingest", vault, *_write_notes(tmp_path / "n"), "--json").code == 0
    before = call_cli(home, "rag", "status", vault, "--json").json
    assert before["installed"] is True and before["dimensions"] == 384
    assert (before["chunks"], before["embedded"], before["missing"]) == (4, 0, 4)
    first = call_cli(home, "rag", "index", vault, "--json").json
    assert (first["embedded"], first["reused"], first["missing"]) == (4, 0, 0)
    # a new process re-uses the vectors from the encrypted cache instead of re-embedding
    second = call_cli(home, "rag", "index", vault, "--json").json
    assert (second["embedded"], second["reused"]) == (0, 4)
    after = call_cli(home, "rag", "status", vault, "--json").json
    assert (after["embedded"], after["missing"]) == (4, 0)
    for mode in ("vector", "hybrid"):
        result = call_cli(home, "rag", "search", vault, "how do I make a loaf at home", "--mode", mode, "--json").json
        assert result["mode"] == mode
        top = result["results"][0]
        assert top["title"] == "Baking bread" and top["citation"] == "S1"
        assert top["scores"]["vector"] is not None
        if mode == "hybrid":
            assert top["scores"]["fusion"] is not None
    plain = call_cli(home, "rag", "search", vault, "how do I make a loaf at home", "--mode", "vector", "--no-rerank",
                    "--json").json["results"]
    assert plain[0]["scores"]["rerank"] is None
    assert plain[0]["score"] == pytest.approx(plain[0]["scores"]["vector"])


@needs_minilm
def test_vectors_never_reach_disk_in_plaintext(minilm_engine):
    eng = minilm_engine
    vid = eng.test_vault_id
    assert not eng.model_loaded
    eng.build_vector_index(vid)
    assert eng.model_loaded
    index = eng._context(vid).index()
    vector = index.vectors.get(next(iter(index.chunks)))
    needle = vector.astype("<f4").tobytes()[:32]
    for path in eng.home.rglob("*"):
        if path.is_file():
            assert needle not in path.read_bytes(), path


@needs_minilm
def test_on_demand_embedding_of_a_new_note(minilm_engine):
    eng = minilm_engine
    vid = eng.test_vault_id
    eng.build_vector_index(vid)
    eng.add_record(vid, kind="memory", title="Violin", body="Practise scales on the violin every morning.")
    hits = eng.search(vid, "learning a string instrument", mode="vector").results
    assert hits[0].title == "Violin"


@needs_minilm
def test_strict_match_modes_filter_vector_and_hybrid(minilm_engine):
    eng = minilm_engine
    vid = eng.test_vault_id
    for mode in ("vector", "hybrid"):
        hits = eng.search(vid, "bake dough", mode=mode, match_mode="all").results
        assert [h.title for h in hits] == ["Baking bread"]
        assert eng.search(vid, "crust is golden", mode=mode, match_mode="phrase").results[0].title == "Baking bread"
        assert eng.search(vid, "golden crust", mode=mode, match_mode="phrase").results == []
    assert len(eng.search(vid, "bake dough", mode="vector", match_mode="any").results) == 4


@needs_minilm
def test_excluded_kinds_never_returned_by_vector_search(minilm_engine):
    eng = minilm_engine
    vid = eng.test_vault_id
    canary = "sourdough bread baking secret recipe"
    eng.add_record(vid, kind="credential", title="bread login", body=canary)
    eng.add_record(vid, kind="private", title="bread diary", body=canary)
    for mode in ("bm25", "vector", "hybrid"):
        for hit in eng.search(vid, canary, mode=mode, limit=100).results:
            assert hit.kind in ("memory", "card") and canary not in hit.text


@needs_minilm
def test_cards_only(minilm_engine):
    eng = minilm_engine
    vid = eng.test_vault_id
    eng.add_record(vid, kind="memory", title="Bread memory", body="I baked bread with grandma.")
    hits = eng.search(vid, "baking bread", mode="hybrid", cards_only=True, limit=100).results
    assert hits and all(h.kind == "card" for h in hits)


@needs_minilm
def test_budget_expiry_then_resume_reuses_finished_batches(minilm_engine, monkeypatch):
    eng = minilm_engine
    vid = eng.test_vault_id
    for i in range(40):
        eng.add_record(vid, kind="memory", title=f"n{i}", body=f"Note number {i} about topic {i % 7}.")
    real = eng._state.models.get().embed_documents
    clock = FakeClock()

    def slow(items, **kw):
        clock.now += 10.0  # every batch "takes" ten seconds on the fake clock
        return real(items, **kw)

    monkeypatch.setattr(embedding, "time", clock)
    monkeypatch.setattr(eng._state.models.get(), "embed_documents", slow)
    with pytest.raises(BudgetExceededError, match="Run the same command again") as err:
        eng.build_vector_index(vid, budget_seconds=5)
    assert err.value.code == "budget_exceeded"
    done = len(eng._context(vid).index().vectors)
    assert 0 < done < 44  # exactly one batch finished: the budget is checked between batches
    monkeypatch.setattr(eng._state.models.get(), "embed_documents", real)
    report = eng.build_vector_index(vid)
    assert report.embedded == 44 - done and report.missing == 0


@needs_minilm
def test_lock_clears_vectors(minilm_engine):
    eng = minilm_engine
    vid = eng.test_vault_id
    eng.build_vector_index(vid)
    eng.lock()
    assert eng._state.indexes.peek(vid) is None and not eng.is_unlocked(vid)


def test_default_profile_and_vector_space_change_never_mixes(tmp_path, cheap_kdf):
    require_gemma_tokenizer()
    gemma_dir = tmp_path / "gemma"
    build_gemma_shaped_model(gemma_dir)
    home = tmp_path / "home"
    _config(home, gemma_dir, "embeddinggemma")
    eng = Engine.open(home)
    vid = eng.create_vault("notes", "pw").vault_id
    eng.unlock(vid, "pw")
    eng.ingest(vid, [Path(p) for p in _write_notes(tmp_path / "n")])
    status = eng.status(vid).to_json()
    assert status["installed"] is True and status["pinned"] is False
    assert "not the pinned build" in status["model"] and status["dimensions"] == 768
    assert eng.build_vector_index(vid).embedded == 4
    gemma_space = eng._context(vid).index().vector_space
    eng.close()
    require_minilm()
    _config(home, MINILM, "sentence-transformers")  # another model: another vector space
    eng = Engine.open(home)
    eng.unlock(vid, "pw")
    report = eng.build_vector_index(vid)
    assert (report.embedded, report.reused) == (4, 0)  # nothing borrowed from the Gemma space
    index = eng._context(vid).index()
    assert index.vector_space != gemma_space and index.vectors.dims == 384
    assert eng.search(vid, "fix a puncture", mode="vector").results[0].title == "Bicycle repair"
    eng.close()


def test_model_not_installed_is_clear_and_bm25_still_works(engine):
    vid = engine.test_vault_id
    engine.add_record(vid, kind="memory", title="t", body="plain words")
    with pytest.raises(ModelError, match="model-install"):
        engine.search(vid, "words", mode="vector")
    bm25 = engine.search(vid, "words", mode="bm25")
    assert bm25.results[0].title == "t" and bm25.fallback is None
    # hybrid without a model: the BM25 results, said in `fallback` and a note (one rule for every front end)
    hybrid = engine.search(vid, "words", mode="hybrid")
    assert hybrid.mode == "hybrid" and hybrid.fallback == "bm25" and [n.kind for n in hybrid.notes] == [
        "no_embedding_model"]
    assert [(h.record_id, h.score, h.scores) for h in hybrid.results] == [(h.record_id, h.score, h.scores)
                                                                         for h in bm25.results]
    status = engine.status(vid).to_json()
    assert status["installed"] is False and status["model"] == "not installed" and status["missing"] == 1


def test_vector_limit_is_enforced(tmp_path, cheap_kdf):
    require_minilm()
    home = tmp_path / "home"
    _config(home, MINILM, "sentence-transformers")
    (home / "config.toml").write_text((home / "config.toml").read_text() + "\n[rag.limits]\nvector_mib = 0.001\n")
    eng = Engine.open(home)
    vid = eng.create_vault("v", "pw").vault_id
    eng.unlock(vid, "pw")
    eng.add_record(vid, kind="memory", title="a", body="some text")
    with pytest.raises(LimitError, match="vector_mib") as err:
        eng.build_vector_index(vid)
    assert err.value.code == "limit_exceeded"
    eng.close()


def test_cli_model_install_reports_every_file_and_fails_on_mismatch(tmp_path):
    from tests.helpers.mirror import Mirror

    small = require_gemma_small_files()
    files = {name: (small / name).read_bytes() for name in
             ("tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json",
              "generation_config.json")}
    files["onnx/model_q4.onnx"] = b"not the real graph"
    files["onnx/model_q4.onnx_data"] = b"not the real weights"
    home = tmp_path / "home"
    with Mirror(files) as mirror:
        home.mkdir()
        (home / "config.toml").write_text(f'[rag]\nmodel_download_base_url = "{mirror.url}"\n'
                                          "[rag.http]\nretries = 0\nbackoff_ms = 1\n")
        result = call_cli(home, "rag", "model-install", "--json", passphrase=None)
    assert result.code == 1
    out = result.json
    assert out["error"]["code"] == "model_install_failed" and "model_q4.onnx" in out["error"]["message"]
    status = {f["path"]: f["status"] for f in out["files"]}
    assert status["tokenizer.json"] == "downloaded" and status["config.json"] == "downloaded"
    assert status["onnx/model_q4.onnx"] == "failed" and status["onnx/model_q4.onnx_data"] == "failed"
    target = home / "models" / "embeddinggemma"
    assert (target / "tokenizer.json").read_bytes() == files["tokenizer.json"]
    assert not (target / "onnx" / "model_q4.onnx").exists()
    assert (target / "NOTICE.md").is_file()


@needs_minilm
def test_background_embedding_runs_niced_and_completes(minilm_engine):
    import os
    import threading

    eng = minilm_engine
    vid = eng.test_vault_id
    seen = {}

    def work():
        seen["report"] = eng._context(vid).embed_in_background()
        seen["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    thread = threading.Thread(target=work)
    thread.start()
    thread.join(60)
    assert seen["report"].embedded == 4 and seen["report"].missing == 0
    assert seen["nice"] > base or seen["nice"] == 19
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base  # only the worker was lowered


@needs_minilm
def test_hybrid_leaves_out_vectors_the_model_cannot_read(minilm_engine):
    eng = minilm_engine
    vid = eng.test_vault_id
    eng.add_record(vid, kind="memory", title="咖啡", body="手沖咖啡的水溫約九十二度")
    eng.add_record(vid, kind="memory", title="茶", body="烏龍茶要用熱水沖泡")
    assert eng._state.models.get().unknown_share("手沖咖啡的水溫") > 0.25  # an English-only model
    assert eng._state.models.get().unknown_share("bake bread") == 0.0
    hybrid = eng.search(vid, "手沖咖啡 水溫", mode="hybrid")
    bm25 = eng.search(vid, "手沖咖啡 水溫", mode="bm25")
    assert [h.record_id for h in hybrid.results] == [h.record_id for h in bm25.results]
    assert [n.kind for n in hybrid.notes] == ["vector_left_out"] and "cannot read" in hybrid.notes[0].text
    assert all(h.scores["vector"] is None for h in hybrid.results) and hybrid.fallback == "bm25"
    assert [h.score for h in hybrid.results] == [h.score for h in bm25.results]  # the BM25 results themselves
    english = eng.search(vid, "bake bread", mode="hybrid")
    assert not english.notes and english.results[0].scores["vector"] is not None and english.fallback is None


@needs_minilm
@pytest.mark.parametrize("fusion", ["score", "rrf"])
def test_hybrid_fuses_as_configured(tmp_path, cheap_kdf, fusion):
    """`[rag] fusion` reaches the engine's hybrid search; each fused score is recomputed here
    from the stage scores and ranks of the same candidates (all four notes are candidates)."""
    require_minilm()
    home = tmp_path / "home"
    _config(home, MINILM, "sentence-transformers")
    if fusion == "rrf":
        with open(home / "config.toml", "a", encoding="utf-8") as f:
            f.write('fusion = "rrf"\n')
    eng = Engine.open(home)
    try:
        vid = eng.create_vault("notes", "pw").vault_id
        eng.unlock(vid, "pw")
        eng.ingest(vid, [Path(p) for p in _write_notes(tmp_path / "notes")])
        query = "tax receipts bread"
        hits = eng.search(vid, query, mode="hybrid", rerank=False).results
        lexical = eng.search(vid, query, mode="bm25").results
        vector = eng.search(vid, query, mode="vector", rerank=False).results
        assert len(hits) == 4 and 1 < len(lexical) < 4  # one note has none of the words
        bm25 = {h.record_id: h.score for h in lexical}
        cos = {h.record_id: h.score for h in vector}
        for hit in hits:
            if fusion == "rrf":
                ranks = [[h.record_id for h in lexical], [h.record_id for h in vector]]
                expected = sum(1 / (60 + r.index(hit.record_id) + 1) for r in ranks if hit.record_id in r)
            else:
                def norm(scores: dict[str, float], rid: str) -> float:
                    lo, hi = min(scores.values()), max(scores.values())
                    return (scores[rid] - lo) / (hi - lo) if rid in scores else 0.0
                expected = 0.6 * norm(bm25, hit.record_id) + 0.4 * norm(cos, hit.record_id)
            assert hit.scores["fusion"] == pytest.approx(expected, abs=1e-6), hit.title
    finally:
        eng.close()


@needs_minilm
def test_a_character_inside_a_query_run_is_met_by_all_in_vector_and_hybrid(minilm_engine):
    """The strict ``all`` filter of vector and hybrid search meets 竹 of 廠區竹 inside 新竹, as
    the BM25 side does (Jieba cuts the query 廠區|竹, the note holds 新竹|廠區)."""
    eng = minilm_engine
    vid = eng.test_vault_id
    fab = eng.add_record(vid, kind="card", title="新竹廠區", body="新竹廠區的機台今天停機維修。").id
    for mode in ("bm25", "vector", "hybrid"):
        assert [h.record_id for h in eng.search(vid, "廠區竹", mode=mode, match_mode="all").results] == [fab], mode
