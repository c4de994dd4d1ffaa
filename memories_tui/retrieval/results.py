"""What a search returns: chunk hits with their citation labels, and record-level hits.

Kept apart from search.py (numpy, the index) so front ends can name these types without
loading the index code: the TUI's first frame imports them (R-TUI-2).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .highlight import match_spans, snippet


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
    terms: tuple[str, ...] = ()  # the query's folded terms, for highlighting without re-segmenting

    @property
    def spans(self) -> list[tuple[int, int]]:
        """Character spans in `text` where a query term starts a word (anywhere in CJK text)."""
        return match_spans(self.text, self.terms)

    @property
    def snippet(self) -> str:
        """One line of `text` around its first matched term (what `memory search` shows)."""
        return snippet(self.text, self.terms)

    def to_json(self) -> dict[str, object]:
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

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"vault_id": self.vault_id, "query": self.query, "mode": self.mode,
                                  "match_mode": self.match_mode, "results": [h.to_json() for h in self.results]}
        if self.notes:
            out["notes"] = self.notes
        return out


@dataclass(frozen=True)
class ChunkRef:
    chunk_hash: str
    byte_start: int
    byte_end: int
    score: float

    def to_json(self) -> dict[str, object]:
        return {"chunk_hash": self.chunk_hash, "byte_start": self.byte_start, "byte_end": self.byte_end,
                "score": self.score}


@dataclass(frozen=True)
class RecordHit:
    """`memory search`: one record, its best chunk as the snippet, and every matching chunk."""

    id: str
    revision: int
    title: str
    score: float
    snippet: str
    chunks: list[ChunkRef]

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "revision": self.revision, "title": self.title, "score": self.score,
                "snippet": self.snippet, "chunks": [c.to_json() for c in self.chunks]}
