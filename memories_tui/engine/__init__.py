"""The engine's whole public API: the only part of `memories_tui` front ends import (with
`memories_tui.errors` and `memories_tui.config`). Enforced by tests/unit/test_boundaries.py.

- `Engine` (facade.py): vaults, records, ingest, index, embeddings, model install, search,
  status, ask (grounded answers: `Answer` with `Citation`, `Quote`, `Source`). Open one with
  `Engine.open(home, config)`.
- `parse_query` / `Query`: a search query checked and segmented once, reusable across modes.
- `BackgroundEmbedding` (jobs.py, made by `Engine.background_embedding`): the background
  embedding scheduler for long-running front ends, with the `EmbedRunning` / `EmbedFinished`
  events it delivers.
- Typed results and progress values (types.py); highlight helpers for hit text; `find_citations`,
  the one citation finder the answer check uses (for highlighting `[S#]` in any text).
- `read_limited` (files.py): how every user-named file is read (regular files, capped).

Only the vocabulary and the JSON helpers load with the package; every other name, `Engine`
included, loads from its module on first use (`__getattr__` below), so a front end's first
screen waits for no search, segmenter or model code, and a CLI call the resident engine
serves never loads the engine at all. The `TYPE_CHECKING` imports name the same things for
mypy and readers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ..notes import Note, NoteKind
from ..serial import Form, Jsonable, JsonProperty, json_meta
from ..serial import dump as json_of
from ..serial import load as from_json
from ..serial import properties as json_properties
from ..vocabulary import (
    BM25,
    DEFAULT_ASK_LIMIT,
    DEFAULT_LIMIT,
    DEFAULT_MATCH_MODE,
    DEFAULT_MODE,
    EXCLUDED_KINDS,
    GENERAL_KINDS,
    HYBRID,
    KINDS,
    MATCH_ALL,
    MATCH_ANY,
    MATCH_MODES,
    MATCH_PHRASE,
    MAX_RESULTS,
    MODES,
    SEMANTIC_MODES,
    TEXT_KINDS,
    VECTOR,
    AnswerStatus,
    IngestStatus,
    Kind,
    MatchMode,
    Mode,
    Stage,
)

if TYPE_CHECKING:
    from ..answer.citation_finder import CitationSpan, find_citations
    from ..answer.types import ANSWERED, EXTRACTIVE, INSUFFICIENT, Answer, Citation, ExtractedSentence, Quote, Source
    from ..egress import current_origin, on_behalf_of
    from ..files import read_limited
    from ..home import locate as locate_home
    from ..index.reports import EmbedProgress, IndexReport
    from ..models.install import FileProgress, FileResult, InstallProgress, InstallReport
    from ..models.manifest import GEMMA_PROHIBITED_USE_URL, GEMMA_TERMS_URL, ModelFile, ModelManifest
    from ..models.manifest import PINNED as PINNED_MODEL
    from ..retrieval.highlight import match_spans, term_spans
    from ..retrieval.results import ChunkRef, RecordHit, SearchHit, SearchResponse
    from ..sync.registry import TargetEntry
    from ..sync.threeway import marked_merge
    from ..sync.types import Conflict, ConflictRevision, DeviceInfo, SyncProgress, SyncReport
    from ..text.offsets import (
        byte_span_to_chars,
        byte_to_char,
        ceil_char_boundary,
        char_to_byte,
        floor_char_boundary,
    )
    from ..text.query import Query, check_options, parse_query
    from ..vault.backups import BackupProgress
    from ..vault.egress_log import EgressEntry
    from ..vault.header import VaultProblem
    from ..vault.records import NewRecord, Record, RecordUpdate
    from .api import LOCAL as LOCAL_OPERATIONS
    from .api import EngineAPI, EngineHandle, LocalAPI, Operation, operations, progress_types, quick_verbs
    from .api import by_name as operation_named
    from .api import by_verb as operation_of_verb
    from .api import hints as operation_type
    from .backup_ops import BackupReport, RestoreReport
    from .egress_ops import EgressReport, parse_since
    from .export_ops import ExportedFile, ExportReport
    from .facade import Engine
    from .importers.common import ImportItem, ImportReport
    from .ingest import read_text_file
    from .jobs import BackgroundEmbedding, EmbedEvent, EmbedFinished, EmbedRunning
    from .source_list import SourceSpec
    from .source_ops import SourceInfo
    from .source_sync import SourceSyncItem, SourceSyncReport
    from .source_watch import SourceWatcher
    from .sources import MAX_FILE_BYTES
    from .sync_watch import SyncScheduler
    from .types import (
        CacheFigures,
        HomeReport,
        IngestProgress,
        IngestResult,
        StatusReport,
        VaultInfo,
        VaultScan,
    )

__all__ = [
    "ANSWERED", "DEFAULT_ASK_LIMIT", "EXTRACTIVE", "INSUFFICIENT", "Answer", "Citation", "ExtractedSentence", "Quote", "Source",
    "EXCLUDED_KINDS", "GEMMA_PROHIBITED_USE_URL", "GEMMA_TERMS_URL", "GENERAL_KINDS", "KINDS", "MATCH_MODES",
    "MAX_FILE_BYTES", "MAX_RESULTS", "MODES", "PINNED_MODEL", "DEFAULT_LIMIT", "DEFAULT_MATCH_MODE", "DEFAULT_MODE",
    "TEXT_KINDS", "AnswerStatus", "IngestStatus", "Kind", "MatchMode", "Mode", "Stage",
    "BM25", "HYBRID", "MATCH_ALL", "MATCH_ANY", "MATCH_PHRASE", "SEMANTIC_MODES", "VECTOR",
    "BackgroundEmbedding", "BackupProgress", "BackupReport", "CacheFigures", "ChunkRef", "CitationSpan", "EmbedEvent", "EmbedFinished", "EmbedProgress",
    "EgressEntry", "EgressReport", "EmbedRunning", "Engine", "ExportReport", "ExportedFile", "FileProgress", "FileResult", "HomeReport", "IndexReport", "IngestProgress",
    "IngestResult", "InstallProgress", "InstallReport", "ModelFile", "ModelManifest", "NewRecord", "Query",
    "Record", "RecordHit", "RecordUpdate", "RestoreReport", "SearchHit", "SearchResponse", "StatusReport", "VaultInfo",
    "VaultProblem", "VaultScan", "ImportItem", "ImportReport", "SourceInfo", "SourceSpec", "SourceWatcher", "SourceSyncItem", "SourceSyncReport",
    "SyncScheduler", "TargetEntry", "marked_merge",
    "Conflict", "ConflictRevision", "DeviceInfo", "SyncProgress", "SyncReport",
    "check_options", "find_citations", "locate_home", "match_spans", "current_origin", "on_behalf_of", "parse_query", "parse_since", "read_limited", "read_text_file",
    "term_spans",
    "byte_span_to_chars", "byte_to_char", "ceil_char_boundary", "char_to_byte", "floor_char_boundary",
    "EngineAPI", "EngineHandle", "LocalAPI", "LOCAL_OPERATIONS", "Operation", "operation_named", "operation_of_verb", "operation_type",
    "operations", "progress_types", "quick_verbs",
    "Form", "JsonProperty", "Jsonable", "Note", "NoteKind", "from_json", "json_meta", "json_of", "json_properties",
]

# name -> (module relative to this package, name there); loaded on first use
_LAZY: dict[str, tuple[str, str]] = {
    "Engine": (".facade", "Engine"),
    **{n: (".api", n) for n in ("EngineAPI", "EngineHandle", "LocalAPI", "Operation", "operations", "quick_verbs",
                                "progress_types")},
    "LOCAL_OPERATIONS": (".api", "LOCAL"),
    "operation_named": (".api", "by_name"),
    "operation_of_verb": (".api", "by_verb"),
    "operation_type": (".api", "hints"),
    **{n: (".jobs", n) for n in ("BackgroundEmbedding", "EmbedEvent", "EmbedFinished", "EmbedRunning")},
    **{n: ("..answer.types", n) for n in ("ANSWERED", "EXTRACTIVE", "INSUFFICIENT", "Answer", "Citation",
                                          "ExtractedSentence", "Quote", "Source")},
    **{n: ("..answer.citation_finder", n) for n in ("CitationSpan", "find_citations")},
    "read_limited": ("..files", "read_limited"),
    "locate_home": ("..home", "locate"),
    **{n: ("..index.reports", n) for n in ("EmbedProgress", "IndexReport")},
    # model-install types load httpx
    **{n: ("..models.install", n) for n in ("FileProgress", "FileResult", "InstallProgress", "InstallReport")},
    **{n: ("..models.manifest", n) for n in ("GEMMA_PROHIBITED_USE_URL", "GEMMA_TERMS_URL", "ModelFile",
                                             "ModelManifest")},
    "PINNED_MODEL": ("..models.manifest", "PINNED"),
    **{n: ("..retrieval.highlight", n) for n in ("match_spans", "term_spans")},
    **{n: ("..retrieval.results", n) for n in ("ChunkRef", "RecordHit", "SearchHit", "SearchResponse")},
    **{n: ("..text.query", n) for n in ("Query", "check_options", "parse_query")},
    **{n: ("..text.offsets", n) for n in ("byte_span_to_chars", "byte_to_char", "ceil_char_boundary", "char_to_byte",
                                          "floor_char_boundary")},
    "VaultProblem": ("..vault.header", "VaultProblem"),
    "BackupProgress": ("..vault.backups", "BackupProgress"),
    **{n: (".backup_ops", n) for n in ("BackupReport", "RestoreReport")},
    "on_behalf_of": ("..egress", "on_behalf_of"),
    "current_origin": ("..egress", "current_origin"),
    "EgressEntry": ("..vault.egress_log", "EgressEntry"),
    **{n: (".egress_ops", n) for n in ("EgressReport", "parse_since")},
    **{n: ("..vault.records", n) for n in ("NewRecord", "Record", "RecordUpdate")},
    **{n: (".export_ops", n) for n in ("ExportReport", "ExportedFile")},
    "read_text_file": (".ingest", "read_text_file"),
    "MAX_FILE_BYTES": (".sources", "MAX_FILE_BYTES"),
    **{n: (".importers.common", n) for n in ("ImportItem", "ImportReport")},
    "SourceSpec": (".source_list", "SourceSpec"),
    "SourceInfo": (".source_ops", "SourceInfo"),
    **{n: (".source_sync", n) for n in ("SourceSyncItem", "SourceSyncReport")},
    "SourceWatcher": (".source_watch", "SourceWatcher"),
    "SyncScheduler": (".sync_watch", "SyncScheduler"),
    "marked_merge": ("..sync.threeway", "marked_merge"),
    "TargetEntry": ("..sync.registry", "TargetEntry"),
    **{n: ("..sync.types", n) for n in ("Conflict", "ConflictRevision", "DeviceInfo", "SyncProgress", "SyncReport")},
    **{n: (".types", n) for n in ("CacheFigures", "HomeReport", "IngestProgress", "IngestResult", "StatusReport",
                                  "VaultInfo", "VaultScan")},
}


def __getattr__(name: str) -> object:
    """Load a public name from its module the first time a front end asks for it."""
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), attr)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
