"""Keeping sources in step while a resident engine (daemon or TUI) holds their vault.

One thread watches the folders of every unlocked vault's sources with `watchfiles` (inotify,
FSEvents, ReadDirectoryChangesW), waits until changes settle (QUIET_MS without another, a
burst grouped for at most the debounce), then syncs the
sources they touched, as `source sync` would. Where events are unreliable (network mounts)
a full sync every `[sources] rescan_seconds` catches what was missed. Nothing is watched
while a vault is locked (its folder names are in its encrypted settings); when a vault is
unlocked, its sources are synced once at once, which catches up what changed meanwhile.
The thread never stops on a sync's failure: it logs the error code (never a file name).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import MemoriesError

if TYPE_CHECKING:
    from .source_list import SourceSpec
    from .source_sync import SourceSyncReport


class WatchedEngine(Protocol):
    """What the watcher needs of the engine (named here so it does not import the facade)."""

    def unlocked_ids(self) -> list[str]: ...

    def source_specs(self, vault_id: str) -> list[SourceSpec]: ...

    def sync_sources(self, vault_id: str, ref: str | None = None) -> list[SourceSyncReport]: ...

    def sync_changed(self, vault_id: str, source_id: str, changed: Collection[str]) -> list[SourceSyncReport]: ...

log = logging.getLogger("memories.daemon")
QUIET_MS = 300  # an editor's save (write, rename, chmod) arrives well within this
POLL_MS = 1000  # how often the watcher looks at which vaults are unlocked and which sources they have


@dataclass
class WatchState:
    """What the watcher did, for a front end to show and tests to wait on."""

    syncs: int = 0
    last_sync: float = 0.0
    errors: dict[str, str] = field(default_factory=dict)  # source id -> error code of its last failed sync


class SourceWatcher:
    def __init__(self, engine: WatchedEngine, *, debounce_ms: int = 1500, rescan_seconds: float = 300.0) -> None:
        self.engine = engine
        self.debounce_ms = debounce_ms
        self.rescan_seconds = rescan_seconds
        self.state = WatchState()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_plan: dict[str, list[SourceSpec]] = {}

    def start(self) -> SourceWatcher:
        self._thread = threading.Thread(target=self._run, name="memories-sources-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _plan(self) -> dict[str, list[SourceSpec]]:
        """The sources of every vault unlocked now (a vault that cannot say is left out)."""
        plan: dict[str, list[SourceSpec]] = {}
        for vault_id in self.engine.unlocked_ids():
            try:
                plan[vault_id] = self.engine.source_specs(vault_id)
            except MemoriesError:  # e.g. locked this moment; as it was, if it was known
                if vault_id in self._last_plan:
                    plan[vault_id] = self._last_plan[vault_id]
        self._last_plan = plan
        return plan

    def _sync(self, vault_id: str, source_ids: list[str], changed: dict[str, set[str]] | None = None) -> None:
        """Sync these sources: only their `changed` paths when given (events), else whole."""
        for source_id in source_ids:
            if self._stop.is_set():
                return
            started = time.monotonic()
            try:
                paths = (changed or {}).get(source_id)
                reports = (self.engine.sync_changed(vault_id, source_id, paths) if paths
                           else self.engine.sync_sources(vault_id, source_id))
            except MemoriesError as exc:
                self.state.errors[source_id] = exc.code
                log.info("sources: sync of %s failed: %s", source_id, exc.code)
                continue
            except Exception as exc:  # noqa: BLE001 - the watcher outlives any one failure
                self.state.errors[source_id] = type(exc).__name__
                log.warning("sources: sync of %s failed: %s", source_id, type(exc).__name__)
                continue
            self.state.errors.pop(source_id, None)
            self.state.syncs += 1
            self.state.last_sync = time.time()
            written = sum(1 for r in reports for i in r.items if i.status not in ("unchanged", "skipped"))
            log.info("sources: synced %s (%d changed) in %.2f s", source_id, written, time.monotonic() - started)

    def _run(self) -> None:
        while not self._stop.is_set():
            plan = self._plan()
            folders = {s.path: (vault_id, s.id) for vault_id, specs in plan.items() for s in specs
                       if Path(s.path).is_dir()}
            if not folders:
                self._stop.wait(POLL_MS / 1000)
                continue
            self._watch(folders, plan)

    def _watch(self, folders: dict[str, tuple[str, str]], plan: dict[str, list[SourceSpec]]) -> None:
        """Until the plan changes (a vault locked or unlocked, a source added or removed) or stop."""
        import watchfiles

        key = _key(plan)
        last_rescan: float | None = None  # the first pass, once events are being watched, syncs everything:
        # a vault just unlocked catches up, and nothing changed while the watch restarted is missed
        for changes in watchfiles.watch(*folders, stop_event=self._stop, debounce=self.debounce_ms,
                                        step=min(QUIET_MS, self.debounce_ms),
                                        rust_timeout=POLL_MS, yield_on_timeout=True, raise_interrupt=False,
                                        ignore_permission_denied=True):
            touched: dict[str, set[str]] = {}
            paths: dict[str, set[str]] = {}  # source id -> the paths seen changing in it
            for _change, path in changes:
                for folder, (vault_id, source_id) in folders.items():
                    if path == folder or path.startswith(folder + os.sep):
                        touched.setdefault(vault_id, set()).add(source_id)
                        paths.setdefault(source_id, set()).add(path)
            if last_rescan is None or time.monotonic() - last_rescan >= self.rescan_seconds:
                touched = {vault_id: {s.id for s in specs} for vault_id, specs in plan.items()}
                paths = {}
                last_rescan = time.monotonic()
            for vault_id, source_ids in touched.items():
                if vault_id in self.engine.unlocked_ids():
                    self._sync(vault_id, sorted(source_ids), paths)
            if _key(self._plan()) != key:
                return


def _key(plan: dict[str, list[SourceSpec]]) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    return tuple(sorted((vid, tuple(sorted((s.id, s.path) for s in specs))) for vid, specs in plan.items()))
