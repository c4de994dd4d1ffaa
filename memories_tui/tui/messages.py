"""Typed messages thread workers post back to the UI thread.

Every message carries the engine's `lock_epoch` at the time the work started; handlers drop
messages whose epoch no longer matches (the vault was locked meanwhile: R-TUI-2, R-CACHE-3).
"""

from __future__ import annotations

from typing import Any

from textual.message import Message


def describe(exc: BaseException) -> str:
    """The message to show for a worker failure: engine errors carry a safe sentence; anything
    else is a bug, shown by type so the UI never hangs in a busy state."""
    message = getattr(exc, "message", None)
    if isinstance(message, str):
        return message
    return f"Unexpected error ({type(exc).__name__}): {exc}"


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
    def __init__(self, epoch: int, *, results: list[Any] | None = None, error: str | None = None) -> None:
        super().__init__(epoch)
        self.results = results or []
        self.error = error


class SearchDone(WorkerMessage):
    """One pane's results. `stage` names the score that ranked them (bm25, vector, fusion); a
    hybrid search without a model falls back to BM25 and says so in `note`; `no_model` marks a
    vector search that could not run because no model is installed."""

    def __init__(self, epoch: int, *, mode: str, generation: int, response: Any = None, error: str | None = None,
                 seconds: float = 0.0, stage: str = "", note: str = "", no_model: bool = False) -> None:
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
    def __init__(self, epoch: int, *, progress: Any) -> None:
        super().__init__(epoch)
        self.progress = progress


class InstallDone(WorkerMessage):
    def __init__(self, epoch: int, *, report: Any = None, error: str | None = None, cancelled: bool = False) -> None:
        super().__init__(epoch)
        self.report = report
        self.error = error
        self.cancelled = cancelled


class StatusDone(WorkerMessage):
    def __init__(self, epoch: int, *, status: list[Any] | None = None, error: str | None = None) -> None:
        super().__init__(epoch)
        self.status = status or []  # status_view.Section list
        self.error = error


class SearchProgress(WorkerMessage):
    """On-demand embedding inside a vector/hybrid pane search (EmbedProgress)."""

    def __init__(self, epoch: int, *, mode: str, generation: int, progress: Any) -> None:
        super().__init__(epoch)
        self.mode = mode
        self.generation = generation
        self.progress = progress


class EmbedProgressMessage(WorkerMessage):
    """Background embedding after unlock / ingest / a record change (EmbedProgress)."""

    def __init__(self, epoch: int, *, job: int, progress: Any) -> None:
        super().__init__(epoch)
        self.job = job
        self.progress = progress


class EmbedDone(WorkerMessage):
    def __init__(self, epoch: int, *, job: int, report: Any = None, vectors: int = 0, error: str | None = None,
                 not_installed: bool = False, cancelled: bool = False) -> None:
        super().__init__(epoch)
        self.job = job
        self.report = report
        self.vectors = vectors
        self.error = error
        self.not_installed = not_installed
        self.cancelled = cancelled
