"""The engine's whole public API: the only part of `memories_tui` front ends import (with
`memories_tui.errors` and `memories_tui.config`). Enforced by tests/unit/test_boundaries.py.

- `Engine` (facade.py): vaults, records, ingest, index, embeddings, model install, search,
  status, ask (grounded answers: `Answer` with `Citation`, `Quote`, `Source`). Open one with
  `Engine.open(home, config)`.
- `parse_query` / `Query`: a search query checked and segmented once, reusable across modes.
- `BackgroundEmbedding` (jobs.py): the background embedding scheduler for long-running
  front ends, with the `EmbedRunning` / `EmbedFinished` events it delivers.
- Typed results and progress values (types.py); highlight helpers for hit text.
- `read_limited` (files.py): how every user-named file is read (regular files, capped).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..answer.types import ANSWERED, EXTRACTIVE, INSUFFICIENT, Answer, Citation, ExtractedSentence, Quote, Source
from ..files import read_limited
from ..retrieval.highlight import match_spans, term_spans
from ..text.query import MODES, check_options, parse_query
from ..text.segment import MATCH_MODES, MAX_RESULTS
from ..vault.records import EXCLUDED_KINDS, GENERAL_KINDS, KINDS
from .asking import DEFAULT_ASK_LIMIT
from .facade import Engine
from .ingest import read_text_file
from .jobs import BackgroundEmbedding, EmbedEvent, EmbedFinished, EmbedRunning
from .sources import MAX_FILE_BYTES
from .types import (
    GEMMA_PROHIBITED_USE_URL,
    GEMMA_TERMS_URL,
    PINNED_MODEL,
    CacheFigures,
    ChunkRef,
    EmbedProgress,
    HomeReport,
    IndexReport,
    IngestProgress,
    IngestResult,
    ModelFile,
    ModelManifest,
    NewRecord,
    Query,
    Record,
    RecordHit,
    RecordUpdate,
    SearchHit,
    SearchResponse,
    StatusReport,
    VaultInfo,
    VaultProblem,
    VaultScan,
)

if TYPE_CHECKING:
    from ..models.install import FileProgress, FileResult, InstallProgress, InstallReport

__all__ = [
    "ANSWERED", "DEFAULT_ASK_LIMIT", "EXTRACTIVE", "INSUFFICIENT", "Answer", "Citation", "ExtractedSentence", "Quote", "Source",
    "EXCLUDED_KINDS", "GEMMA_PROHIBITED_USE_URL", "GEMMA_TERMS_URL", "GENERAL_KINDS", "KINDS", "MATCH_MODES",
    "MAX_FILE_BYTES", "MAX_RESULTS", "MODES", "PINNED_MODEL",
    "BackgroundEmbedding", "CacheFigures", "ChunkRef", "EmbedEvent", "EmbedFinished", "EmbedProgress",
    "EmbedRunning", "Engine", "FileProgress", "FileResult", "HomeReport", "IndexReport", "IngestProgress",
    "IngestResult", "InstallProgress", "InstallReport", "ModelFile", "ModelManifest", "NewRecord", "Query",
    "Record", "RecordHit", "RecordUpdate", "SearchHit", "SearchResponse", "StatusReport", "VaultInfo",
    "VaultProblem", "VaultScan",
    "check_options", "match_spans", "parse_query", "read_limited", "read_text_file", "term_spans",
]

_INSTALL_TYPES = frozenset({"FileProgress", "FileResult", "InstallProgress", "InstallReport"})


def __getattr__(name: str) -> object:
    """Model-install types load httpx: import them only when asked for."""
    if name in _INSTALL_TYPES:
        from ..models import install

        return getattr(install, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
