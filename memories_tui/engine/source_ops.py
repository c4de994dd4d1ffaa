"""The engine's "notes where they already live" methods: registered source folders and
importers of other apps' exports. `Engine` inherits them; the work is in source_list.py,
source_sync.py and importers/.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..errors import ErrorCode
from ..serial import Jsonable
from .source_list import SourceSpec  # SourceInfo's field: read back from the wire at run time

if TYPE_CHECKING:
    from .context import VaultContext
    from .importers.common import ImportReport
    from .parts import EngineParts
    from .source_sync import SourceSyncReport
    from .source_watch import SourceWatcher, WatchedEngine
    from .types import IngestProgress

ProgressFn = Callable[["IngestProgress"], None]


@dataclass(frozen=True)
class SourceInfo(Jsonable):
    """A registered folder with what the vault holds of it now."""

    source: SourceSpec
    records: int
    gone: list[str]  # files whose card is marked "source gone"
    present: bool  # the folder is there now
    last_sync: float = 0.0  # when this engine last synced it (0: not since it started)
    skipped: int = 0  # files its last whole-folder sync skipped (not text, not UTF-8, too large, links)
    pending: int = 0  # files changed, new or deleted since the last sync, not yet taken in (by size and time)


class SourceOperations:
    """Mixed into `Engine`."""

    def _parts(self) -> EngineParts:
        return cast("EngineParts", self)

    def _runs(self) -> dict[str, tuple[float, int]]:
        """source id -> (time, files skipped) of this engine's last sync of it (the resident
        engine's watcher syncs there too, so a front end asking it sees the watcher's work)."""
        runs: dict[str, tuple[float, int]] = self.__dict__.setdefault("_source_runs", {})
        return runs

    def _ran(self, reports: list[SourceSyncReport], whole: bool) -> list[SourceSyncReport]:
        import time

        runs = self._runs()
        for report in reports:
            skipped = report.count("skipped") if whole else runs.get(report.source.id, (0.0, 0))[1]
            runs[report.source.id] = (time.time(), skipped)
        return reports

    def _ctx(self, vault_id: str) -> VaultContext:
        return self._parts()._state.context(vault_id)

    def add_source(self, vault_id: str, folder: Path, *, globs: list[str] | None = None,
                   excludes: list[str] | None = None, take_over: bool = False) -> SourceSpec:
        """Register `folder` for this vault on this home (kept in the encrypted settings). A folder
        whose notes the cards of a source this home does not have hold already (another device's,
        or one removed here) is refused, or with `take_over` added as that source
        (source_elsewhere.py)."""
        from ..errors import InputRefusedError
        from ..i18n import msg
        from ..vault.create import now_iso
        from .folders import shown
        from .source_elsewhere import kept_elsewhere
        from .source_list import add_source, load_sources

        ctx = self._ctx(vault_id)
        home = self._parts().home

        def same_as(where: Path) -> str | None:
            found = kept_elsewhere(ctx.records(), {s.id for s in load_sources(ctx.vault, home)}, where)
            if found is None or take_over:
                return found[0] if found is not None else None
            raise InputRefusedError(msg(
                "The notes of {path} are in this vault already: {count} cards of source {id}, which this home does "
                "not have (another device keeps the folder in step, or the source was removed here). Adding it "
                "again would make a second card of each note; on another device's folder, its notes reach this "
                "one through `memories sync`. To keep those same cards in step from here (that device no longer "
                "does, or both should), add it with --take-over.", path=shown(folder), count=found[1], id=found[0]),
                code=ErrorCode.SOURCE_EXISTS)

        return add_source(ctx.vault, home, folder, list(globs or []), list(excludes or []), now_iso(), same_as)

    def list_sources(self, vault_id: str) -> list[SourceInfo]:
        from .source_list import load_sources
        from .source_sync import pending_files

        ctx = self._ctx(vault_id)
        current = ctx.records()
        records = [r for r in current.values() if r.kind == "card"]
        out = []
        for spec in load_sources(ctx.vault, self._parts().home):
            mine = [r for r in records if r.metadata.get("source_id") == spec.id]
            gone = sorted(str(r.metadata.get("source_rel")) for r in mine if "source_gone" in r.metadata)
            last, skipped = self._runs().get(spec.id, (0.0, 0))
            out.append(SourceInfo(spec, len(mine), gone, Path(spec.path).is_dir(), last, skipped,
                                  pending_files(ctx.vault, current, spec)))
        return out

    def source_specs(self, vault_id: str) -> list[SourceSpec]:
        """The vault's sources on this home (no counting of cards: cheap enough to ask often)."""
        from .source_list import load_sources

        return load_sources(self._ctx(vault_id).vault, self._parts().home)

    def watch_sources(self) -> SourceWatcher | None:
        """Start keeping the sources of unlocked vaults in step (for a resident engine; see
        source_watch.py); None when `[sources] watch = false`. Stop it before locking for good."""
        settings = self._parts().config.sources
        if not settings.watch:
            return None
        from .source_watch import SourceWatcher

        return SourceWatcher(cast("WatchedEngine", self), debounce_ms=int(settings.debounce_seconds * 1000),
                             rescan_seconds=settings.rescan_seconds).start()

    def remove_source(self, vault_id: str, ref: str) -> SourceSpec:
        """Forget a source; its cards stay (delete them as any record)."""
        from .source_list import remove_source

        return remove_source(self._ctx(vault_id).vault, self._parts().home, ref)

    def sync_sources(self, vault_id: str, ref: str | None = None, *, prune: bool | None = None,
                     progress: ProgressFn | None = None, cancel: threading.Event | None = None,
                     full: bool = False) -> list[SourceSyncReport]:
        """Bring the vault in step with one source (`ref`) or all; `prune` (default `[sources]
        prune`) removes cards whose file is gone instead of marking them; `full` reads and hashes
        every file (a file rewritten with the same size and time is otherwise taken as unchanged)."""
        from ..vault.create import now_iso
        from .fits import fit_checker
        from .source_list import find_source, load_sources
        from .source_sync import sync_source

        ctx = self._ctx(vault_id)
        sources = load_sources(ctx.vault, self._parts().home)
        if ref is not None:
            sources = [find_source(sources, ref)]
        pruning = self._parts().config.sources.prune if prune is None else prune
        return self._ran([sync_source(ctx.vault, ctx.records(), spec, prune=pruning, stamp=now_iso(), progress=progress,
                                      cancel=cancel, check_fits=fit_checker(ctx),
                                      full=full) for spec in sources], whole=True)

    def sync_changed(self, vault_id: str, source_id: str, changed: Collection[str]) -> list[SourceSyncReport]:
        """A watcher's sync of one source: only the `changed` paths are looked at (the whole
        folder when one of them is a folder or a link)."""
        from ..vault.create import now_iso
        from .fits import fit_checker
        from .source_list import find_source, load_sources
        from .source_sync import sync_source

        ctx = self._ctx(vault_id)
        spec = find_source(load_sources(ctx.vault, self._parts().home), source_id)
        return self._ran([sync_source(ctx.vault, ctx.records(), spec, prune=self._parts().config.sources.prune,
                                      stamp=now_iso(), check_fits=fit_checker(ctx),
                                      changed=changed)], whole=False)

    def _refuse_a_source(self, vault_id: str, path: Path) -> None:
        """A folder that is (or holds, or lies in) a source is refused: its notes are the source's
        cards already, and an import knows them by other keys (two cards per note)."""
        from ..errors import InputRefusedError
        from ..i18n import msg
        from .folders import shown
        from .source_list import load_sources

        try:
            where = path.expanduser().resolve()
        except (OSError, RuntimeError):
            return  # the importer says what is wrong with it
        if not where.is_dir():
            return  # an export file (zip, enex, jex) is not a source's notes
        for spec in load_sources(self._ctx(vault_id).vault, self._parts().home):
            folder = Path(spec.path)
            if where == folder or folder in where.parents or where in folder.parents:
                raise InputRefusedError(msg(
                    "{path} is the folder of source {id} (or overlaps it); its notes are already kept in step "
                    "as cards, and importing them too would give two cards per note. Use `memories source sync "
                    "{vault}`, or `memories source remove {vault} {id}` first to import instead. Nothing was written.",
                    path=shown(path), id=spec.id, vault=vault_id), code=ErrorCode.SOURCE_EXISTS)

    def import_notes(self, vault_id: str, app: str, path: Path, *, dry_run: bool = False,
                     progress: ProgressFn | None = None, cancel: threading.Event | None = None,
                     assets: bool = False) -> ImportReport:
        """Import another app's export (obsidian, notion, evernote, joplin, bear); importing again
        changes only what changed in the export. `assets`: an Obsidian vault's attachments become
        asset records."""
        from .fits import fit_checker
        from .importers import run_import

        ctx = self._ctx(vault_id)
        self._refuse_a_source(vault_id, path)
        return run_import(ctx.vault, ctx.records, app, path, dry_run=dry_run, progress=progress, cancel=cancel,
                          check_fits=fit_checker(ctx), assets=assets)
