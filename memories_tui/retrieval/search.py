"""Search over one vault's in-memory index: modes, strict filters, citation labels.

Results are chunks. Each carries `citation` (`S1`, `S2`, … in rank order, meaningful only
inside this one result set), the record id (`record_id`; `asset_id` in --json), its revision, chunk hash, UTF-8
byte range, score and per-stage scores. Excluded kinds never reach an index, so they can
never appear here (they are never indexed). The query arrives parsed (text/query.py): nothing here
segments it again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

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
    limit = query.limit if depth is None else depth
    notes: list[Note] = []
    fallback = _fallback(query.mode, embed_query is not None, unknown_share, notes)
    mode = query.mode
    if fallback is not None:  # ranked exactly as a BM25 search: same depth, no rerank, BM25 scores
        mode, embed_query, ensure_vectors = fallback, None, None
    qvec = _query_vector(query, embed_query, ensure_vectors) if mode in SEMANTIC_MODES else None
    with index.lock:
        lexical = _lexical_side(index, query, mode, limit, cards_only)
        vector = _vector_side(index, query, qvec, limit, cards_only) if qvec is not None else _Side()
        ranked = _fused(mode, fusion, lexical, vector)
        fused = dict(ranked)
        rerank_scores: dict[int, float] = {}
        # BM25 already rewards term coverage; the heuristic only re-orders vector and hybrid
        # candidates (on SciFact/CMRC it cost BM25 0.007/0.023 nDCG@10).
        if rerank and mode != BM25 and ranked and query.terms:
            ranked, rerank_scores = heuristic_rerank(query.text, list(query.terms), ranked, index.folded_text,
                                                     folded=query.folded,
                                                     keep_scores=mode == HYBRID and fusion == "score")
        marks = query.highlight_terms  # the words and the CJK pieces a hit may hold
        hits = [_hit(index, marks, n, key, score, {
            "bm25": lexical.scores.get(key), "vector": vector.scores.get(key),
            "fusion": fused.get(key) if mode == HYBRID else None, "rerank": rerank_scores.get(key),
        }) for n, (key, score) in enumerate(ranked[:limit], 1)]
    return SearchResponse(index.vault_id, query.text, query.mode, query.match_mode, hits, list(marks),
                          fallback=fallback, notes=notes)


@dataclass
class _Side:
    """One stage's candidates: their scores and their order."""

    scores: dict[int, float] = field(default_factory=dict)
    rank: list[int] = field(default_factory=list)

    def add(self, key: int, score: float) -> None:
        self.scores[key] = score
        self.rank.append(key)


def _fallback(mode: Mode, has_model: bool, unknown_share: float, notes: list[Note]) -> Mode | None:
    """BM25 when hybrid has no vector side to fuse (no model, or a query it cannot read), noted."""
    if mode == HYBRID and not has_model:
        notes.append(NO_EMBEDDING_MODEL)
        return BM25
    if mode == HYBRID and unknown_share > UNREADABLE_QUERY:
        notes.append(vector_left_out(unknown_share))
        return BM25
    return None


def _query_vector(query: Query, embed_query: QueryEmbedder | None,
                  ensure_vectors: Callable[[], object] | None) -> np.ndarray:
    """The query's embedding, once the index's vectors are there; a clear error without a model."""
    if embed_query is None:
        from ..errors import ModelError

        raise ModelError(msg("Vector search needs an embedding model; run `memories rag model-install`."))
    if ensure_vectors is not None:
        ensure_vectors()  # outside the index lock: BM25 queries keep being served meanwhile
    return embed_query(query.text)


def _lexical_side(index: VaultIndex, query: Query, mode: Mode, limit: int, cards_only: bool) -> _Side:
    side = _Side()
    if mode in (BM25, HYBRID):
        lexical_depth = limit if mode == BM25 else max(CANDIDATES, limit)
        for hit in index.lexical.search(query, query.match_mode, lexical_depth, cards_only):
            side.add(hit.key, hit.score)
    return side


def _vector_side(index: VaultIndex, query: Query, qvec: np.ndarray, limit: int, cards_only: bool) -> _Side:
    """The nearest chunks among those the query's strict filters allow."""
    side = _Side()
    if index.vectors is not None:
        allowed = index.lexical.matching_keys(query)
        if cards_only:
            cards = {k for k, c in index.chunks.items() if c.kind == "card"}
            allowed = cards if allowed is None else allowed & cards
        for key, score in index.vectors.top_k(qvec, max(CANDIDATES, limit), allowed):
            side.add(key, score)
    return side


def _fused(mode: Mode, fusion: str, lexical: _Side, vector: _Side) -> list[tuple[int, float]]:
    lexical_rank, vector_rank = lexical.rank, vector.rank
    if mode == BM25:
        return [(k, lexical.scores[k]) for k in lexical_rank]
    if mode == VECTOR:
        return [(k, vector.scores[k]) for k in vector_rank]
    if fusion == "rrf":
        return reciprocal_rank_fusion([lexical_rank, vector_rank], k=60)
    return score_fusion([(k, lexical.scores[k]) for k in lexical_rank], [(k, vector.scores[k]) for k in vector_rank])


def _hit(index: VaultIndex, marks: tuple[str, ...], n: int, key: int, score: float,
         scores: dict[str, float | None]) -> SearchHit:
    item: IndexedChunk = index.chunks[key]
    return SearchHit(
        citation=f"S{n}", record_id=item.record_id, revision=item.revision, chunk_hash=item.chunk.chunk_hash,
        byte_start=item.chunk.byte_start, byte_end=item.chunk.byte_end, score=float(score),
        title=item.title, text=item.chunk.text, kind=item.kind, scores=scores, key=key,
        terms=marks)


def group_by_record(response: SearchResponse, limit: int) -> list[RecordHit]:
    """`memory search`: one row per record, its best chunk as the snippet.

    `relevance` is the record's score over the best one in this list (the first row is 1). The
    raw BM25 score says little in a small vault: a term found in half the chunks or more gets an
    IDF near 0, so in a two-note vault every score prints as 0.0000; the ratio orders the same
    way and reads the same in a vault of 2 notes or 10,000."""
    rows: dict[str, RecordHit] = {}
    best = max((hit.score for hit in response.results), default=0.0)
    for hit in response.results:
        row = rows.get(hit.record_id)
        if row is None:
            relevance = hit.score / best if best > 0 else 1.0
            row = rows[hit.record_id] = RecordHit(hit.record_id, hit.revision, hit.title, round(hit.score, 6),
                                                 round(relevance, 4), hit.snippet, [])
        row.chunks.append(ChunkRef(hit.chunk_hash, hit.byte_start, hit.byte_end, round(hit.score, 6)))
    return list(rows.values())[:limit]
