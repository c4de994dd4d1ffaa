"""Remote embeddings: Gemini ``embedContent``/``batchEmbedContents`` and OpenAI-compatible
``{model, input, dimensions}``.

:class:`RemoteEmbedder` has the local embedder's shape (``dims``, ``space_key``,
``embed_documents``, ``embed_query``), so ``rag index``, vector/hybrid search and background
embedding use it unchanged, with the same encrypted cache. Every response is checked: one
finite vector per input, in range indexes, exactly the expected dimensions (a mismatch names
both numbers). Vectors are L2-normalised here, as the local ones are.

Asymmetric models see which side a text is on: ``query_input_type`` / ``document_input_type``
go on the wire (compatible ``input_type``; Gemini ``taskType``, RETRIEVAL_QUERY /
RETRIEVAL_DOCUMENT by default) and ``query_prefix`` / ``document_prefix`` go before the text.
When ``dimensions`` is not configured, the first response fixes it (a constant probe text is
sent the first time ``dims`` is needed); every later response must agree.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config import HttpSettings, RemoteService
from ..egress import SentChunk
from ..errors import CancelledError, ErrorCode, ModelError
from ..i18n import msg
from .remote import CallContext, ServiceClient, bad_response, field, refuse_if_device_only, with_context

GEMINI_QUERY_TASK = "RETRIEVAL_QUERY"
GEMINI_DOCUMENT_TASK = "RETRIEVAL_DOCUMENT"
PROBE_TEXT = "dimension probe"


@dataclass
class _Learned:
    """What every view of one embedder shares: the dimensions, once known."""

    dims: int | None
    lock: threading.Lock


@dataclass(frozen=True)
class RemoteEmbedResult:
    vectors: np.ndarray  # float32 (n, dims), L2-normalised, in input order
    truncated: list[bool]  # remote services do not say; always False
    tokens: int  # characters sent (the service's token count is not reported)


class RemoteEmbedder:
    """Embeds through a configured service. Thread-safe; `bind` makes a per-vault view."""

    max_tokens = 0
    pinned = False

    def __init__(self, service: RemoteService, http: HttpSettings, environ: Mapping[str, str] | None = None,
                 ctx: CallContext | None = None) -> None:
        self.service = service
        self.client = ServiceClient(service, http, "embedding", environ)
        self.ctx = ctx or CallContext()
        self._learned = _Learned(service.dimensions, threading.Lock())

    def bind(self, ctx: CallContext) -> RemoteEmbedder:
        """The same embedder calling with `ctx` (device-only policy, lock check, cancel)."""
        view = RemoteEmbedder.__new__(RemoteEmbedder)
        view.service, view.client, view.ctx, view._learned = self.service, self.client, ctx, self._learned
        return view

    # --- identity ----------------------------------------------------------------------

    @property
    def dims(self) -> int:
        if self._learned.dims is None:
            self._embed([PROBE_TEXT], query=True, ctx=self.ctx)
        assert self._learned.dims is not None
        return self._learned.dims

    @property
    def space_key(self) -> str:
        """protocol + url + model + dims (+ how queries and documents are marked): a change to any
        of them is another vector space, never mixed with the old one."""
        s = self.service
        material = json.dumps({"protocol": s.protocol, "url": s.url, "model": s.model, "dims": self.dims,
                               "query_input_type": s.query_input_type, "document_input_type": s.document_input_type,
                               "query_prefix": s.query_prefix, "document_prefix": s.document_prefix},
                              sort_keys=True, ensure_ascii=False).encode("utf-8")
        return f"remote:{s.protocol}:{self.dims}:{hashlib.sha256(material).hexdigest()[:24]}"

    def describe(self) -> str:
        return f"{self.service.protocol} {self.service.model} at {self.client.what.split('(')[-1].rstrip(')')}"

    def check_policy(self) -> None:
        """Raise PolicyError now if this view's vault may not send data to the service."""
        refuse_if_device_only(self.service.url, self.ctx.device_only, "embedding")

    def unknown_share(self, text: str) -> float:
        return 0.0  # remote models are assumed to read any script

    # --- public embedding API ------------------------------------------------------------

    def embed_documents(self, items: Sequence[tuple[str | None, str]], batch_size: int = 16,
                        cancel: threading.Event | None = None) -> RemoteEmbedResult:
        texts = [text for _title, text in items]
        titles = [title for title, _text in items]
        ctx = with_context(self.ctx, cancel=cancel or self.ctx.cancel)
        vectors = self._embed(texts, query=False, ctx=ctx, titles=titles)
        return RemoteEmbedResult(vectors, [False] * len(texts), sum(len(t) for t in texts))

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], query=True, ctx=self.ctx)[0]

    # --- wire ------------------------------------------------------------------------------

    def _embed(self, texts: list[str], *, query: bool, ctx: CallContext,
               titles: Sequence[str | None] | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._learned.dims or 0), dtype=np.float32)
        s = self.service
        prefix = s.query_prefix if query else s.document_prefix
        wire = [prefix + t for t in texts]
        out: list[np.ndarray] = []
        step = max(1, s.batch_size)
        for start in range(0, len(wire), step):
            if ctx.cancel is not None and ctx.cancel.is_set():
                raise CancelledError(msg("Embedding was cancelled."))
            batch = wire[start:start + step]
            batch_titles: list[str | None] = (list(titles[start:start + step]) if titles is not None
                                              else [None] * len(batch))
            batch_ctx = with_context(ctx, purpose="query-embedding") if query else with_context(
                ctx, purpose="embedding", sends=tuple(SentChunk(None, None, hashlib.sha256(t.encode()).hexdigest())
                                                      for t in texts[start:start + step]))
            if s.protocol == "gemini":
                rows = self._gemini(batch, batch_titles, query, batch_ctx)
            else:
                rows = self._compatible(batch, query, batch_ctx)
            out.append(self._checked(rows, len(batch)))
        return np.concatenate(out, axis=0)

    def _compatible(self, batch: list[str], query: bool, ctx: CallContext) -> list[Any]:
        s = self.service
        payload: dict[str, Any] = {"model": s.model, "input": batch}
        if s.dimensions is not None:
            payload["dimensions"] = s.dimensions
        input_type = s.query_input_type if query else s.document_input_type
        if input_type is not None:
            payload["input_type"] = input_type
        reply = self.client.post_json(payload, ctx)
        data = field(reply, "data", list, self.client, "the response")
        if len(data) != len(batch):
            raise bad_response(self.client, f"{len(data)} embeddings for {len(batch)} inputs")
        rows: list[Any] = [None] * len(batch)
        for i, item in enumerate(data):
            index = field(item, "index", int, self.client, f"data[{i}]")
            if not 0 <= index < len(batch) or rows[index] is not None:
                raise bad_response(self.client, f"data[{i}].index {index} is out of range or repeated")
            rows[index] = field(item, "embedding", list, self.client, f"data[{i}]")
        return rows

    def _gemini_request(self, text: str, title: str | None, query: bool) -> dict[str, Any]:
        s = self.service
        model = s.model if s.model.startswith("models/") else f"models/{s.model}"
        task = (s.query_input_type or GEMINI_QUERY_TASK) if query else (s.document_input_type or GEMINI_DOCUMENT_TASK)
        req: dict[str, Any] = {"model": model, "content": {"parts": [{"text": text}]}, "taskType": task}
        if title and task == GEMINI_DOCUMENT_TASK:
            req["title"] = title
        if s.dimensions is not None:
            req["outputDimensionality"] = s.dimensions
        return req

    def _gemini(self, batch: list[str], titles: list[str | None], query: bool, ctx: CallContext) -> list[Any]:
        url = self.service.url
        requests = [self._gemini_request(t, title, query) for t, title in zip(batch, titles, strict=True)]
        if url.endswith(":embedContent") and len(batch) == 1:
            reply = self.client.post_json(requests[0], ctx)
            embedding = field(reply, "embedding", dict, self.client, "the response")
            return [field(embedding, "values", list, self.client, "embedding")]
        batch_url = url[: -len(":embedContent")] + ":batchEmbedContents" if url.endswith(":embedContent") else url
        reply = self.client.post_json({"requests": requests}, ctx, url=batch_url)
        embeddings = field(reply, "embeddings", list, self.client, "the response")
        if len(embeddings) != len(batch):
            raise bad_response(self.client, f"{len(embeddings)} embeddings for {len(batch)} inputs")
        return [field(e, "values", list, self.client, f"embeddings[{i}]") for i, e in enumerate(embeddings)]

    def _checked(self, rows: list[Any], count: int) -> np.ndarray:
        """Finite numbers, the expected dimensions, non-zero; L2-normalised float32."""
        with self._learned.lock:
            expected = self._learned.dims
            for i, row in enumerate(rows):
                if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in row):
                    raise bad_response(self.client, f"embedding {i} holds a value that is not a finite number")
                if expected is None:
                    expected = len(row)
                if len(row) != expected:
                    configured = "configured" if self.service.dimensions is not None else "expected"
                    raise ModelError(
                        msg("{what} returned {count}-dimensional embeddings; {expected} dimensions are "
                            "{configured} (rag.embedding.dimensions). Set dimensions to what the model gives, "
                            "then run rag index again.",
                            what=self.client.what, count=len(row), expected=expected, configured=configured), code=ErrorCode.DIMENSION_MISMATCH)
            if expected is None or expected == 0:
                raise bad_response(self.client, "empty embeddings")
            self._learned.dims = expected
        matrix = np.asarray(rows, dtype=np.float64).reshape(count, expected)
        with np.errstate(over="ignore"):  # a length past float64's range is refused just below
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        for i, norm in enumerate(norms[:, 0]):
            if not 0 < norm < math.inf:
                shape = "all zero" if norm == 0 else "so large its length overflows"
                raise bad_response(self.client, f"embedding {i} cannot be normalised (it is {shape})")
        return (matrix / norms).astype(np.float32)

    def __repr__(self) -> str:
        return f"RemoteEmbedder({self.service.protocol!r}, model={self.service.model!r}, dims={self._learned.dims})"
