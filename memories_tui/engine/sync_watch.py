"""Syncing unlocked vaults in the background while a resident engine (daemon or TUI) holds them.

One thread looks every second at the vaults unlocked now that have a sync target: a vault is
synced when `[sync] every_minutes` have passed since its last background sync (on the engine's
clock, which tests move), and a few seconds after a local change (its change counter moved
since the last sync and then stayed still for QUIET_SECONDS, so a burst of edits is one sync).
The counter is read before a sync starts, so an edit made while one runs is synced right after
it; the sync's own writes move the counter too, and are told apart by asking whether any record
changed since the sync read the vault. A vault just unlocked (each unlock has its own serial) is
synced at once, which catches up what the other devices did. Nothing runs for a locked vault:
its keys and target are only known while it is unlocked; a sync that a lock stops is not a failure.
A failure is logged by its error code (never a title or a file name) and kept as the target's last
error, which `memories sync status` shows; the thread carries on and tries again after
RETRY_SECONDS, doubling up to `every_minutes` — local changes made meanwhile wait for that try (a
person typing beside a target that is away would otherwise start a failing sync every few seconds).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Protocol

from ..errors import ErrorCode, MemoriesError
from ..testhooks import now

log = logging.getLogger("memories.daemon")
POLL_SECONDS = 1.0
QUIET_SECONDS = 2.0  # a change is synced once this long passes without another
RETRY_SECONDS = 60.0  # after a failed sync (a sync tool still copying, a target away for a moment)
# How long stopping (daemon stop, quitting the TUI) waits for a background sync still uploading. Its
# reads end at the stop at once; an upload a server holds back would hold the quit for the client's
# timeouts (minutes), so it is left as a killed sync is: the process ends with it, what it committed
# is in the vault's outbox for the next sync, and while the process lives the sync keeps the vault's
# sync lock (exclusive.py), so no other sync of the vault starts before it ends.
STOP_WAIT_SECONDS = 2.0


class SyncedEngine(Protocol):
    """What the background sync needs of the engine (named here so it does not import the facade)."""

    def unlocked_ids(self) -> list[str]: ...

    def has_sync_target(self, vault_id: str) -> bool: ...

    def local_change_mark(self, vault_id: str) -> int: ...

    def unlock_serial(self, vault_id: str) -> int: ...

    def has_local_changes(self, vault_id: str) -> bool: ...

    def background_sync(self, vault_id: str, cancel: threading.Event | None = None) -> None: ...


@dataclass
class _Seen:
    synced_at: float  # the engine clock at the last background sync
    mark: int  # the vault's change counter when it started (or when found to hold no local change)
    serial: int  # which unlock of the vault it was
    pending: int = -1  # the counter last seen changed since, and when (monotonic)
    moved_at: float = 0.0
    failures: int = 0  # failed syncs in a row: the next try comes sooner than `every_minutes`


@dataclass
class SyncWatchState:
    """What the background sync did, for a front end to show and tests to wait on."""

    syncs: int = 0
    errors: dict[str, str] = field(default_factory=dict)  # vault id -> error code of its last failed sync


class SyncScheduler:
    def __init__(self, engine: SyncedEngine, *, every_minutes: float) -> None:
        self.engine = engine
        self.every_seconds = every_minutes * 60
        self.state = SyncWatchState()
        self._seen: dict[str, _Seen] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> SyncScheduler:
        self._thread = threading.Thread(target=self._run, name="memories-sync-background", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=STOP_WAIT_SECONDS)

    def _run(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            try:
                self.tick()
            except Exception as exc:  # noqa: BLE001 - the thread outlives any one failure
                log.warning("sync: background pass failed: %s", type(exc).__name__)

    def due(self, vault_id: str) -> bool:
        """Whether this unlocked vault should sync now (see the module's docstring)."""
        seen = self._seen.get(vault_id)
        if seen is None or seen.serial != self.engine.unlock_serial(vault_id):
            return True  # just unlocked (or first seen): catch up at once
        wait = self.every_seconds
        if seen.failures:
            wait = min(wait, RETRY_SECONDS * 2 ** (seen.failures - 1))
        if now() - seen.synced_at >= wait:
            return True
        if seen.failures:
            return False  # a change does not hurry a try at a target that just failed: the backoff does
        mark = self.engine.local_change_mark(vault_id)
        if mark == seen.mark:
            return False
        if mark != seen.pending:  # changed since the last look: wait for it to settle
            seen.pending, seen.moved_at = mark, time.monotonic()
            return False
        if time.monotonic() - seen.moved_at < QUIET_SECONDS:
            return False
        if self.engine.has_local_changes(vault_id):
            return True
        seen.mark = mark  # only the sync's own writes (or a pull by another process) moved it
        return False

    def tick(self) -> None:
        """One pass over the vaults unlocked now; a locked vault is forgotten, so unlocking it
        again syncs it at once."""
        unlocked = set(self.engine.unlocked_ids())
        for vault_id in list(self._seen):
            if vault_id not in unlocked:
                del self._seen[vault_id]
        for vault_id in sorted(unlocked):
            if self._stop.is_set():
                return
            try:
                if not self.engine.has_sync_target(vault_id) or not self.due(vault_id):
                    continue
            except MemoriesError:
                continue  # locked this moment
            self._sync(vault_id)

    def _sync(self, vault_id: str) -> None:
        started = time.monotonic()
        try:
            serial = self.engine.unlock_serial(vault_id)
            mark = self.engine.local_change_mark(vault_id)  # before: an edit made during the sync is not counted
        except MemoriesError:
            self._seen.pop(vault_id, None)  # locked this moment
            return
        previous = self._seen.get(vault_id)
        failures = previous.failures if previous is not None and previous.serial == serial else 0
        try:
            self.engine.background_sync(vault_id, self._stop)  # stop() ends a sync still reading at once
        except MemoriesError as exc:
            if exc.code == ErrorCode.VAULT_LOCKED:
                self._seen.pop(vault_id, None)  # locked while it ran: not a failure; its next unlock syncs again
                log.info("sync: background sync of %s stopped by a lock", vault_id)
                return
            if exc.code == ErrorCode.CANCELLED and self._stop.is_set():
                log.info("sync: background sync of %s stopped with the engine", vault_id)
                return
            self.state.errors[vault_id] = exc.code
            log.info("sync: background sync of %s failed: %s", vault_id, exc.code)
            failures += 1
        except Exception as exc:  # noqa: BLE001 - the thread outlives any one failure
            self.state.errors[vault_id] = type(exc).__name__
            log.warning("sync: background sync of %s failed: %s", vault_id, type(exc).__name__)
            failures += 1
        else:
            self.state.errors.pop(vault_id, None)
            self.state.syncs += 1
            failures = 0
            log.info("sync: background sync of %s in %.2f s", vault_id, time.monotonic() - started)
        self._seen[vault_id] = _Seen(now(), mark, serial, failures=failures)
