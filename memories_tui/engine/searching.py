"""Search over one unlocked vault: the query parsed once, the vault's index, the embedder for
the vector and hybrid modes, and the rerank service stage with the vault's lock guard checked
around it. The facade imports this on the first search (numpy)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import ErrorCode, InputRefusedError, ModelNotInstalledError
from ..i18n import msg
from ..retrieval.search import group_by_record, search
from ..retrieval.service_rerank import candidate_depth, rerank_with_service
from ..text.query import Query, parse_query
from ..vocabulary import BM25, DEFAULT_LIMIT, DEFAULT_MATCH_MODE, DEFAULT_MODE, HYBRID, MAX_RESULTS, MatchMode, Mode

if TYPE_CHECKING:
    from ..index.embedding import Embedder
    from ..index.reports import EmbedProgress
    from ..retrieval.results import RecordHit, SearchResponse
    from .context import LockGuard, VaultContext


def search_vault(ctx: VaultContext, query: str | Query, *, mode: Mode | None, match_mode: MatchMode | None,
                 limit: int | None, cards_only: bool, rerank: bool, budget_seconds: float,
                 progress: Callable[[EmbedProgress], None] | None,
                 cancel: threading.Event | None) -> SearchResponse:
    """`Engine.search`: see there."""
    parsed = parsed_query(query, mode, match_mode, limit)
    guard = ctx.guard()
    rag = ctx.config.rag
    index = ctx.index()
    service = rag.rerank if rerank else None
    depth = candidate_depth(parsed.limit) if service is not None else None
    if parsed.mode == BM25:
        response = search(index, parsed, cards_only=cards_only, rerank=rerank, depth=depth)
    elif (embedder := _embedder_or_none(ctx, parsed.mode, cancel, guard)) is None:
        response = search(index, parsed, cards_only=cards_only, rerank=rerank, depth=depth)  # BM25, and says so
    else:
        response = search(index, parsed, cards_only=cards_only, rerank=rerank, embed_query=embedder.embed_query,
                          fusion=rag.fusion,
                          unknown_share=embedder.unknown_share(parsed.text), depth=depth,
                          ensure_vectors=lambda: ctx.ensure_vectors(budget_seconds=budget_seconds,
                                                                    progress=progress, cancel=cancel))
    if service is None:
        return response
    from ..models.remote_generate import Reranker

    result: SearchResponse = rerank_with_service(response, Reranker(service, rag.http),
                                                 ctx.call_context(cancel, guard), parsed.limit)
    guard.check("The vault was locked during the search; the late result was dropped.")
    return result


def _embedder_or_none(ctx: VaultContext, mode: Mode, cancel: threading.Event | None,
                      guard: LockGuard) -> Embedder | None:
    """The vault's embedder; None for a hybrid search when no model is installed (the search
    then answers with the BM25 results and says so). A vector search without one stays an error,
    and so does a model that is installed but broken."""
    try:
        return ctx.embedder(cancel, guard)
    except ModelNotInstalledError:
        if mode == HYBRID:
            return None
        raise


def memory_search_vault(ctx: VaultContext, query: str | Query, *, limit: int | None,
                        match_mode: MatchMode | None) -> list[RecordHit]:
    """`Engine.memory_search`: lexical only, grouped by record, looking deeper so `limit` records can fill."""
    parsed = parsed_query(query, BM25, match_mode, limit)
    response = search(ctx.index(), parsed, rerank=False, depth=MAX_RESULTS)
    return group_by_record(response, parsed.limit)


def parsed_query(query: str | Query, mode: Mode | None, match_mode: MatchMode | None, limit: int | None) -> Query:
    """A query text parsed with the defaults (bm25, any, 10), or a parsed one in `mode`."""
    if not isinstance(query, Query):
        return parse_query(query, mode=mode or DEFAULT_MODE, match_mode=match_mode or DEFAULT_MATCH_MODE,
                           limit=DEFAULT_LIMIT if limit is None else limit)
    if match_mode not in (None, query.match_mode) or limit not in (None, query.limit):
        raise InputRefusedError(msg("A parsed query carries its own match mode and limit; parse it again to "
                                    "change them."),
                                code=ErrorCode.BAD_QUERY)
    return query if mode in (None, query.mode) else query.with_mode(mode)
