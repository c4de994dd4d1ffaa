"""Local ONNX embeddings: the EmbeddingGemma profile on a graph with the
export's contract + the real Gemma tokenizer, and the sentence-transformers profile on a tiny
graph and (when fetched by scripts/fetch-test-models) the real all-MiniLM-L6-v2 int8 model."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from memories_tui.errors import CancelledError, ModelError
from memories_tui.models import local_onnx
from memories_tui.models.local_onnx import EmbedResult, LocalEmbedder
from tests.helpers.onnx_models import (
    GEMMA_TOKENIZER,
    build_gemma_shaped_model,
    build_st_shaped_model,
    build_wordlevel_tokenizer,
)
from tests.helpers.paths import MINILM_DIR, require_gemma_tokenizer

# Missing inputs skip with a reason outside CI and fail in CI (tests/helpers/paths.py).
needs_gemma_tokenizer = pytest.mark.usefixtures("gemma_tokenizer")
needs_minilm = pytest.mark.usefixtures("minilm_dir")


def _normalise(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def gemma_dir(tmp_path_factory) -> tuple[Path, object]:
    require_gemma_tokenizer()
    d = tmp_path_factory.mktemp("gemma")
    weights = build_gemma_shaped_model(d)
    return d, weights


@pytest.fixture(scope="module")
def gemma(gemma_dir) -> LocalEmbedder:
    return LocalEmbedder(gemma_dir[0], threads=2)


# --- EmbeddingGemma profile ---------------------------------------------------------------


@needs_gemma_tokenizer
def test_default_profile_loads_external_data_graph(gemma_dir, gemma):
    d, _ = gemma_dir
    assert (d / "onnx" / "model_q4.onnx_data").stat().st_size > 1_000_000  # weights really external
    assert gemma.profile == "embeddinggemma"
    assert gemma.dims == 768
    assert gemma.max_tokens == 2048
    assert gemma.pinned is False  # a stand-in graph, not the pinned bytes
    assert set(gemma.file_hashes) == {"onnx/model_q4.onnx", "onnx/model_q4.onnx_data", "tokenizer.json"}


@needs_gemma_tokenizer
def test_sentence_embedding_chosen_by_name(gemma_dir, gemma):
    _, w = gemma_dir
    items = [("Bread", "Knead the dough, then bake."), (None, "short"), ("", "a somewhat longer text " * 5)]
    res = gemma.embed_documents(items)
    assert isinstance(res, EmbedResult)
    assert res.vectors.dtype == np.float32 and res.vectors.shape == (3, 768)
    for row, (title, text) in enumerate(items):
        ids = np.asarray([gemma.document_token_ids(title, text)])
        mask = np.ones_like(ids)
        expected = _normalise(w.sentence_embedding(ids, mask))[0]
        np.testing.assert_allclose(res.vectors[row], expected, atol=1e-5)
        # Mean-pooling the first output (last_hidden_state) gives something else.
        wrong = _normalise(w.mean_pool(ids, mask))[0]
        assert float(res.vectors[row] @ wrong) < 0.9


@needs_gemma_tokenizer
def test_vectors_are_unit_length_although_raw_output_is_not(gemma_dir, gemma):
    _, w = gemma_dir
    ids = np.asarray([gemma.query_token_ids("hello")])
    raw = w.sentence_embedding(ids, np.ones_like(ids))
    assert abs(float(np.linalg.norm(raw)) - 1.0) > 0.1
    q = gemma.embed_query("hello")
    assert q.shape == (768,) and q.dtype == np.float32
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-5
    docs = gemma.embed_documents([("t", "x"), ("u", "y z")]).vectors
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)


@needs_gemma_tokenizer
def test_prefixes_and_single_bos_eos(gemma):
    raw = gemma._tok  # the loader's tokenizer (no padding)

    def plain(s: str) -> list[int]:
        return list(raw.encode(s, add_special_tokens=False).ids)

    doc = gemma.document_token_ids("My title", "Body text here")
    assert doc == [2] + plain("title: My title | text: Body text here") + [1]
    prefix = plain("title: My title | text:")
    assert doc[1:1 + len(prefix)] == prefix
    assert gemma.document_token_ids(None, "x") == gemma.document_token_ids("", "x")
    assert gemma.document_token_ids(None, "x")[1:1 + len(plain("title: none | text:"))] == plain("title: none | text:")

    query = gemma.query_token_ids("how to bake bread")
    qprefix = plain("task: search result | query:")
    assert query[0] == 2 and query[-1] == 1
    assert query[1:1 + len(qprefix)] == qprefix
    assert query != gemma.document_token_ids(None, "how to bake bread")

    # Literal special-token text inside a chunk never becomes a second <bos>/<eos>.
    tricky = gemma.document_token_ids("<bos>", "text <eos> more <bos><pad>")
    assert tricky[0] == 2 and tricky[-1] == 1
    assert tricky.count(2) == 1 and tricky.count(1) == 1 and 0 not in tricky


@needs_gemma_tokenizer
def test_query_and_document_vectors_differ(gemma):
    q = gemma.embed_query("bread")
    d = gemma.embed_documents([(None, "bread")]).vectors[0]
    assert not np.allclose(q, d)


@needs_gemma_tokenizer
def test_truncation_at_max_tokens_is_reported(gemma_dir):
    d, w = gemma_dir
    emb = LocalEmbedder(d, threads=1, max_tokens=16)
    assert emb.max_tokens == 16
    long_text = "word " * 200
    res = emb.embed_documents([(None, "short"), (None, long_text), ("t", "zwei drei")])
    assert res.truncated == [False, True, False]
    ids = emb.document_token_ids(None, long_text)
    assert len(ids) == 16 and ids[0] == 2 and ids[-1] == 1
    assert res.tokens == sum(len(emb.document_token_ids(t, x)) for t, x in
                             [(None, "short"), (None, long_text), ("t", "zwei drei")])
    # The truncated vector is the vector of exactly those 16 ids.
    arr = np.asarray([ids])
    np.testing.assert_allclose(res.vectors[1], _normalise(w.sentence_embedding(arr, np.ones_like(arr)))[0],
                               atol=1e-5)
    # count_tokens is never truncated and has no prefix or special tokens.
    assert emb.count_tokens(" ".join(["word"] * 200)) == 200
    assert emb.count_tokens("") == 0
    # max_tokens is capped by the model's window (config.json max_position_embeddings 2048).
    assert LocalEmbedder(d, max_tokens=8192).max_tokens == 2048


@needs_gemma_tokenizer
def test_bucketed_batches_preserve_order(gemma, monkeypatch):
    rng = np.random.default_rng(3)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "bread", "river", "stone"]
    items = [(f"title {i}" if i % 3 else None, " ".join(rng.choice(words, size=int(n))))
             for i, n in enumerate(rng.integers(1, 60, size=23))]
    one_by_one = np.stack([gemma.embed_documents([it]).vectors[0] for it in items])

    widths: list[list[int]] = []
    real = gemma._run_batch

    def spy(seqs):
        widths.append([len(s) for s in seqs])
        return real(seqs)

    monkeypatch.setattr(gemma, "_run_batch", spy)
    res = gemma.embed_documents(items, batch_size=4)
    np.testing.assert_allclose(res.vectors, one_by_one, atol=1e-5)
    assert [len(b) for b in widths] == [4, 4, 4, 4, 4, 3]
    flat = [n for b in widths for n in b]
    assert flat == sorted(flat)  # batches were formed from length-sorted items


@needs_gemma_tokenizer
def test_batches_respect_token_budget(gemma_dir, monkeypatch):
    d, _ = gemma_dir
    emb = LocalEmbedder(d, threads=1, max_tokens=2048)
    monkeypatch.setattr(local_onnx, "MAX_BATCH_TOKENS", 256)
    widths: list[list[int]] = []
    real = emb._run_batch
    monkeypatch.setattr(emb, "_run_batch", lambda seqs: (widths.append([len(s) for s in seqs]), real(seqs))[1])
    res = emb.embed_documents([(None, "word " * 100)] * 5, batch_size=16)
    assert res.vectors.shape == (5, 768)
    assert all(len(b) * max(b) <= 256 for b in widths)


@needs_gemma_tokenizer
def test_cancel_between_batches(gemma):
    stop = threading.Event()
    stop.set()
    with pytest.raises(CancelledError):
        gemma.embed_documents([(None, "a"), (None, "b")], cancel=stop)
    assert gemma.embed_documents([]).vectors.shape == (0, 768)


@needs_gemma_tokenizer
def test_space_key(gemma_dir, gemma, tmp_path):
    d, _ = gemma_dir
    same = LocalEmbedder(d, threads=1)  # threads are not part of the space
    assert same.space_key == gemma.space_key
    assert gemma.space_key.startswith("local:embeddinggemma:768:")
    assert LocalEmbedder(d, max_tokens=512).space_key != gemma.space_key
    other = tmp_path / "other"
    build_gemma_shaped_model(other, seed=99)
    assert LocalEmbedder(other).space_key != gemma.space_key


@needs_gemma_tokenizer
def test_pinned_when_hashes_match_manifest(gemma_dir, monkeypatch):
    d, _ = gemma_dir
    fake = dict(local_onnx.PINNED_SHA256)
    for rel in ("onnx/model_q4.onnx", "onnx/model_q4.onnx_data", "tokenizer.json"):
        fake[rel] = local_onnx.sha256_file(d / rel)
    monkeypatch.setattr(local_onnx, "PINNED_SHA256", fake)
    assert LocalEmbedder(d).pinned is True
    # The real tokenizer.json from the shared folder matches the pinned hash already.
    assert local_onnx.sha256_file(GEMMA_TOKENIZER) == local_onnx.PINNED_SHA256["tokenizer.json"]


def test_fallback_pins_agree_with_manifest():
    for rel, sha in local_onnx._FALLBACK_PINNED_SHA256.items():
        assert local_onnx.PINNED_SHA256[rel] == sha


@pytest.mark.parametrize("drop", [None, "onnx/model_q4.onnx", "onnx/model_q4.onnx_data", "tokenizer.json"])
def test_missing_files_raise_model_error_with_install_hint(tmp_path, drop):
    d = tmp_path / "m"
    if drop is None:
        d.mkdir()  # empty folder
    else:
        build_gemma_shaped_model(d, copy_tokenizer=False)
        (d / "tokenizer.json").write_text("{}")  # placeholder; only existence matters here
        (d / drop).unlink()
    with pytest.raises(ModelError) as info:
        LocalEmbedder(d)
    msg = info.value.message
    assert f"EmbeddingGemma is not installed in {d}" in msg
    assert "run `memories rag model-install`" in msg
    if drop:
        assert drop in msg
    assert info.value.code == "model_not_installed"


def test_missing_folder_raises_model_error(tmp_path):
    with pytest.raises(ModelError, match="memories rag model-install"):
        LocalEmbedder(tmp_path / "does-not-exist")


def test_unknown_profile_and_wrong_tokenizer(tmp_path):
    with pytest.raises(ModelError, match="profile"):
        LocalEmbedder(tmp_path, profile="ollama")
    # A BERT tokenizer in a Gemma folder is refused (no <bos>=2/<eos>=1).
    build_gemma_shaped_model(tmp_path, copy_tokenizer=False)
    build_wordlevel_tokenizer(tmp_path / "tokenizer.json", ["hello"])
    with pytest.raises(ModelError, match="bos"):
        LocalEmbedder(tmp_path)


def test_corrupt_graph_raises_model_error(tmp_path):
    build_gemma_shaped_model(tmp_path, copy_tokenizer=False)
    (tmp_path / "onnx" / "model_q4.onnx").write_bytes(b"not an onnx file")
    if GEMMA_TOKENIZER.is_file():
        shutil.copyfile(GEMMA_TOKENIZER, tmp_path / "tokenizer.json")
    else:
        (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(ModelError):
        LocalEmbedder(tmp_path)


def test_telemetry_disabled_before_first_session(tmp_path, monkeypatch):
    d = tmp_path / "st"
    build_st_shaped_model(d / "model.onnx")
    build_wordlevel_tokenizer(d / "tokenizer.json", ["hello", "world"])
    calls: list[str] = []
    real_disable, real_session = ort.disable_telemetry_events, ort.InferenceSession

    def disable():
        calls.append("disable")
        real_disable()

    def session(*a, **kw):
        calls.append("session")
        return real_session(*a, **kw)

    monkeypatch.setattr(local_onnx, "TELEMETRY_DISABLED", False)
    monkeypatch.setattr(ort, "disable_telemetry_events", disable)
    monkeypatch.setattr(ort, "InferenceSession", session)
    LocalEmbedder(d, profile="sentence-transformers")
    assert calls == ["disable", "session"]
    assert local_onnx.TELEMETRY_DISABLED is True
    LocalEmbedder(d, profile="sentence-transformers")
    assert calls == ["disable", "session", "session"]  # once per process


def test_session_thread_options(tmp_path, monkeypatch):
    d = tmp_path / "st"
    build_st_shaped_model(d / "model.onnx")
    build_wordlevel_tokenizer(d / "tokenizer.json", ["hello"])
    seen = {}
    real_session = ort.InferenceSession

    def session(path, sess_options=None, providers=None):
        seen["intra"] = sess_options.intra_op_num_threads
        seen["inter"] = sess_options.inter_op_num_threads
        seen["providers"] = providers
        return real_session(path, sess_options=sess_options, providers=providers)

    monkeypatch.setattr(ort, "InferenceSession", session)
    LocalEmbedder(d, profile="sentence-transformers", threads=3)
    assert seen == {"intra": 3, "inter": 1, "providers": ["CPUExecutionProvider"]}


# --- sentence-transformers profile --------------------------------------------------------


def test_st_profile_tiny_graph_mean_pooling_and_token_types(tmp_path):
    d = tmp_path / "st"
    w = build_st_shaped_model(d / "onnx" / "model.onnx")  # the onnx/ location is accepted too
    words = "the quick brown fox jumps over lazy dog bread river stone cloud".split()
    vocab = build_wordlevel_tokenizer(d / "tokenizer.json", words)
    emb = LocalEmbedder(d, profile="sentence-transformers", max_tokens=64)
    assert emb.dims == 48
    assert emb.max_tokens == 64  # no config.json: window 512, so the setting stands
    assert emb.space_key.startswith("local:sentence-transformers:48:")
    assert emb.pinned is False
    text = "the quick brown fox jumps over the lazy dog bread river"  # 11 words: > baked truncation 8
    ids = emb.document_token_ids("ignored title", text)
    assert ids == [2] + [vocab[x] for x in text.split()] + [3]  # no prefix, baked padding/truncation reset
    res = emb.embed_documents([("ignored title", text), (None, "cloud"), (None, "[SEP] stone")])
    assert res.truncated == [False, False, False]
    for row, t in enumerate([text, "cloud", "[SEP] stone"]):
        tids = np.asarray(emb.document_token_ids(None, t))
        assert list(tids).count(3) == 1  # literal "[SEP]" is not a separator
        expected = w.last_hidden_state(tids, np.zeros_like(tids)).mean(axis=0)
        np.testing.assert_allclose(res.vectors[row], _normalise(expected), atol=1e-5)
    # Batched with padding gives the same as one by one (mask-aware pooling).
    singles = np.stack([emb.embed_documents([(None, t)]).vectors[0] for t in [text, "cloud"]])
    np.testing.assert_allclose(emb.embed_documents([(None, text), (None, "cloud")]).vectors, singles, atol=1e-5)
    np.testing.assert_allclose(emb.embed_query("cloud"), singles[1], atol=1e-6)


def test_st_profile_missing_files(tmp_path):
    with pytest.raises(ModelError, match="model.onnx"):
        LocalEmbedder(tmp_path, profile="sentence-transformers")
    build_st_shaped_model(tmp_path / "model.onnx")
    with pytest.raises(ModelError, match="tokenizer.json"):
        LocalEmbedder(tmp_path, profile="sentence-transformers")


@needs_minilm
def test_minilm_semantic_ranking():
    emb = LocalEmbedder(MINILM_DIR, profile="sentence-transformers", threads=2)
    assert emb.dims == 384
    assert emb.max_tokens == 512
    docs = [
        (None, "The stock market fell sharply after the interest rate announcement."),
        (None, "Mix flour, water, yeast and salt, knead the dough and bake the loaf in a hot oven."),
        (None, "My cat sleeps on the sofa all afternoon."),
        (None, "The football team won the championship last night."),
    ]
    res = emb.embed_documents(docs)
    assert res.vectors.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(res.vectors, axis=1), 1.0, atol=1e-5)
    scores = res.vectors @ emb.embed_query("How do I bake bread?")
    assert int(np.argmax(scores)) == 1
    assert scores[1] > scores[[0, 2, 3]].max() + 0.2
    scores = res.vectors @ emb.embed_query("Which sports team won the final?")
    assert int(np.argmax(scores)) == 3
    # Order-preserving batching on the real model too.
    singles = np.stack([emb.embed_documents([d]).vectors[0] for d in docs])
    np.testing.assert_allclose(emb.embed_documents(docs, batch_size=2).vectors, singles, atol=1e-4)


@needs_minilm
def test_minilm_truncation_reported():
    emb = LocalEmbedder(MINILM_DIR, profile="sentence-transformers", max_tokens=32)
    res = emb.embed_documents([(None, "bread " * 100), (None, "bread")])
    assert res.truncated == [True, False]
    assert len(emb.document_token_ids(None, "bread " * 100)) == 32
