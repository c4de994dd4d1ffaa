"""Typed results of `rag ask` (SPEC R-ASK-3, R-PLUS-1): sources sent, citations, quotes, answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..retrieval.results import SearchHit

ANSWERED = "answered"
INSUFFICIENT = "insufficient_evidence"
EXTRACTIVE = "extractive"
STATUSES = (ANSWERED, INSUFFICIENT, EXTRACTIVE)


@dataclass(frozen=True)
class Source:
    """One retrieved chunk as sent to the model, labelled `S1`, `S2`, … within one ask."""

    label: str
    record_id: str
    revision: int
    byte_start: int  # into the record's UTF-8 body
    byte_end: int
    title: str
    text: str
    chunk_hash: str = ""

    @classmethod
    def from_hit(cls, hit: SearchHit) -> Source:
        """From a search hit (anything with citation, asset_id, revision, byte range, title, text)."""
        return cls(label=hit.citation, record_id=hit.asset_id, revision=hit.revision, byte_start=hit.byte_start,
                   byte_end=hit.byte_end, title=hit.title, text=hit.text, chunk_hash=getattr(hit, "chunk_hash", ""))

    def to_json(self) -> dict[str, object]:
        return {"citation": self.label, "record_id": self.record_id, "revision": self.revision,
                "byte_start": self.byte_start, "byte_end": self.byte_end, "title": self.title,
                "chunk_hash": self.chunk_hash, "text": self.text}


@dataclass(frozen=True)
class Citation:
    """A validated `[S#]`: where its source lives."""

    label: str
    record_id: str
    revision: int
    byte_start: int
    byte_end: int
    title: str

    @classmethod
    def of(cls, source: Source, byte_start: int | None = None, byte_end: int | None = None) -> Citation:
        return cls(source.label, source.record_id, source.revision,
                   source.byte_start if byte_start is None else byte_start,
                   source.byte_end if byte_end is None else byte_end, source.title)

    def to_json(self) -> dict[str, object]:
        return {"citation": self.label, "record_id": self.record_id, "revision": self.revision,
                "byte_start": self.byte_start, "byte_end": self.byte_end, "title": self.title}


@dataclass(frozen=True)
class Quote:
    """A quote the model claims from a source; `verified` when found there (byte range set)."""

    source: str
    text: str
    verified: bool
    record_id: str | None = None
    byte_start: int | None = None  # into the record's UTF-8 body
    byte_end: int | None = None

    def to_json(self) -> dict[str, object]:
        return {"source": self.source, "text": self.text, "verified": self.verified, "record_id": self.record_id,
                "byte_start": self.byte_start, "byte_end": self.byte_end}


@dataclass(frozen=True)
class ExtractedSentence:
    """One sentence of an extractive answer, with its source and byte range in the record."""

    label: str
    text: str
    record_id: str
    revision: int
    byte_start: int
    byte_end: int
    score: float

    def to_json(self) -> dict[str, object]:
        return {"citation": self.label, "text": self.text, "record_id": self.record_id, "revision": self.revision,
                "byte_start": self.byte_start, "byte_end": self.byte_end, "score": self.score}


@dataclass
class Answer:
    status: str  # answered | insufficient_evidence | extractive
    answer: str
    citations: list[Citation] = field(default_factory=list)
    quotes: list[Quote] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    sentences: list[ExtractedSentence] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def has_unverified_quote(self) -> bool:
        return any(not q.verified for q in self.quotes)

    def to_json(self) -> dict[str, object]:
        return {"status": self.status, "answer": self.answer,
                "citations": [c.to_json() for c in self.citations],
                "quotes": [q.to_json() for q in self.quotes],
                "unverified_quotes": self.has_unverified_quote,
                "sentences": [s.to_json() for s in self.sentences],
                "sources": [s.to_json() for s in self.sources],
                "notes": list(self.notes)}
