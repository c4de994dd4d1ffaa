"""Background work every long-running front end needs (the TUI now, the MCP server next).

`BackgroundEmbedding` embeds the chunks of an unlocked vault that have no vector yet, in one
daemon thread at a time, at low thread priority: a request while a job runs for the same
vault and lock epoch makes it run once more when it ends (to pick up new chunks); `stop()`
(lock, vault switch, quit) cancels it, and nothing it reports afterwards is delivered.
`save_index_snapshots` persists freshly built lexical indexes into their vaults.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import CancelledError, MemoriesError, ModelError, describe_error
from ..index.reports import EmbedProgress, IndexReport

if TYPE_CHECKING:
    from ..index.cache import IndexCache
    from .context import EngineState
    from .session import OpenVaults


@dataclass(frozen=True)
class EmbedRunning:
    """Progress of background job `job`, started at lock epoch `epoch`."""

    job: int
    epoch: int
    progress: EmbedProgress


@dataclass(frozen=True)
class EmbedFinished:
    """How background job `job` ended: a report, an error, no model, or cancelled."""

    job: int
    epoch: int
    report: IndexReport | None = None
    vectors: int = 0  # vectors in the index afterwards
    error: str | None = None
    not_installed: bool = False
    cancelled: bool = False


EmbedEvent = EmbedRunning | EmbedFinished
# Delivers an event to the front end (from the job's thread); False: the front end is gone.
Deliver = Callable[[EmbedEvent], bool]


class BackgroundEmbedding:
    """Made by `Engine.background_embedding(deliver)`."""

    def __init__(self, state: EngineState, deliver: Deliver) -> None:
        self._state = state
        self.deliver = deliver
        self._lock = threading.Lock()
        self._job = 0
        self.running: tuple[int, str, int] | None = None  # (job, vault id, lock epoch)
        self._cancel: threading.Event | None = None
        self._again = False
        self.thread: threading.Thread | None = None

    def request(self, vault_id: str) -> bool:
        """Start a job for `vault_id`; False when one already runs for it (it will run again)."""
        epoch = self._state.epoch.value
        with self._lock:
            running = self.running
            if running is not None and running[1:] == (vault_id, epoch):
                self._again = True
                return False
            if self._cancel is not None:
                self._cancel.set()  # a job for another vault or epoch: superseded
            self._job += 1
            job, cancel = self._job, threading.Event()
            self._cancel, self.running, self._again = cancel, (job, vault_id, epoch), False
            # A dedicated daemon thread, not a pooled worker: the job lowers its thread's
            # priority for good, and quitting must never wait for a long embedding.
            thread = self.thread = threading.Thread(target=self._run, args=(vault_id, job, epoch, cancel),
                                                    name=f"memories-embed-{job}", daemon=True)
        thread.start()
        return True

    def active(self, vault_id: str) -> bool:
        running = self.running
        return running is not None and running[1:] == (vault_id, self._state.epoch.value)

    def stop(self) -> None:
        """Cancel the running job; whatever it reports later is dropped."""
        with self._lock:
            if self._cancel is not None:
                self._cancel.set()
            self._cancel, self.running, self._again = None, None, False

    def is_live(self, event: EmbedEvent) -> bool:
        """Does `event` come from the current job, in the current lock epoch?"""
        running = self.running
        return (running is not None and running[0] == event.job and running[2] == event.epoch
                and event.epoch == self._state.epoch.value)

    def finish(self, event: EmbedFinished) -> bool:
        """The front end took the job's final event: forget the job. True when a request came
        in while it ran, so the caller should `request` again."""
        with self._lock:
            again = self._again
            self._cancel, self.running, self._again = None, None, False
        return again

    def _run(self, vault_id: str, job: int, epoch: int, cancel: threading.Event) -> None:
        state = self._state

        def send(event: EmbedEvent) -> None:
            if state.epoch.value == epoch and not cancel.is_set() and not self.deliver(event):
                cancel.set()

        try:
            context = state.context(vault_id)
            context.load_embedder()  # raises ModelError when no usable model is installed
        except ModelError as exc:
            send(EmbedFinished(job, epoch, error=describe_error(exc), not_installed=True))
            return
        except Exception as exc:  # noqa: BLE001 - reported to the front end, never a hung job
            send(EmbedFinished(job, epoch, error=describe_error(exc)))
            return
        try:
            report = context.embed_in_background(progress=lambda p: send(EmbedRunning(job, epoch, p)),
                                                 cancel=cancel)
        except CancelledError:
            send(EmbedFinished(job, epoch, cancelled=True))
        except Exception as exc:  # noqa: BLE001 - reported to the front end, never a hung job
            send(EmbedFinished(job, epoch, error=describe_error(exc)))
        else:
            try:
                vectors = context.vector_count()
            except MemoriesError:  # locked meanwhile: dropped anyway
                vectors = 0
            send(EmbedFinished(job, epoch, report=report, vectors=vectors))


def save_index_snapshots(indexes: IndexCache, vaults: OpenVaults) -> None:
    """Persist changed lexical indexes as AEAD blobs inside their vaults, so an unchanged vault
    is searchable right after the next unlock. A cache: failing only costs a rebuild."""
    for vault_id in indexes.cached():
        index = indexes.peek(vault_id)
        entry = vaults.peek(vault_id)
        if index is None or entry is None or not index.dirty:
            continue
        try:
            entry.vault.put_cache_blobs(index.snapshot_blobs())
        except (MemoriesError, sqlite3.Error):
            pass
