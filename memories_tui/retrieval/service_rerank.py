"""The learned rerank service stage, after the lightweight heuristic.

The service scores the candidate chunks' text; hits it ranks come first in its order (its
`relevance_score` becomes the hit's score and `scores["service"]`), hits it left out keep
their order after them, and citation labels are renumbered for the new order. A response
that breaks the contract fails the request (`Reranker` raises): never a silent reorder.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # httpx loads only when a rerank service is configured
    from ..models.remote import CallContext
    from ..models.remote_generate import Reranker

MAX_CANDIDATES = 50


def candidate_depth(limit: int) -> int:
    """How many results to fetch for the service to rerank before cutting to `limit`."""
    return max(limit, min(MAX_CANDIDATES, limit * 3))


def rerank_with_service(response: Any, reranker: Reranker, ctx: CallContext, limit: int) -> Any:
    """Reorder `response.results` (SearchHit-like: text, score, scores, citation) in place."""
    hits = list(response.results)
    if len(hits) >= 2:
        from ..egress import SentChunk
        from ..models.remote import with_context

        sends = tuple(SentChunk(getattr(h, "record_id", None), getattr(h, "revision", None),
                                getattr(h, "chunk_hash", None) or hashlib.sha256(h.text.encode()).hexdigest())
                      for h in hits)
        scores = reranker.rerank(response.query, [h.text for h in hits], with_context(ctx, sends=sends),
                                 top_n=len(hits))
        ranked = []
        for s in scores:
            hit = hits[s.index]
            hit.scores["service"] = s.relevance_score
            hit.score = s.relevance_score
            ranked.append(hit)
        taken = {s.index for s in scores}
        for i, hit in enumerate(hits):
            if i not in taken:
                hit.scores["service"] = None
                ranked.append(hit)
        hits = ranked
    hits = hits[:limit]
    for rank, hit in enumerate(hits, start=1):
        hit.citation = f"S{rank}"
    response.results = hits
    return response
