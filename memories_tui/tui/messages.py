"""Typed messages thread workers post back to the UI thread.

Every message carries the engine's `lock_epoch` at the time the work started; handlers drop
messages whose epoch no longer matches (the vault was locked meanwhile, so its result must not show).
"""

from __future__ import annotations

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


class WorkerMessage(Message):
    def __init__(self, epoch: int) -> None:
        super().__init__()
        self.epoch = epoch


class UnlockDone(WorkerMessage):
    def __init__(self, epoch: int, *, vault_id: str = "", error: str | None = None,
                 wrong_passphrase: bool = False) -> None:
        super().__init__(epoch)
        self.vault_id = vault_id
        self.error = error
        self.wrong_passphrase = wrong_passphrase


class CreateProgress(WorkerMessage):
    """What vault creation is doing now, for the line beside the spinner."""

    def __init__(self, epoch: int, *, step: str) -> None:
        super().__init__(epoch)
        self.step = step


class VaultCreated(WorkerMessage):
    def __init__(self, epoch: int, *, vault_id: str = "", samples: int = 0, error: str | None = None) -> None:
        super().__init__(epoch)
        self.vault_id = vault_id
        self.samples = samples
        self.error = error


class IngestProgress(WorkerMessage):
    def __init__(self, epoch: int, *, stage: str = "", done: int = 0, total: int = 0) -> None:
        super().__init__(epoch)
        self.stage = stage
        self.done = done
        self.total = total


class IngestDone(WorkerMessage):
    def __init__(self, epoch: int, *, results: list[IngestResult] | None = None, error: str | None = None) -> None:
        super().__init__(epoch)
        self.results = results or []
        self.error = error


class SearchDone(WorkerMessage):
    """One pane's results. `stage` names the score that ranked them (bm25, vector, fusion); a
    hybrid search without a model falls back to BM25 and says so in `note`; `no_model` marks a
    vector search that could not run because no model is installed."""

    def __init__(self, epoch: int, *, mode: str, generation: int, response: SearchResponse | None = None,
                 error: str | None = None, seconds: float = 0.0, stage: str = "", note: str = "",
                 no_model: bool = False) -> None:
        super().__init__(epoch)
        self.mode = mode
        self.generation = generation
        self.response = response
        self.error = error
        self.seconds = seconds
        self.stage = stage
        self.note = note
        self.no_model = no_model


class InstallProgressMessage(WorkerMessage):
    def __init__(self, epoch: int, *, progress: InstallProgress) -> None:
        super().__init__(epoch)
        self.progress = progress


class InstallDone(WorkerMessage):
    def __init__(self, epoch: int, *, report: InstallReport | None = None, error: str | None = None,
                 cancelled: bool = False) -> None:
        super().__init__(epoch)
        self.report = report
        self.error = error
        self.cancelled = cancelled


class StatusDone(WorkerMessage):
    def __init__(self, epoch: int, *, status: list[Section] | None = None, error: str | None = None) -> None:
        super().__init__(epoch)
        self.status = status or []  # status_view.Section list
        self.error = error


class SearchProgress(WorkerMessage):
    """On-demand embedding inside a vector/hybrid pane search (EmbedProgress)."""

    def __init__(self, epoch: int, *, mode: str, generation: int, progress: EmbedProgress) -> None:
        super().__init__(epoch)
        self.mode = mode
        self.generation = generation
        self.progress = progress


class EmbedProgressMessage(Message):
    """Background embedding after unlock / ingest / a record change (from engine/jobs.py)."""

    def __init__(self, event: EmbedRunning) -> None:
        super().__init__()
        self.event = event


class EmbedDone(Message):
    def __init__(self, event: EmbedFinished) -> None:
        super().__init__()
        self.event = event
