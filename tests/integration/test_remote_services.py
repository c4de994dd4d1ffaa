"""Remote embed / generate / rerank against real loopback HTTP servers that misbehave on cue."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from memories_tui.config import HttpSettings, RemoteService
from memories_tui.errors import CancelledError, ConfigError, ModelError, NetworkError, PolicyError
from memories_tui.models import http as nethttp
from memories_tui.models.remote import CallContext
from memories_tui.models.remote_embed import RemoteEmbedder
from memories_tui.models.remote_generate import Generator, Reranker
from tests.helpers.model_server import (
    COMPAT_CHAT,
    COMPAT_EMBED,
    GEMINI_BATCH,
    GEMINI_EMBED,
    GEMINI_GENERATE,
    RERANK,
    bag_vector,
)

KEY = "test-key-0123456789"
ENV = {"MODEL_KEY": KEY}
FAST = HttpSettings(retries=2, backoff_ms=1, connect_timeout_seconds=2, timeout_seconds=5)


@pytest.fixture
def slept(monkeypatch):
    delays: list[float] = []
    monkeypatch.setattr(nethttp, "_sleep", lambda s, cancel: delays.append(s))
    return delays


def compat(url: str, **kw) -> RemoteService:
    return RemoteService(protocol="compatible", url=url, model="m", api_key_env="MODEL_KEY", **kw)


def gemini(url: str, **kw) -> RemoteService:
    return RemoteService(protocol="gemini", url=url, model="emb", api_key_env="MODEL_KEY", **kw)


# --------------------------------------------------------------------------- embeddings


def test_compatible_embeddings_order_dims_and_bearer_only(srv):
    emb = RemoteEmbedder(compat(srv.compat_embed_url, dimensions=8, query_input_type="query",
                                document_input_type="passage"), FAST, ENV)
    result = emb.embed_documents([("T1", "alpha text"), ("T2", "貓咪很可愛")])
    assert result.vectors.shape == (2, 8)
    # the server answers in reverse order: data[].index puts them back
    assert np.allclose(result.vectors[0], bag_vector("alpha text", 8), atol=1e-6)
    assert np.allclose(np.linalg.norm(result.vectors, axis=1), 1.0)
    q = emb.embed_query("alpha")
    assert q.shape == (8,)
    doc_req, query_req = srv.requests_for(COMPAT_EMBED)
    assert doc_req.json() == {"model": "m", "input": ["alpha text", "貓咪很可愛"], "dimensions": 8, "input_type": "passage"}
    assert query_req.json()["input_type"] == "query"
    for r in (doc_req, query_req):
        assert r.headers["authorization"] == f"Bearer {KEY}"
        assert "x-goog-api-key" not in r.headers
        assert KEY.encode() not in r.body
    assert emb.space_key.startswith("remote:compatible:8:")


def test_text_prefixes_mark_queries_and_documents(srv):
    emb = RemoteEmbedder(compat(srv.compat_embed_url, query_prefix="query: ", document_prefix="passage: "), FAST, ENV)
    emb.embed_documents([(None, "doc")])
    emb.embed_query("q")
    bodies = [r.json() for r in srv.requests_for(COMPAT_EMBED)]
    assert bodies[0]["input"] == ["passage: doc"] and "input_type" not in bodies[0]
    assert bodies[1]["input"] == ["query: q"]
    assert emb.dims == 8  # learned from the first response, no probe needed
    assert len(srv.requests) == 2


def test_space_key_changes_with_model_dims_and_marking(srv):
    keys = {RemoteEmbedder(s, FAST, ENV).space_key for s in (
        compat(srv.compat_embed_url, dimensions=8),
        compat(srv.compat_embed_url, dimensions=8, query_prefix="query: "),
        RemoteService("compatible", srv.compat_embed_url, "other", "MODEL_KEY", 8),
    )}
    assert len(keys) == 3


def test_wrong_dimensions_name_both_numbers(srv):
    srv.embed_dims = 6
    emb = RemoteEmbedder(compat(srv.compat_embed_url, dimensions=8), FAST, ENV)
    with pytest.raises(ModelError) as err:
        emb.embed_documents([(None, "x")])
    assert "6-dimensional" in err.value.message and "8 dimensions" in err.value.message
    assert err.value.code == "dimension_mismatch"


def test_dimensions_checked_on_every_response(srv):
    emb = RemoteEmbedder(compat(srv.compat_embed_url), FAST, ENV)
    emb.embed_query("first")
    srv.embed_dims = 9
    with pytest.raises(ModelError, match="9-dimensional.*8 dimensions"):
        emb.embed_query("second")


@pytest.mark.parametrize("data", [
    [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 0, "embedding": [1.0, 0.0]}],  # repeated index
    [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 5, "embedding": [1.0, 0.0]}],  # out of range
    [{"index": 0, "embedding": [1.0, 0.0]}],  # too few
    [{"index": 0, "embedding": [1.0, "x"]}, {"index": 1, "embedding": [1.0, 0.0]}],  # not a number
    [{"index": 0, "embedding": [0.0, 0.0]}, {"index": 1, "embedding": [1.0, 0.0]}],  # zero vector
    [{"index": True, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0, 0.0]}],  # bool index
])
def test_bad_embedding_payloads_are_refused(srv, data):
    srv.queue_json(COMPAT_EMBED, {"data": data})
    emb = RemoteEmbedder(compat(srv.compat_embed_url), FAST, ENV)
    with pytest.raises(ModelError):
        emb.embed_documents([(None, "a"), (None, "b")])


@pytest.mark.parametrize("body", [b'{"data": [', b'{"data": [{"index": 0, "embedding": [NaN, 1]}]}',
                                  b'{"data": [], "data": []}', b'{"data": []} trailing'])
def test_malformed_json_is_refused(srv, body):
    srv.queue(COMPAT_EMBED, 200, {"Content-Type": "application/json"}, body)
    emb = RemoteEmbedder(compat(srv.compat_embed_url), FAST, ENV)
    with pytest.raises(ModelError) as err:
        emb.embed_query("x")
    assert err.value.code == "model_bad_response"


def test_gemini_single_and_batch_embeddings_with_task_types(srv):
    emb = RemoteEmbedder(gemini(srv.gemini_embed_url, dimensions=8), FAST, ENV)
    q = emb.embed_query("hello")
    docs = emb.embed_documents([("Title", "one"), (None, "two")])
    assert q.shape == (8,) and docs.vectors.shape == (2, 8)
    single = srv.requests_for(GEMINI_EMBED)[0]
    assert single.json() == {"model": "models/emb", "content": {"parts": [{"text": "hello"}]},
                             "taskType": "RETRIEVAL_QUERY", "outputDimensionality": 8}
    batch = srv.requests_for(GEMINI_BATCH)[0].json()["requests"]
    assert [r["taskType"] for r in batch] == ["RETRIEVAL_DOCUMENT"] * 2
    assert batch[0]["title"] == "Title" and "title" not in batch[1]
    for r in srv.requests:
        assert r.headers["x-goog-api-key"] == KEY and "authorization" not in r.headers


def test_gemini_wrong_count_refused(srv):
    srv.queue_json(GEMINI_BATCH, {"embeddings": [{"values": [1.0] * 8}]})
    emb = RemoteEmbedder(gemini(srv.gemini_embed_url, dimensions=8), FAST, ENV)
    with pytest.raises(ModelError, match="1 embeddings for 2 inputs"):
        emb.embed_documents([(None, "a"), (None, "b")])


def test_batches_split_by_batch_size(srv):
    emb = RemoteEmbedder(compat(srv.compat_embed_url, batch_size=2), FAST, ENV)
    out = emb.embed_documents([(None, str(i)) for i in range(5)])
    assert out.vectors.shape == (5, 8)
    assert [len(r.json()["input"]) for r in srv.requests_for(COMPAT_EMBED)] == [2, 2, 1]


# --------------------------------------------------------------------------- HTTP behaviour


def test_429_retry_after_then_success(srv, slept):
    srv.queue(COMPAT_EMBED, 429, {"Retry-After": "3"})
    emb = RemoteEmbedder(compat(srv.compat_embed_url), FAST, ENV)
    assert emb.embed_query("x").shape == (8,)
    assert slept == [3.0]


def test_503_then_success(srv, slept):
    srv.queue(COMPAT_CHAT, 503)
    gen = Generator(compat(srv.compat_chat_url), FAST, ENV)
    assert '"answer"' in gen.generate("sys", "user", CallContext())
    assert len(srv.requests_for(COMPAT_CHAT)) == 2


def test_retries_exhausted_is_a_clear_error(srv, slept):
    for _ in range(3):
        srv.queue(RERANK, 503)
    with pytest.raises(NetworkError, match="HTTP 503"):
        Reranker(compat(srv.rerank_url), FAST, ENV).rerank("q", ["a", "b"], CallContext())


def test_timeout(srv, slept):
    srv.hang.add(COMPAT_CHAT)
    gen = Generator(compat(srv.compat_chat_url), HttpSettings(retries=0, timeout_seconds=0.3), ENV)
    with pytest.raises(NetworkError, match="timed out"):
        gen.generate("s", "u", CallContext())


def test_connection_reset_is_retried(srv, slept):
    srv.reset_once.add(COMPAT_EMBED)
    emb = RemoteEmbedder(compat(srv.compat_embed_url), FAST, ENV)
    assert emb.embed_query("x").shape == (8,)
    assert len(srv.requests_for(COMPAT_EMBED)) == 2


def test_redirect_is_refused_not_followed(srv):
    srv.redirects[COMPAT_EMBED] = srv.gemini_embed_url
    with pytest.raises(NetworkError, match="redirect"):
        RemoteEmbedder(compat(srv.compat_embed_url), FAST, ENV).embed_query("x")
    assert srv.requests_for(GEMINI_EMBED) == []


def test_unauthorized_says_check_the_key_without_echoing_it(srv):
    srv.queue(COMPAT_EMBED, 401, {}, b"bad key test-key-0123456789")
    with pytest.raises(NetworkError) as err:
        RemoteEmbedder(compat(srv.compat_embed_url), FAST, ENV).embed_query("x")
    assert "API key" in err.value.message and KEY not in err.value.message


def test_missing_key_env_is_a_config_error_and_nothing_sent(srv):
    with pytest.raises(ConfigError, match="MODEL_KEY"):
        RemoteEmbedder(compat(srv.compat_embed_url), FAST, {}).embed_query("x")
    assert srv.requests == []


def test_loopback_needs_no_key(srv):
    service = RemoteService("compatible", srv.compat_embed_url, "m")
    RemoteEmbedder(service, FAST, {}).embed_query("x")
    assert "authorization" not in srv.requests[0].headers


def test_non_loopback_without_key_env_refused():
    service = RemoteService("compatible", "https://embed.example/v1/embeddings", "m")
    with pytest.raises(ConfigError, match="api_key_env is required"):
        RemoteEmbedder(service, FAST, {}).embed_query("x")


def test_device_only_refuses_non_loopback_before_anything_is_sent():
    service = compat("https://embed.example/v1/embeddings", dimensions=8)
    ctx = CallContext(device_only=True)
    with pytest.raises(PolicyError) as err:
        RemoteEmbedder(service, FAST, ENV).bind(ctx).embed_documents([(None, "secret text")])
    assert err.value.code == "device_only" and "secret" not in err.value.message
    with pytest.raises(PolicyError):
        Generator(compat("https://gen.example/v1/chat/completions"), FAST, ENV).generate("s", "u", ctx)
    with pytest.raises(PolicyError):
        Reranker(compat("https://rr.example/v1/rerank"), FAST, ENV).rerank("q", ["d"], ctx)


def test_device_only_allows_loopback(srv):
    ctx = CallContext(device_only=True)
    assert RemoteEmbedder(compat(srv.compat_embed_url), FAST, ENV).bind(ctx).embed_query("x").shape == (8,)


def test_check_callback_stops_the_call(srv):
    def locked() -> None:
        raise CancelledError("locked")

    with pytest.raises(CancelledError):
        Generator(compat(srv.compat_chat_url), FAST, ENV).generate("s", "u", CallContext(check=locked))
    assert srv.requests == []


def test_cancel_event(srv):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CancelledError):
        RemoteEmbedder(compat(srv.compat_embed_url), FAST, ENV).embed_documents([(None, "x")], cancel=cancel)


# --------------------------------------------------------------------------- generation


def test_gemini_generation_request_shape(srv):
    gen = Generator(RemoteService("gemini", srv.gemini_generate_url, "gen", "MODEL_KEY"), FAST, ENV)
    text = gen.generate("SYSTEM", "USER", CallContext())
    assert "answer" in text
    body = srv.requests_for(GEMINI_GENERATE)[0].json()
    assert body["systemInstruction"]["parts"][0]["text"] == "SYSTEM"
    assert body["contents"][0]["parts"][0]["text"] == "USER"
    config = body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseSchema"]["required"] == ["answer", "citations"]
    assert "tools" not in body
    assert srv.requests[0].headers["x-goog-api-key"] == KEY


@pytest.mark.parametrize("payload, match", [
    ({"promptFeedback": {"blockReason": "SAFETY"}}, "blockReason SAFETY"),
    ({"candidates": [{"finishReason": "SAFETY", "content": {"parts": [{"text": "{}"}]}}]}, "finishReason SAFETY"),
    # cut off by the output limit: even a reply that parses is not the whole answer
    ({"candidates": [{"finishReason": "MAX_TOKENS", "content": {"parts": [
        {"text": '{"answer": "Bake at 250 [S1]", "citations": ["S1"]}'}]}}]}, "finishReason MAX_TOKENS"),
    ({"candidates": [{"content": {"parts": []}}]}, "empty answer"),
    ({"candidates": [{"content": {"parts": [{"text": 5}]}}]}, "wrong type"),
])
def test_gemini_generation_refusals(srv, payload, match):
    srv.queue_json(GEMINI_GENERATE, payload)
    gen = Generator(RemoteService("gemini", srv.gemini_generate_url, "gen", "MODEL_KEY"), FAST, ENV)
    with pytest.raises(ModelError, match=match):
        gen.generate("s", "u", CallContext())


def test_gemini_answer_in_several_parts_is_joined(srv):
    parts = ['{"answer": "Bake at 2', '50 °C for 40 minutes [S1]", ', '"citations": ["S1"]}']
    srv.queue_json(GEMINI_GENERATE, {"candidates": [{"finishReason": "STOP",
                                                     "content": {"role": "model", "parts": [{"text": p} for p in parts]}}]})
    gen = Generator(RemoteService("gemini", srv.gemini_generate_url, "gen", "MODEL_KEY"), FAST, ENV)
    assert gen.generate("s", "u", CallContext()) == "".join(parts)


def test_api_keys_travel_only_in_their_header_never_in_a_url_or_body(srv):
    """The raw request target is recorded as sent: a `?key=` (Gemini's other way) would show there."""
    gemini_gen = RemoteService("gemini", srv.gemini_generate_url, "gen", "MODEL_KEY")
    emb = RemoteEmbedder(gemini(srv.gemini_embed_url, dimensions=8), FAST, ENV)
    emb.embed_query("hello")
    emb.embed_documents([("Title", "one"), (None, "two")])
    Generator(gemini_gen, FAST, ENV).generate("s", "u", CallContext())
    RemoteEmbedder(compat(srv.compat_embed_url), FAST, ENV).embed_query("hello")
    Generator(compat(srv.compat_chat_url), FAST, ENV).generate("s", "u", CallContext())
    Reranker(compat(srv.rerank_url), FAST, ENV).rerank("q", ["a", "b"], CallContext())
    assert len(srv.requests) == 6
    for r in srv.requests:
        assert r.target == "/" + r.path  # no query string at all
        assert KEY not in r.target and KEY.encode() not in r.body
        sent = r.headers["x-goog-api-key"] if r.path.startswith("v1beta/") else r.headers["authorization"]
        assert sent in (KEY, f"Bearer {KEY}")


def test_compatible_chat_request_shape_and_errors(srv):
    gen = Generator(compat(srv.compat_chat_url), FAST, ENV)
    gen.generate("SYS", "USR", CallContext())
    body = srv.requests_for(COMPAT_CHAT)[0].json()
    assert body["messages"] == [{"role": "system", "content": "SYS"}, {"role": "user", "content": "USR"}]
    assert body["response_format"] == {"type": "json_object"} and "tools" not in body
    srv.queue_json(COMPAT_CHAT, {"choices": []})
    with pytest.raises(ModelError, match="no choices"):
        gen.generate("s", "u", CallContext())
    srv.queue_json(COMPAT_CHAT, {"choices": [{"finish_reason": "length", "message": {"content": "{"}}]})
    with pytest.raises(ModelError, match="output tokens"):
        gen.generate("s", "u", CallContext())


# --------------------------------------------------------------------------- rerank


def test_rerank_request_and_order(srv):
    rr = Reranker(compat(srv.rerank_url), FAST, ENV)
    scores = rr.rerank("abc", ["xyz", "abc", "ab"], CallContext(), top_n=2)
    assert [s.index for s in scores] == [1, 2]
    assert srv.requests[0].json() == {"model": "m", "query": "abc", "documents": ["xyz", "abc", "ab"], "top_n": 2}


@pytest.mark.parametrize("results", [
    [{"index": 0, "relevance_score": 0.5}, {"index": 0, "relevance_score": 0.4}],
    [{"index": 3, "relevance_score": 0.5}],
    [{"index": -1, "relevance_score": 0.5}],
    [{"index": 0}],
    [{"index": 0, "relevance_score": "high"}],
    [{"index": 0.0, "relevance_score": 0.5}],
    [],
])
def test_rerank_bad_results_fail_the_request(srv, results):
    srv.rerank = lambda q, docs, n: results
    with pytest.raises(ModelError):
        Reranker(compat(srv.rerank_url), FAST, ENV).rerank("q", ["a", "b", "c"], CallContext())


def test_rerank_nan_score_refused(srv):
    srv.queue(RERANK, 200, {}, b'{"results": [{"index": 0, "relevance_score": NaN}]}')
    with pytest.raises(ModelError, match="non-finite"):
        Reranker(compat(srv.rerank_url), FAST, ENV).rerank("q", ["a"], CallContext())


@pytest.mark.parametrize("score", ["1" + "0" * 400, "-" + "9" * 400])
def test_rerank_score_beyond_float_range_refused(srv, score):
    """Valid JSON whose integer no float can hold: the reranker's own finiteness check refuses it
    (strict JSON lets integers through; NaN and 1e999 never get this far)."""
    srv.queue(RERANK, 200, {}, b'{"results": [{"index": 1, "relevance_score": %s}, '
                               b'{"index": 0, "relevance_score": 0.5}]}' % score.encode())
    with pytest.raises(ModelError, match=r"results\[0\].relevance_score is not finite") as err:
        Reranker(compat(srv.rerank_url), FAST, ENV).rerank("q", ["a", "b"], CallContext())
    assert err.value.code == "model_bad_response"


def test_service_rerank_reorders_and_relabels(srv):
    from types import SimpleNamespace

    from memories_tui.retrieval.service_rerank import rerank_with_service

    hits = [SimpleNamespace(citation=f"S{i + 1}", text=t, score=1.0 - i / 10, scores={})
            for i, t in enumerate(["zzz", "abc abc", "ab"])]
    resp = SimpleNamespace(query="abc", results=hits)
    srv.rerank = lambda q, docs, n: [{"index": 1, "relevance_score": 0.9}, {"index": 2, "relevance_score": 0.5}]
    rerank_with_service(resp, Reranker(compat(srv.rerank_url), FAST, ENV), CallContext(), limit=3)
    assert [h.text for h in resp.results] == ["abc abc", "ab", "zzz"]
    assert [h.citation for h in resp.results] == ["S1", "S2", "S3"]
    assert resp.results[0].scores["service"] == 0.9 and resp.results[2].scores["service"] is None
    srv.rerank = lambda q, docs, n: [{"index": 7, "relevance_score": 0.9}]
    with pytest.raises(ModelError):
        rerank_with_service(resp, Reranker(compat(srv.rerank_url), FAST, ENV), CallContext(), limit=3)


def test_views_share_learned_dimensions(srv):
    base = RemoteEmbedder(compat(srv.compat_embed_url), FAST, ENV)
    base.bind(CallContext()).embed_query("x")
    assert base.dims == 8 and len(srv.requests) == 1  # no probe: the view's response fixed it
    assert base.bind(CallContext()).space_key == base.space_key
