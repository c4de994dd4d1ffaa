"""Typed messages thread workers post back to the UI thread.

Every message carries the engine's `lock_epoch` at the time the work started; handlers drop
messages whose epoch no longer matches (the vault was locked meanwhile, so its result must not show).
Messages are dataclasses (Textual's Message initialises itself in `__post_init__`); `eq=False`
keeps them hashable and compared by identity, as Textual's own messages are; past the epoch
every field is given by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from ..engine import (
        EmbedFinished,
        EmbedProgress,
        EmbedRunning,
        IngestResult,
        InstallProgress,
        InstallReport,
        SearchResponse,
    )
    from .status_view import Section



@dataclass(eq=False)
class WorkerMessage(Message):
    epoch: int


@dataclass(eq=False, kw_only=True)
class UnlockDone(WorkerMessage):
    vault_id: str = ""
    error: str | None = None
    wrong_passphrase: bool = False
    rolled_back: bool = False  # the passphrase was right, the file is older than this home has seen


@dataclass(eq=False, kw_only=True)
class CreateProgress(WorkerMessage):
    """What vault creation is doing now, for the line beside the spinner."""

    step: str


@dataclass(eq=False, kw_only=True)
class VaultCreated(WorkerMessage):
    vault_id: str = ""
    samples: int = 0
    error: str | None = None


@dataclass(eq=False, kw_only=True)
class IngestProgress(WorkerMessage):
    stage: str = ""
    done: int = 0
    total: int = 0


@dataclass(eq=False, kw_only=True)
class IngestDone(WorkerMessage):
    results: list[IngestResult] = field(default_factory=list)
    error: str | None = None


@dataclass(eq=False, kw_only=True)
class SearchDone(WorkerMessage):
    """One pane's results. `stage` names the score that ranked them (bm25, vector, fusion); a
    hybrid search without a model falls back to BM25 and says so in `note`; `no_model` marks a
    vector search that could not run because no model is installed."""

    mode: str
    generation: int
    response: SearchResponse | None = None
    error: str | None = None
    seconds: float = 0.0
    stage: str = ""
    note: str = ""
    no_model: bool = False


@dataclass(eq=False, kw_only=True)
class InstallProgressMessage(WorkerMessage):
    progress: InstallProgress


@dataclass(eq=False, kw_only=True)
class InstallDone(WorkerMessage):
    report: InstallReport | None = None
    error: str | None = None
    cancelled: bool = False


@dataclass(eq=False, kw_only=True)
class StatusDone(WorkerMessage):
    status: list[Section] = field(default_factory=list)
    error: str | None = None


@dataclass(eq=False, kw_only=True)
class SearchProgress(WorkerMessage):
    """On-demand embedding inside a vector/hybrid pane search (EmbedProgress)."""

    mode: str
    generation: int
    progress: EmbedProgress


@dataclass(eq=False)
class EmbedProgressMessage(Message):
    """Background embedding after unlock / ingest / a record change (from engine/jobs.py)."""

    event: EmbedRunning


@dataclass(eq=False)
class EmbedDone(Message):
    event: EmbedFinished
