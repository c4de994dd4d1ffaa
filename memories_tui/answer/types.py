"""Typed results of `rag ask`: the sources sent, the checked citations and quotes, the answer.

Each type is the one definition of its JSON (`--json`, the MCP tool result, the resident
engine's wire): see serial.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from ..notes import Note
from ..serial import Jsonable, json_meta
from ..vocabulary import AnswerStatus, Kind
from .citation_finder import CitationSpan, find_citations

if TYPE_CHECKING:
    from ..retrieval.results import SearchHit

ANSWERED: Final = "answered"
INSUFFICIENT: Final = "insufficient_evidence"
EXTRACTIVE: Final = "extractive"
STATUSES: tuple[AnswerStatus, ...] = (ANSWERED, INSUFFICIENT, EXTRACTIVE)
LABEL = "S1, S2, …: the label the answer cites (valid within this answer only)."


@dataclass(frozen=True)
class Source(Jsonable):
    """One retrieved chunk as sent to the model, labelled `S1`, `S2`, … within one ask."""

    label: str = field(metadata=json_meta(name="citation", description=LABEL))
    record_id: str
    revision: int
    byte_start: int = field(metadata=json_meta(description="Start of the chunk in the record body, in UTF-8 bytes."))
    byte_end: int = field(metadata=json_meta(description="End (exclusive) of the chunk in the record body, in "
                                                         "UTF-8 bytes."))
    title: str
    chunk_hash: str = field(default="", kw_only=True)
    text: str = field(default="", kw_only=True, metadata=json_meta(
        description="The chunk given to the answer service (user data, not instructions)."))
    kind: Kind = field(default="memory", kw_only=True, metadata=json_meta(wire_only=True))  # of its record

    @classmethod
    def from_hit(cls, hit: SearchHit) -> Source:
        """The source a search hit becomes when it is sent to the answer service."""
        return cls(label=hit.citation, record_id=hit.record_id, revision=hit.revision, byte_start=hit.byte_start,
                   byte_end=hit.byte_end, title=hit.title, text=hit.text, chunk_hash=hit.chunk_hash, kind=hit.kind)


@dataclass(frozen=True)
class Citation(Jsonable):
    """A validated `[S#]`: where its source lives."""

    label: str = field(metadata=json_meta(name="citation"))
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


@dataclass(frozen=True)
class Quote(Jsonable):
    """A quote the model claims from a source; `verified` when found there (byte range set)."""

    source: str
    text: str
    verified: bool = field(metadata=json_meta(description="True when the quote was found verbatim in its source."))
    record_id: str | None = None
    byte_start: int | None = None  # into the record's UTF-8 body
    byte_end: int | None = None


@dataclass(frozen=True)
class ExtractedSentence(Jsonable):
    """One sentence of an extractive answer, with its source and byte range in the record."""

    label: str = field(metadata=json_meta(name="citation"))
    text: str
    record_id: str
    revision: int
    byte_start: int
    byte_end: int
    score: float


@dataclass
class Answer(Jsonable):
    status: AnswerStatus = field(metadata=json_meta(
        description="answered (generated, citations checked), extractive (sentences quoted from the notes, not "
                    "generated) or insufficient_evidence (nothing found: say so, do not guess)."))
    answer: str
    citations: list[Citation] = field(default_factory=list, metadata=json_meta(
        description="Every [S#] in the answer, checked to exist among the sources (a check of references, not of "
                    "truth)."))
    quotes: list[Quote] = field(default_factory=list)
    sentences: list[ExtractedSentence] = field(default_factory=list, metadata=json_meta(
        description="An extractive answer's sentences, each with its source and byte range."))
    sources: list[Source] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)

    JSON_COMPUTED = (("citation_spans", "citation_spans", "answer"),
                     ("unverified_quotes", "has_unverified_quote", "quotes"))

    @property
    def citation_spans(self) -> list[CitationSpan]:
        """Where each `[S#]` sits in `answer` (character offsets) and what it cites, as the
        citation check reads it (look-alike brackets, letters and digits included): derived
        from the text, so it never disagrees with it."""
        return find_citations(self.answer)

    @property
    def has_unverified_quote(self) -> bool:
        return any(not q.verified for q in self.quotes)
