"""A loopback HTTP server that speaks the model APIs and misbehaves on cue.

    with ModelServer() as srv:
        srv.compat_embed_url, srv.gemini_embed_url, srv.compat_chat_url, srv.gemini_generate_url,
        srv.rerank_url
        srv.queue("v1/embeddings", 429, {"Retry-After": "1"})   # canned replies first (FIFO)
        srv.reset_once.add("v1/rerank")        # close the connection without answering (once)
        srv.hang.add("v1/chat/completions")   # never answer (until the server stops)
        srv.custom["v1/chat/completions"] = writer   # writer(handler) writes its own raw reply
                                                     # (tests/helpers/misbehaving.py has some)
        srv.redirects["v1/embeddings"] = "http://127.0.0.1:1/x"
        srv.embed_dims = 8                     # vectors returned (wrong_dims: set it to something else)
        srv.vector = lambda text, dims: [1e308] * dims   # what each embedding holds (default bag_vector)
        srv.chat = lambda system, user: '{"answer": "...", "citations": ["S1"]}'   # the "model"
        srv.rerank = lambda query, docs, top_n: [{"index": 0, "relevance_score": 1.0}]
        srv.generation_toml()                  # a [rag.generation] section that answers with srv.chat
        asked, release = srv.hold_chat()       # the model waits: `asked` is set when a request reaches
                                               # it, and it answers once the test sets `release`
        srv.requests_for("v1/embeddings")      # every request: path, headers (lower-case), body and
                                               # the raw request target (query string included)

Embeddings are deterministic bags of hashed characters (similar texts → similar vectors).
The default chat "model" answers from the first source and, like a naive model, obeys a
source that says "cite S7" (tests prove such an answer is rejected).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from .loopback import Canned, LoopbackServer, Seen

COMPAT_EMBED = "v1/embeddings"
COMPAT_CHAT = "v1/chat/completions"
RERANK = "v1/rerank"
GEMINI_EMBED = "v1beta/models/emb:embedContent"
GEMINI_BATCH = "v1beta/models/emb:batchEmbedContents"
GEMINI_GENERATE = "v1beta/models/gen:generateContent"

HELD_SECONDS = 120  # a held model answers when the test releases it; this only guards a hang
_SOURCE = re.compile(r'<source id="(S\d+)" title="[^"]*">\n(.*?)\n</source>', re.S)


def generation_toml(url: str, **extra: str) -> str:
    """A `[rag.generation]` section for an OpenAI-compatible chat at `url` (model "m"), `extra` keys added."""
    keys = {"protocol": "compatible", "url": url, "model": "m", **extra}
    return "[rag.generation]\n" + "".join(f'{key} = "{value}"\n' for key, value in keys.items())


def bag_vector(text: str, dims: int) -> list[float]:
    vec = [0.0] * dims
    for ch in text:
        h = int.from_bytes(hashlib.sha256(ch.encode()).digest()[:4], "big")
        vec[h % dims] += 1.0 if h & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def sources_in(user: str) -> dict[str, str]:
    """The source blocks of a prompt, unescaped: label → text."""
    out = {}
    for label, text in _SOURCE.findall(user):
        out[label] = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return out


def naive_model(system: str, user: str) -> str:
    """Answers from S1 with a verbatim quote; obeys "cite S7" inside a source (as a naive model would)."""
    sources = sources_in(user)
    if any("cite S7" in text for text in sources.values()):
        return json.dumps({"answer": "As instructed [S7].", "citations": ["S7"]})
    if not sources:
        return json.dumps({"answer": "The sources do not say.", "citations": []})
    first = sources["S1"]
    return json.dumps({"answer": f"{first[:40]} [S1]", "citations": ["S1"],
                       "quotes": [{"source": "S1", "text": first[:20]}]}, ensure_ascii=False)


def overlap_rerank(query: str, docs: list[str], top_n: int) -> list[dict[str, Any]]:
    scores = [len(set(query) & set(d)) / (1 + len(set(query))) for d in docs]
    order = sorted(range(len(docs)), key=lambda i: -scores[i])[:top_n]
    return [{"index": i, "relevance_score": scores[i]} for i in order]


class ModelServer(LoopbackServer):
    def __init__(self) -> None:
        super().__init__()
        self.reset_once: set[str] = set()
        self.custom: dict[str, Callable[[BaseHTTPRequestHandler], None]] = {}
        self.embed_dims = 8
        self.vector: Callable[[str, int], list[float]] = bag_vector
        self.chat: Callable[[str, str], str] = naive_model
        self.rerank: Callable[[str, list[str], int], list[dict[str, Any]]] = overlap_rerank

    # ---- control

    @property
    def base(self) -> str:
        return self.url

    compat_embed_url = property(lambda self: f"{self.base}/{COMPAT_EMBED}")
    compat_chat_url = property(lambda self: f"{self.base}/{COMPAT_CHAT}")
    rerank_url = property(lambda self: f"{self.base}/{RERANK}")
    gemini_embed_url = property(lambda self: f"{self.base}/{GEMINI_EMBED}")
    gemini_batch_url = property(lambda self: f"{self.base}/{GEMINI_BATCH}")
    gemini_generate_url = property(lambda self: f"{self.base}/{GEMINI_GENERATE}")

    def hold_chat(self, then: Callable[[str, str], str] = naive_model) -> tuple[threading.Event, threading.Event]:
        """Make the chat model wait, so a test can act while a call is in flight: (asked, release)."""
        asked, release = threading.Event(), threading.Event()

        def held(system: str, user: str) -> str:
            asked.set()
            release.wait(HELD_SECONDS)
            return then(system, user)

        self.chat = held
        return asked, release

    def generation_toml(self, **extra: str) -> str:
        """A `[rag.generation]` section whose model is this server's OpenAI-compatible chat."""
        return generation_toml(self.compat_chat_url, **extra)

    def queue_json(self, path: str, payload: Any, status: int = 200) -> None:
        self.queue(path, status, {"Content-Type": "application/json"}, json.dumps(payload))

    def all_bodies(self) -> bytes:
        with self._lock:
            return b"\n".join(r.body for r in self.requests)

    # ---- serving

    def respond(self, h: BaseHTTPRequestHandler, seen: Seen, reply: Canned | None) -> None:
        path = seen.path
        with self._lock:
            reset = path in self.reset_once
            self.reset_once.discard(path)
        if path in self.custom:
            h.close_connection = True
            self.custom[path](h)
            return
        if reset:
            h.close_connection = True
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            h.connection.close()
            return
        handler = {COMPAT_EMBED: self._compat_embed, GEMINI_EMBED: self._gemini_embed, GEMINI_BATCH: self._gemini_batch,
                   COMPAT_CHAT: self._compat_chat, GEMINI_GENERATE: self._gemini_generate,
                   RERANK: self._rerank}.get(path)
        if reply is not None or path in self.redirects or handler is None or seen.method != "POST":
            super().respond(h, seen, reply)
            return
        payload = handler(json.loads(seen.body))
        self.send(h, 200, {"Content-Type": "application/json"}, json.dumps(payload, ensure_ascii=False).encode())

    def _compat_embed(self, req: dict[str, Any]) -> dict[str, Any]:
        inputs = req["input"] if isinstance(req["input"], list) else [req["input"]]
        return {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": self.vector(t, self.embed_dims)}
                                           for i, t in reversed(list(enumerate(inputs)))]}

    def _gemini_embed(self, req: dict[str, Any]) -> dict[str, Any]:
        return {"embedding": {"values": self.vector(req["content"]["parts"][0]["text"], self.embed_dims)}}

    def _gemini_batch(self, req: dict[str, Any]) -> dict[str, Any]:
        return {"embeddings": [self._gemini_embed(r)["embedding"] for r in req["requests"]]}

    def _compat_chat(self, req: dict[str, Any]) -> dict[str, Any]:
        msgs = {m["role"]: m["content"] for m in req["messages"]}
        content = self.chat(msgs.get("system", ""), msgs.get("user", ""))
        return {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]}

    def _gemini_generate(self, req: dict[str, Any]) -> dict[str, Any]:
        system = req["systemInstruction"]["parts"][0]["text"]
        user = req["contents"][0]["parts"][0]["text"]
        return {"candidates": [{"finishReason": "STOP",
                                "content": {"role": "model", "parts": [{"text": self.chat(system, user)}]}}]}

    def _rerank(self, req: dict[str, Any]) -> dict[str, Any]:
        return {"results": self.rerank(req["query"], req["documents"], req["top_n"])}
