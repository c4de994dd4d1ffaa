"""Search over one vault's in-memory index: modes, strict filters, citation labels.

Results are chunks. Each carries `citation` (`S1`, `S2`, … in rank order, meaningful only
inside this one result set), the record id as `asset_id`, its revision, chunk hash, UTF-8
byte range, score and per-stage scores. Excluded kinds never reach an index, so they can
never appear here (they are never indexed). The query arrives parsed (text/query.py): nothing here
segments it again.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..i18n import msg
from ..index.cache import IndexedChunk, VaultIndex
from ..notes import NO_EMBEDDING_MODEL, Note, vector_left_out
from ..text.query import Query
from ..vocabulary import BM25, HYBRID, SEMANTIC_MODES, VECTOR, Mode
from .fusion import reciprocal_rank_fusion, score_fusion
from .rerank import heuristic_rerank
from .results import ChunkRef, RecordHit, SearchHit, SearchResponse

CANDIDATES = 100  # per stage, before fusion and rerank
UNREADABLE_QUERY = 0.25


QueryEmbedder = Callable[[str], np.ndarray]


def search(index: VaultIndex, query: Query, *, cards_only: bool = False, rerank: bool = True,
           embed_query: QueryEmbedder | None = None, ensure_vectors: Callable[[], object] | None = None,
           unknown_share: float = 0.0, depth: int | None = None, fusion: str = "score") -> SearchResponse:
    """Run a parsed query over one index.

    `fusion`: how hybrid combines its two lists, "score" or "rrf" (fusion.py).
    `unknown_share`: share of the query's tokens the embedding model cannot read; above
    UNREADABLE_QUERY hybrid leaves the vector ranking out (its vectors would be noise).
    `depth`: how many results to return when that differs from the query's limit.
    Hybrid without a vector side (no `embed_query`: no model; or an unreadable query) answers
    with the BM25 results themselves and says so: `fallback` "bm25" and a note."""
    mode = query.mode
    limit = query.limit if depth is None else depth
    terms = list(query.terms)
    notes: list[Note] = []
    fallback: Mode | None = None
    if mode == HYBRID and embed_query is None:
        notes.append(NO_EMBEDDING_MODEL)
        fallback = BM25
    elif mode == HYBRID and unknown_share > UNREADABLE_QUERY:
        notes.append(vector_left_out(unknown_share))
        fallback = BM25
    if fallback is not None:  # ranked exactly as a BM25 search: same depth, no rerank, BM25 scores
        mode, embed_query, ensure_vectors = fallback, None, None
    if mode in SEMANTIC_MODES:
        if embed_query is None:
            from ..errors import ModelError

            raise ModelError(msg("Vector search needs an embedding model; run `memories rag model-install`."))
        if ensure_vectors is not None:
            ensure_vectors()  # outside the index lock: BM25 queries keep being served meanwhile
        qvec = embed_query(query.text)
    with index.lock:
        lexical_scores: dict[int, float] = {}
        lexical_rank: list[int] = []
        if mode in (BM25, HYBRID):
            lexical_depth = limit if mode == BM25 else max(CANDIDATES, limit)
            for hit in index.lexical.search(query, query.match_mode, lexical_depth, cards_only):
                lexical_scores[hit.key] = hit.score
                lexical_rank.append(hit.key)
        vector_scores: dict[int, float] = {}
        vector_rank: list[int] = []
        if mode in SEMANTIC_MODES and index.vectors is not None:
            allowed = index.lexical.matching_keys(query)
            if cards_only:
                cards = {k for k, c in index.chunks.items() if c.kind == "card"}
                allowed = cards if allowed is None else allowed & cards
            for key, score in index.vectors.top_k(qvec, max(CANDIDATES, limit), allowed):
                vector_scores[key] = score
                vector_rank.append(key)
        if mode == BM25:
            ranked = [(k, lexical_scores[k]) for k in lexical_rank]
        elif mode == VECTOR:
            ranked = [(k, vector_scores[k]) for k in vector_rank]
        elif fusion == "rrf":
            ranked = reciprocal_rank_fusion([lexical_rank, vector_rank], k=60)
        else:
            ranked = score_fusion([(k, lexical_scores[k]) for k in lexical_rank],
                                  [(k, vector_scores[k]) for k in vector_rank])
        fused = dict(ranked)
        rerank_scores: dict[int, float] = {}
        # BM25 already rewards term coverage; the heuristic only re-orders vector and hybrid
        # candidates (on SciFact/CMRC it cost BM25 0.007/0.023 nDCG@10).
        if rerank and mode != BM25 and ranked and terms:
            ranked, rerank_scores = heuristic_rerank(query.text, terms, ranked, index.folded_text,
                                                     folded=query.folded,
                                                     keep_scores=mode == HYBRID and fusion == "score")
        hits = []
        marks = query.highlight_terms  # the words and the CJK pieces a hit may hold
        for n, (key, score) in enumerate(ranked[:limit], 1):
            item: IndexedChunk = index.chunks[key]
            scores: dict[str, float | None] = {
                "bm25": lexical_scores.get(key), "vector": vector_scores.get(key),
                "fusion": fused.get(key) if mode == HYBRID else None,
                "rerank": rerank_scores.get(key),
            }
            hits.append(SearchHit(
                citation=f"S{n}", asset_id=item.record_id, revision=item.revision, chunk_hash=item.chunk.chunk_hash,
                byte_start=item.chunk.byte_start, byte_end=item.chunk.byte_end, score=float(score),
                title=item.title, text=item.chunk.text, kind=item.kind, scores=scores, key=key,
                terms=marks))
    return SearchResponse(index.vault_id, query.text, query.mode, query.match_mode, hits, list(marks),
                          fallback=fallback, notes=notes)


def group_by_record(response: SearchResponse, limit: int) -> list[RecordHit]:
    """`memory search`: one row per record, its best chunk as the snippet.

    `relevance` is the record's score over the best one in this list (the first row is 1). The
    raw BM25 score says little in a small vault: a term found in half the chunks or more gets an
    IDF near 0, so in a two-note vault every score prints as 0.0000; the ratio orders the same
    way and reads the same in a vault of 2 notes or 10,000."""
    rows: dict[str, RecordHit] = {}
    best = max((hit.score for hit in response.results), default=0.0)
    for hit in response.results:
        row = rows.get(hit.asset_id)
        if row is None:
            relevance = hit.score / best if best > 0 else 1.0
            row = rows[hit.asset_id] = RecordHit(hit.asset_id, hit.revision, hit.title, round(hit.score, 6),
                                                 round(relevance, 4), hit.snippet, [])
        row.chunks.append(ChunkRef(hit.chunk_hash, hit.byte_start, hit.byte_end, round(hit.score, 6)))
    return list(rows.values())[:limit]
