"""One unlocked vault as the engine's work sees it, and the guard that drops late work.

`VaultContext` holds what a search, an ask or a background job needs for one vault: the vault
and its latest records, the vault's in-memory index, the embedding model bound to this vault's
policy, the device-only flag, the settings, and a `LockGuard`. The facade makes one per call;
the helpers (searching.py, asking.py, jobs.py) take it and never call back into the facade.

A lock anywhere bumps the engine's `LockEpoch`. Work records the epoch when it starts (a
`LockGuard`); before it reports, and between network attempts, it checks the guard: a lock
meanwhile, or a change to the records it answers from, makes the result stale.

Nothing here loads numpy, the segmenter or a model: those load in the methods that use them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..config import Config
from ..errors import BudgetExceededError, CancelledError
from ..index.gcpause import gc_paused
from ..index.reports import BUDGET_SECONDS, EmbedProgress, IndexReport
from .session import OpenVault, OpenVaults
from .threads import lower_thread_priority

if TYPE_CHECKING:
    from ..egress import SentChunk
    from ..index.cache import IndexCache, VaultIndex
    from ..index.embedding import Embedder
    from ..models.remote import CallContext
    from ..vault.records import Record
    from ..vault.store import UnlockedVault

EmbedProgressFn = Callable[[EmbedProgress], None]
LOCKED_MESSAGE = "The vault was locked; nothing more was sent."


class LockEpoch:
    """Counts locks in this process; work started before the latest lock must not report."""

    def __init__(self) -> None:
        self._value = 0
        self._lock = threading.Lock()

    @property
    def value(self) -> int:
        return self._value

    def bump(self) -> None:
        with self._lock:
            self._value += 1


@dataclass(frozen=True)
class LockGuard:
    """Work on one vault started at one lock epoch, optionally answering from known revisions
    of some records. `valid()` turns false for good after a lock, or when one of those records
    changed or went away."""

    epoch: LockEpoch
    started: int
    vault_open: Callable[[], bool]
    records: Callable[[], dict[str, Record]] | None = None
    revisions: dict[str, int] = field(default_factory=dict)

    def valid(self) -> bool:
        if self.epoch.value != self.started or not self.vault_open():
            return False
        if not self.revisions or self.records is None:
            return True
        current = self.records()
        return all(record_id in current and current[record_id].revision == rev
                   for record_id, rev in self.revisions.items())

    def locked(self) -> bool:
        """A lock came since the work started (cheap: what a request in flight polls)."""
        return self.epoch.value != self.started or not self.vault_open()

    def check(self, message: str = LOCKED_MESSAGE) -> None:
        """Raise CancelledError (with `message`) when the work is stale."""
        if not self.valid():
            raise CancelledError(message)

    def with_sources(self, revisions: dict[str, int]) -> LockGuard:
        """The same guard, also stale once any of these records changes revision or goes away."""
        return LockGuard(self.epoch, self.started, self.vault_open, self.records, dict(revisions))


class EmbedderSlot:
    """The embedding model, loaded once per process on first use and shared by every vault
    (each vault binds it to its own policy); forgotten when a model install changes the files."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()

    def get(self) -> Embedder:
        """`[rag.embedding]`'s service, else the local model; ModelError when none is usable."""
        with self._lock:
            if self._embedder is None:
                self._embedder = load_embedder(self._config)
            return self._embedder

    @property
    def loaded(self) -> bool:
        return self._embedder is not None

    def forget(self) -> None:
        with self._lock:
            self._embedder = None


def load_embedder(config: Config) -> Embedder:
    """`[rag.embedding]`'s remote service when configured (nothing is sent here), else the
    local ONNX model named by `[rag]`; raises ModelError when no local model is usable."""
    rag = config.rag
    if rag.embedding is not None:
        from ..models.remote_embed import RemoteEmbedder

        return RemoteEmbedder(rag.embedding, rag.http)
    from ..models.local_onnx import LocalEmbedder

    return LocalEmbedder(rag.local_model_dir, profile=rag.local_model_profile, threads=rag.local_threads,
                         max_tokens=rag.max_tokens)


class EngineState:
    """What the engine holds for every unlocked vault: the vaults themselves, their indexes
    (one LRU cache), the embedding model, the lock epoch and the settings."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.vaults = OpenVaults()
        self.epoch = LockEpoch()
        self.models = EmbedderSlot(config)
        self._indexes: IndexCache | None = None
        self._indexes_lock = threading.Lock()

    @property
    def indexes(self) -> IndexCache:
        """The in-memory indexes of unlocked vaults (LRU within the limits), made on first use."""
        indexes = self._indexes
        if indexes is None:
            from ..index.cache import IndexCache

            with self._indexes_lock:
                if self._indexes is None:
                    self._indexes = IndexCache(self.config.rag.limits)
                indexes = self._indexes
        return indexes

    def built_indexes(self) -> IndexCache | None:
        """The index cache if any index was made (a lock then has something to save or drop)."""
        return self._indexes

    def context(self, vault_ref: str) -> VaultContext:
        """The unlocked vault with this id (or name); LockedError when it is not unlocked."""
        return VaultContext(self, self.vaults.get(vault_ref))


class VaultContext:
    """One unlocked vault: see the module docstring."""

    def __init__(self, state: EngineState, entry: OpenVault) -> None:
        self._state = state
        self.entry = entry
        self.vault: UnlockedVault = entry.vault
        self.vault_id: str = entry.vault.vault_id
        self.config = state.config

    @property
    def device_only(self) -> bool:
        """Never send this vault's data to a non-loopback service (read from the vault each time:
        another process may have changed it)."""
        return bool(self.vault.settings().get("device_only", False))

    def is_open(self) -> bool:
        return self.vault_id in self._state.vaults

    def records(self) -> dict[str, Record]:
        """Latest revision of every record by id, refreshed when any process changed the vault."""
        return self.entry.latest_records()

    def guard(self) -> LockGuard:
        """A guard for work starting now."""
        return LockGuard(self._state.epoch, self._state.epoch.value, self.is_open, self.records)

    def cached_index(self) -> VaultIndex | None:
        """The vault's index if one is in the cache (as it was last synced; nothing is built)."""
        indexes = self._state.built_indexes()
        return indexes.peek(self.vault_id) if indexes is not None else None

    def index(self) -> VaultIndex:
        """The up-to-date in-memory index (restored from its snapshot, built, or refreshed)."""
        from .indexing import current_index

        entry, indexes = self.entry, self._state.indexes
        index = indexes.peek(self.vault_id)
        if (index is not None and index.synced_counter == entry.counter == self.vault.change_counter()
                and index.policy_tag == self.vault.policy_tag()):
            indexes.get(self.vault_id)  # nothing changed: skip copying every record per query
            return index
        with gc_paused():  # decrypting records and restoring or building the index are bulk allocations
            return current_index(indexes, self.config.rag.limits, entry, *entry.latest_counted())

    def load_embedder(self) -> Embedder:
        """The process's embedding model, unbound; ModelError when none is usable."""
        return self._state.models.get()

    def embedder(self, cancel: threading.Event | None = None, guard: LockGuard | None = None) -> Embedder:
        """The model bound to this vault: a remote service refuses a device-only vault's data when
        it is not on loopback, and stops at a lock (or `guard`) between HTTP attempts."""
        return self.load_embedder().bind(self.call_context(cancel, guard or self.guard()))

    def call_context(self, cancel: threading.Event | None, guard: LockGuard,
                     stale: str = LOCKED_MESSAGE, sends: tuple[SentChunk, ...] = ()) -> CallContext:
        """Controls for one call to a model service on this vault's behalf: a lock cuts a
        request that is waiting; `stale` is the message when the guard turns stale; requests are written to the
        vault's egress log (egress_ops.py) with the chunks they carry (`sends`)."""
        from ..models.remote import CallContext
        from .egress_ops import VaultEgress

        return CallContext(cancel=cancel, check=lambda: guard.check(stale), stop=guard.locked,
                           device_only=self.device_only,
                           egress=VaultEgress(self.vault, lambda: self._state.built_indexes()), sends=sends)

    def ensure_vectors(self, *, budget_seconds: float = BUDGET_SECONDS, progress: EmbedProgressFn | None = None,
                       cancel: threading.Event | None = None, embed_missing: bool = True) -> IndexReport:
        """Embed every chunk that has no vector yet (encrypted cache first)."""
        from ..index.embedding import ensure_vectors

        guard = self.guard()
        embedder = self.embedder(cancel, guard)
        return ensure_vectors(self.index(), embedder, self.vault, budget_seconds=budget_seconds, progress=progress,
                              cancel=cancel, still_valid=guard.valid, embed_missing=embed_missing,
                              priority=self.entry.embed_priority())

    def embed_in_background(self, *, progress: EmbedProgressFn | None = None,
                            cancel: threading.Event | None = None) -> IndexReport:
        """From a worker thread: lower its CPU priority (searches stay fast meanwhile) and embed
        in budgeted slices until every chunk has a vector; resumable through the encrypted cache."""
        lower_thread_priority()
        while True:
            try:
                return self.ensure_vectors(progress=progress, cancel=cancel)
            except BudgetExceededError:
                continue  # nobody waits on background work: go on with the next slice

    def vector_count(self) -> int:
        vectors = self.index().vectors
        return len(vectors) if vectors is not None else 0
