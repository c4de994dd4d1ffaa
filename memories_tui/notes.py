"""Remarks about how a search or an answer ran, typed by what they say.

Front ends show notes, hide some (the TUI states the citation check once on screen) or act
on them by `kind`, never by matching their text. Printed (`--json`, MCP) a note is its text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .i18n import N_
from .serial import Jsonable

NoteKind = Literal[
    "remark",  # anything without a kind of its own
    "extractive",  # the answer quotes the notes; nothing was generated
    "nothing_retrieved",  # the search found nothing, so no answer service was called
    "no_supporting_sentence",  # no retrieved sentence holds enough of the question's rarer words
    "no_generation_service",  # no answer service is configured
    "uncited",  # the model cited no source
    "unverified_quote",  # a quote was not found in its source
    "citation_check",  # what the citation checks do and do not prove
    "vector_left_out",  # hybrid search used keyword order only
    "no_embedding_model",  # hybrid search answered with BM25: no embedding model is installed
]


@dataclass(frozen=True)
class Note(Jsonable):
    text: str
    kind: NoteKind = "remark"

    JSON_SCALAR = "text"

    def __str__(self) -> str:
        return self.text


EXTRACTIVE = Note(N_("Extractive answer: sentences copied from your notes, not generated."), "extractive")
NOTHING_RETRIEVED = Note(N_("Nothing relevant was retrieved; no service was called."), "nothing_retrieved")
NO_SUPPORTING_SENTENCE = Note(N_("No retrieved sentence holds enough of the question's rarer words to answer it."),
                              "no_supporting_sentence")
NO_GENERATION_SERVICE = Note(N_("No [rag.generation] service is configured; add one to the config for generated "
                                "answers."),
                             "no_generation_service")
UNCITED = Note(N_("The model cited no source: treated as insufficient evidence."), "uncited")
UNVERIFIED_QUOTE = Note(N_("The answer carries a quote that was not found in its source."), "unverified_quote")
NO_EMBEDDING_MODEL = Note(N_("No embedding model is installed, so hybrid shows the BM25 results "
                             "(`memories rag model-install` installs it)."), "no_embedding_model")
CITATION_CHECK = Note(N_("Citation checks verify references and quotes, not whether the answer is true."),
                      "citation_check")


def vector_left_out(unknown_share: float) -> Note:
    return Note(f"Vector ranking left out: the embedding model cannot read {unknown_share:.0%} of this query's "
                "tokens, so hybrid shows the BM25 results.", "vector_left_out")
