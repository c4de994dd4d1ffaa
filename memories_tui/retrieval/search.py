"""Search over one vault's in-memory index: modes, strict filters, citation labels (R-LEX-5/6).

Results are chunks. Each carries `citation` (`S1`, `S2`, … in rank order, meaningful only
inside this one result set), the record id as `asset_id`, its revision, chunk hash, UTF-8
byte range, score and per-stage scores. Excluded kinds never reach an index, so they can
never appear here (R-SEC-1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import LimitError, UsageError
from ..index.cache import IndexedChunk, VaultIndex
from ..text.segment import MATCH_MODES, MAX_RESULTS, search_terms
from .fusion import hybrid_fusion
from .rerank import heuristic_rerank

MODES = ("bm25", "vector", "hybrid")
CANDIDATES = 100  # per stage, before fusion and rerank
UNREADABLE_QUERY = 0.25


@dataclass
class SearchHit:
    citation: str
    asset_id: str
    revision: int
    chunk_hash: str
    byte_start: int
    byte_end: int
    score: float
    title: str
    text: str
    kind: str
    scores: dict[str, float | None] = field(default_factory=dict)
    key: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"citation": self.citation, "asset_id": self.asset_id, "revision": self.revision,
                "chunk_hash": self.chunk_hash, "byte_start": self.byte_start, "byte_end": self.byte_end,
                "score": round(self.score, 6), "title": self.title, "text": self.text, "kind": self.kind,
                "scores": {k: (None if v is None else round(v, 6)) for k, v in self.scores.items()}}


@dataclass
class SearchResponse:
    vault_id: str
    query: str
    mode: str
    match_mode: str
    results: list[SearchHit]
    terms: list[str]
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out = {"vault_id": self.vault_id, "query": self.query, "mode": self.mode, "match_mode": self.match_mode,
               "results": [h.to_json() for h in self.results]}
        if self.notes:
            out["notes"] = self.notes
        return out


def check_request(query: str, mode: str, match_mode: str, limit: int) -> list[str]:
    """Validate a request before any work (R-LEX-4); returns the folded query terms that carry
    the match (stopwords dropped unless that is all there is), for rerank and highlighting."""
    if mode not in MODES:
        raise UsageError(f"Unknown search mode {mode!r}; use one of {', '.join(MODES)}.")
    if match_mode not in MATCH_MODES:
        raise UsageError(f"Unknown match mode {match_mode!r}; use one of {', '.join(MATCH_MODES)}.")
    if limit < 1 or limit > MAX_RESULTS:
        raise LimitError(f"--limit {limit} is out of range; at most {MAX_RESULTS} results may be requested "
                         "(and at least 1).")
    return search_terms(query)


QueryEmbedder = Callable[[str], np.ndarray]


def search(index: VaultIndex, query: str, *, mode: str = "bm25", match_mode: str = "any", limit: int = 10,
           cards_only: bool = False, rerank: bool = True, embed_query: QueryEmbedder | None = None,
           ensure_vectors: Callable[[], None] | None = None, unknown_share: float = 0.0,
           terms: list[str] | None = None) -> SearchResponse:
    """`unknown_share`: share of the query's tokens the embedding model cannot read; above
    UNREADABLE_QUERY hybrid leaves the vector ranking out (its vectors would be noise).
    `terms`: the result of check_request when the caller has already validated the request."""
    if terms is None:
        terms = check_request(query, mode, match_mode, limit)
    notes: list[str] = []
    if mode == "hybrid" and unknown_share > UNREADABLE_QUERY:
        notes.append(f"Vector ranking left out: the embedding model cannot read {unknown_share:.0%} of "
                     "this query's tokens, so hybrid shows BM25 order.")
        embed_query, ensure_vectors = None, None
        vector_off = True
    else:
        vector_off = False
    if mode in ("vector", "hybrid") and not vector_off:
        if embed_query is None:
            from ..errors import ModelError

            raise ModelError("Vector search needs an embedding model; run `memories rag model-install`.")
        if ensure_vectors is not None:
            ensure_vectors()  # outside the index lock: BM25 queries keep being served meanwhile
        qvec = embed_query(query)
    with index.lock:
        lexical_scores: dict[int, float] = {}
        lexical_rank: list[int] = []
        if mode in ("bm25", "hybrid"):
            depth = limit if mode == "bm25" else max(CANDIDATES, limit)
            for hit in index.lexical.search(query, match_mode, depth, cards_only, terms=terms):
                lexical_scores[hit.key] = hit.score
                lexical_rank.append(hit.key)
        vector_scores: dict[int, float] = {}
        vector_rank: list[int] = []
        if mode in ("vector", "hybrid") and not vector_off and index.vectors is not None:
            allowed = index.lexical.matching_keys(query, match_mode, terms=terms)
            if cards_only:
                cards = {k for k, c in index.chunks.items() if c.kind == "card"}
                allowed = cards if allowed is None else allowed & cards
            for key, score in index.vectors.top_k(qvec, max(CANDIDATES, limit), allowed):
                vector_scores[key] = score
                vector_rank.append(key)
        if mode == "bm25":
            ranked = [(k, lexical_scores[k]) for k in lexical_rank]
        elif mode == "vector":
            ranked = [(k, vector_scores[k]) for k in vector_rank]
        else:
            ranked = hybrid_fusion([(k, lexical_scores[k]) for k in lexical_rank],
                                   [(k, vector_scores[k]) for k in vector_rank])
        fused = dict(ranked)
        rerank_scores: dict[int, float] = {}
        # BM25 already rewards term coverage; the heuristic only re-orders vector and hybrid
        # candidates (on SciFact/CMRC it cost BM25 0.007/0.023 nDCG@10).
        if rerank and mode != "bm25" and not vector_off and ranked and terms:
            ranked, rerank_scores = heuristic_rerank(query, terms, ranked, index.folded_text)
        hits = []
        for n, (key, score) in enumerate(ranked[:limit], 1):
            item: IndexedChunk = index.chunks[key]
            scores: dict[str, float | None] = {
                "bm25": lexical_scores.get(key), "vector": vector_scores.get(key),
                "fusion": fused.get(key) if mode == "hybrid" else None,
                "rerank": rerank_scores.get(key),
            }
            hits.append(SearchHit(
                citation=f"S{n}", asset_id=item.record_id, revision=item.revision, chunk_hash=item.chunk.chunk_hash,
                byte_start=item.chunk.byte_start, byte_end=item.chunk.byte_end, score=float(score),
                title=item.title, text=item.chunk.text, kind=item.kind, scores=scores, key=key))
    return SearchResponse(index.vault_id, query, mode, match_mode, hits, terms, notes)


def group_by_record(response: SearchResponse, limit: int) -> list[dict[str, Any]]:
    """`memory search`: one row per record, its best chunk as the snippet (R-LEX-6)."""
    from .highlight import snippet

    rows: dict[str, dict[str, Any]] = {}
    for hit in response.results:
        row = rows.get(hit.asset_id)
        if row is None:
            row = rows[hit.asset_id] = {
                "id": hit.asset_id, "revision": hit.revision, "title": hit.title, "score": round(hit.score, 6),
                "snippet": snippet(hit.text, response.terms), "chunks": [],
            }
        row["chunks"].append({"chunk_hash": hit.chunk_hash, "byte_start": hit.byte_start,
                              "byte_end": hit.byte_end, "score": round(hit.score, 6)})
    return list(rows.values())[:limit]
