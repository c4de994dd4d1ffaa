"""Remote generation (Gemini ``generateContent`` with a JSON response schema; compatible chat
completions) and the learned rerank service.

Generation returns the model's raw text; :mod:`answer.citations` parses it strictly. The
request carries no tools. A rerank response is used only if every item has a unique,
in-range ``index`` and a finite ``relevance_score``: anything else fails the request rather
than reorder results silently.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..config import HttpSettings, RemoteService
from ..errors import ErrorCode, ModelError
from ..i18n import msg
from .remote import CallContext, ServiceClient, bad_response, field

# The shape `rag ask` asks for (Gemini responseSchema, an OpenAPI subset).
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "OBJECT",
    "properties": {
        "answer": {"type": "STRING"},
        "citations": {"type": "ARRAY", "items": {"type": "STRING"}},
        "quotes": {
            "type": "ARRAY",
            "items": {"type": "OBJECT", "properties": {"source": {"type": "STRING"}, "text": {"type": "STRING"}},
                      "required": ["source", "text"]},
        },
    },
    "required": ["answer", "citations"],
}
_GEMINI_OK_FINISH = {None, "STOP", "FINISH_REASON_UNSPECIFIED"}


class Generator:
    """Sends one system + user message and returns the model's text."""

    def __init__(self, service: RemoteService, http: HttpSettings, environ: Mapping[str, str] | None = None) -> None:
        self.service = service
        self.client = ServiceClient(service, http, "generation", environ)

    def generate(self, system: str, user: str, ctx: CallContext) -> str:
        if self.service.protocol == "gemini":
            return self._gemini(system, user, ctx)
        return self._compatible(system, user, ctx)

    def _gemini(self, system: str, user: str, ctx: CallContext) -> str:
        payload = {
            "systemInstruction": {"parts": [{"text": system}]},
            "contents": [{"role": "user", "parts": [{"text": user}]}],
            "generationConfig": {"temperature": 0, "responseMimeType": "application/json",
                                 "responseSchema": ANSWER_SCHEMA},
        }
        reply = self.client.post_json(payload, ctx)
        candidates = reply.get("candidates") if isinstance(reply, dict) else None
        if not candidates:
            feedback = reply.get("promptFeedback") if isinstance(reply, dict) else None
            reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
            if isinstance(reason, str):
                raise ModelError(msg("{what} refused the prompt (blockReason {block_reason}).",
                                     what=self.client.what, block_reason=reason[:40]),
                                 code=ErrorCode.MODEL_REFUSED)
            raise bad_response(self.client, "no candidates")
        first = candidates[0] if isinstance(candidates, list) else None
        finish = first.get("finishReason") if isinstance(first, dict) else None
        if finish not in _GEMINI_OK_FINISH:
            raise ModelError(msg("{what} stopped early (finishReason {finish_reason}); no answer used.",
                                 what=self.client.what, finish_reason=str(finish)[:40]),
                             code=ErrorCode.MODEL_REFUSED)
        content = field(first, "content", dict, self.client, "candidates[0]")
        parts = field(content, "parts", list, self.client, "candidates[0].content")
        texts = [field(p, "text", str, self.client, f"candidates[0].content.parts[{i}]") for i, p in enumerate(parts)]
        if not texts:
            raise bad_response(self.client, "an empty answer")
        return "".join(texts)

    def _compatible(self, system: str, user: str, ctx: CallContext) -> str:
        payload: dict[str, Any] = {
            "model": self.service.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0,
        }
        if self.service.json_mode:
            payload["response_format"] = {"type": "json_object"}
        reply = self.client.post_json(payload, ctx)
        choices = field(reply, "choices", list, self.client, "the response")
        if not choices:
            raise bad_response(self.client, "no choices")
        first = choices[0]
        if isinstance(first, dict) and first.get("finish_reason") == "length":
            raise ModelError(msg("{what} ran out of output tokens; no answer used.", what=self.client.what), code=ErrorCode.MODEL_REFUSED)
        message = field(first, "message", dict, self.client, "choices[0]")
        return field(message, "content", str, self.client, "choices[0].message")


@dataclass(frozen=True)
class RerankScore:
    index: int
    relevance_score: float


class Reranker:
    """The learned rerank service: `{model, query, documents, top_n}` → validated scores."""

    def __init__(self, service: RemoteService, http: HttpSettings, environ: Mapping[str, str] | None = None) -> None:
        self.service = service
        self.client = ServiceClient(service, http, "rerank", environ)

    def rerank(self, query: str, documents: list[str], ctx: CallContext, top_n: int | None = None) -> list[RerankScore]:
        """Scores best first; every returned index is unique and < len(documents)."""
        if not documents:
            return []
        top_n = len(documents) if top_n is None else max(1, min(top_n, len(documents)))
        payload = {"model": self.service.model, "query": query, "documents": documents, "top_n": top_n}
        reply = self.client.post_json(payload, ctx)
        results = field(reply, "results", list, self.client, "the response")
        if not results or len(results) > len(documents):
            raise bad_response(self.client, f"{len(results)} results for {len(documents)} documents")
        seen: set[int] = set()
        scores: list[RerankScore] = []
        for i, item in enumerate(results):
            index = field(item, "index", int, self.client, f"results[{i}]")
            if not 0 <= index < len(documents):
                raise bad_response(self.client, f"results[{i}].index {index} is out of range 0..{len(documents) - 1}")
            if index in seen:
                raise bad_response(self.client, f"results[{i}].index {index} is repeated")
            seen.add(index)
            score = field(item, "relevance_score", (int, float), self.client, f"results[{i}]")
            try:
                value = float(score)
            except OverflowError:  # a JSON integer beyond any float: as unusable as NaN
                value = math.inf
            if not math.isfinite(value):
                raise bad_response(self.client, f"results[{i}].relevance_score is not finite")
            scores.append(RerankScore(index, value))
        scores.sort(key=lambda s: -s.relevance_score)
        return scores
