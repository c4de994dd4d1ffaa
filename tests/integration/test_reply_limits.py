"""Model replies are capped while they arrive, raw and decompressed.

Real loopback servers send more than the cap; the cap is lowered to 1 MiB through the module
constant so the tests stay small. What is checked is what the *server* managed to send (the
client must stop reading and hang up long before the reply is out) and, for gzip, that the
client never inflated past the cap (the bomb's tail is damaged: touching it would be a
different error). No timing and no memory measurement: `bench/bench_reply_caps.py` measures
peak RSS.
"""

from __future__ import annotations

import gzip
import json

import pytest

from memories_tui.config import HttpSettings, RemoteService
from memories_tui.errors import ModelError
from memories_tui.models import remote
from memories_tui.models.remote import CallContext
from memories_tui.models.remote_embed import RemoteEmbedder
from memories_tui.models.remote_generate import Generator
from tests.helpers.misbehaving import MiB, Sent, big_body, gzip_bomb, gzip_of, gzip_stored
from tests.helpers.model_server import COMPAT_CHAT, COMPAT_EMBED, ModelServer

CAP = 1 * MiB
HTTP = HttpSettings(retries=0, connect_timeout_seconds=5, timeout_seconds=30)
# Far more than the cap plus every socket buffer between the two ends (this kernel's receive
# buffer may grow to 32 MiB): a client that reads it all lets the whole reply out.
OFFERED = 256 * MiB


@pytest.fixture
def srv(monkeypatch):
    monkeypatch.setattr(remote, "MAX_RESPONSE_BYTES", CAP)
    with ModelServer() as s:
        yield s


def _generator(srv: ModelServer) -> Generator:
    return Generator(RemoteService(protocol="compatible", url=srv.compat_chat_url, model="m"), HTTP)


def _ask(srv: ModelServer) -> ModelError:
    with pytest.raises(ModelError) as info:
        _generator(srv).generate("system", "user", CallContext())
    return info.value


@pytest.mark.parametrize("declare_length", [False, True], ids=["streamed", "content-length"])
def test_generation_reply_over_the_cap_is_refused_while_it_arrives(srv, declare_length):
    record = Sent()
    srv.custom[COMPAT_CHAT] = big_body(OFFERED, record, declare_length=declare_length)
    error = _ask(srv)
    assert record.ended.wait(60), "the server never saw the client leave"
    assert not record.finished and record.sent < OFFERED // 2, f"the client read {record.sent:,} bytes"
    assert "1 MiB" in error.message and error.code == "model_bad_response"
    if declare_length:  # refused from the announced length, before reading the body
        assert "announced" in error.message


def test_embedding_reply_over_the_cap_is_refused_while_it_arrives(srv):
    record = Sent()
    srv.custom[COMPAT_EMBED] = big_body(OFFERED, record, declare_length=False)
    embedder = RemoteEmbedder(RemoteService(protocol="compatible", url=srv.compat_embed_url, model="m",
                                            dimensions=8), HTTP)
    with pytest.raises(ModelError, match="1 MiB"):
        embedder.embed_query("hello")
    assert record.ended.wait(60)
    assert not record.finished and record.sent < OFFERED // 2


def test_gzip_bomb_is_refused_before_it_is_inflated(srv):
    """2 MiB of zeros in ~2 KB of gzip, then damaged bytes: a client that inflates past the
    1 MiB cap reaches the damage and fails differently (or, unbounded, would hold it all)."""
    record = Sent()
    srv.custom[COMPAT_CHAT] = gzip_bomb(2 * MiB, record, damaged_after=True)
    error = _ask(srv)
    assert "1 MiB once decompressed" in error.message
    assert record.ended.wait(60)


def test_big_gzip_bomb_is_refused_and_a_sound_small_gzip_reply_is_read(srv):
    record = Sent()
    srv.custom[COMPAT_CHAT] = gzip_bomb(1024 * MiB, record)  # ~1 MB on the wire, 1 GiB inflated
    assert "once decompressed" in _ask(srv).message
    assert record.ended.wait(60)
    # gzip itself is welcome: a normal reply compressed by the server is used as sent
    srv.custom.clear()
    answer = '{"answer": "fine", "citations": []}'
    reply = ('{"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": '
             + json.dumps(answer) + '}}]}').encode()
    srv.custom[COMPAT_CHAT] = gzip_of(reply, Sent())
    assert _generator(srv).generate("system", "user", CallContext()) == answer
    assert srv.requests_for(COMPAT_CHAT)[-1].headers["accept-encoding"] == "gzip"


def test_compressed_bytes_are_capped_too(srv):
    """Stored (uncompressed) gzip blocks are bigger on the wire than inflated: the raw count
    passes the cap first, and the client hangs up long before the reply is out."""
    record = Sent()
    srv.custom[COMPAT_CHAT] = gzip_stored(OFFERED, record)
    error = _ask(srv)
    assert "larger than 1 MiB" in error.message and "decompressed" not in error.message
    assert record.ended.wait(60)
    assert not record.finished and record.sent < OFFERED // 2


def test_other_encodings_are_refused_not_decoded(srv):
    srv.queue(COMPAT_CHAT, 200, {"Content-Encoding": "br"}, b"\x00" * 100)
    assert "br-encoded" in _ask(srv).message


def test_truncated_and_damaged_gzip_are_clear_errors(srv):
    srv.queue(COMPAT_CHAT, 200, {"Content-Encoding": "gzip"}, gzip.compress(b"{}")[:10] + b"\xff" * 20)
    assert "damaged gzip" in _ask(srv).message
    whole = gzip.compress(b'{"choices": []}')
    srv.queue(COMPAT_CHAT, 200, {"Content-Encoding": "gzip"}, whole[: len(whole) // 2])
    assert "ends early" in _ask(srv).message

