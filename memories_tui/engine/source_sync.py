"""`source sync`: bring a vault in step with a registered folder.

Each file of the source is one card, found again by its path under the folder. A file whose
size and modification time match what the card recorded is not even read; one that is read
and hashes the same is `unchanged` (no write either way). A changed file is a new revision,
a new file a new card, and a new file with the bytes of a card whose file vanished is that
card `moved` (same id, same history). A card whose file is gone is marked `gone` (a metadata
revision, once) and removed only when pruning. Files that cannot be ingested are `skipped`
with the reason; a folder that is missing refuses the sync (an unmounted drive must not
look like every note deleted).
"""

from __future__ import annotations

import json
import os
import threading
import unicodedata
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..errors import CancelledError, ErrorCode, InputRefusedError
from ..i18n import N_, msg
from ..serial import Jsonable, json_meta
from ..vault.records import NewRecord, Record, RecordUpdate
from .folders import TEXT_SUFFIXES, FolderScan, refusal_reason, scan_folder, shown
from .ingest import MAX_BATCH_CHARS, FitCheck
from .source_list import SourceSpec
from .source_stat import all_unchanged
from .sources import SourceFile, read_source
from .types import IngestProgress

if TYPE_CHECKING:
    from ..vault.store import UnlockedVault

STAT_BLOB = "source-stat-"  # + the source's id: each file's stat at the last sync
SyncStatus = Literal["created", "updated", "unchanged", "moved", "gone", "pruned", "skipped"]


@dataclass(frozen=True)
class SourceSyncItem(Jsonable):
    file: str  # under the source folder (POSIX, NFC)
    status: SyncStatus
    id: str | None = None
    revision: int | None = None
    title: str = ""
    reason: str = field(default="", metadata=json_meta(omit=lambda r: not r.reason))


@dataclass(frozen=True)
class SourceSyncReport(Jsonable):
    source: SourceSpec
    items: list[SourceSyncItem]

    def count(self, status: str) -> int:
        return sum(1 for i in self.items if i.status == status)


@dataclass
class _Batch:
    adds: list[tuple[str, SourceFile, dict[str, object]]] = field(default_factory=list)
    updates: list[tuple[str, SyncStatus, RecordUpdate, str]] = field(default_factory=list)  # rel, status, change, body
    replaced: list[Record] = field(default_factory=list)
    chars: int = 0


def sync_source(vault: UnlockedVault, current: dict[str, Record], spec: SourceSpec, *, prune: bool,
                stamp: str, progress: Callable[[IngestProgress], None] | None = None,
                cancel: threading.Event | None = None, check_fits: FitCheck | None = None,
                changed: Collection[str] | None = None, full: bool = False) -> SourceSyncReport:
    """`changed`: the paths a file watcher saw change; only they are looked at, unless one of
    them is a folder or a link (then, as without it, the whole folder is walked). `full`: read
    and hash every file, even those whose size and time are as the last sync saw them."""
    root = Path(spec.path)
    if not root.is_dir():
        raise InputRefusedError(msg("Source folder {path} is missing or not a folder (an unmounted drive?); "
                                    "nothing was changed. Remove the source or bring the folder back.",
                                    path=spec.path), code=ErrorCode.SOURCE_MISSING)
    mine = {str(r.metadata.get("source_rel")): r for r in current.values()
            if r.kind == "card" and r.metadata.get("source_id") == spec.id}
    adopt = {str(r.metadata.get("source_path")): r for r in current.values()
             if r.kind == "card" and "source_id" not in r.metadata and r.metadata.get("source_path")}
    stat_name = STAT_BLOB + spec.id
    table = _Table(vault, stat_name, full)
    if changed is None and not full:
        quick = all_unchanged(spec.path, mine, table.same, spec)
        if quick is not None:
            if progress:
                progress(IngestProgress("written", len(quick[0]), len(quick[0])))
            return SourceSyncReport(spec, sorted([SourceSyncItem(rel, "unchanged", c.id, c.revision, c.title)
                                                  for rel, c in quick[0]]
                                                 + [SourceSyncItem(rel, "skipped", reason=why) for rel, why in quick[1]],
                                                 key=lambda i: i.file))
    seen: dict[str, os.stat_result] = {}
    partial = _changed_only(root, changed, set(mine)) if changed is not None else None
    scan = FolderScan(partial[0], []) if partial is not None else scan_folder(root, with_stats=True)
    items: list[SourceSyncItem] = []
    files: list[tuple[str, Path]] = []
    for path in scan.readable:
        rel = _rel(path, root)
        if spec.wants(rel):
            files.append((rel, path))
    for path, reason in scan.skipped:
        rel = _rel(path, root)
        if spec.wants(rel) or path.is_symlink():  # a glob picks files; a link not followed is always said
            items.append(SourceSyncItem(rel, "skipped", reason=reason))
    present = {rel for rel, _ in files}
    vanished = {rel: r for rel, r in mine.items() if rel not in present and (partial is None or rel in partial[1])}
    by_hash = {str(r.metadata.get("sha256")): rel for rel, r in vanished.items()}
    batch = _Batch()
    for n, (rel, path) in enumerate(files, 1):
        if cancel is not None and cancel.is_set():
            raise CancelledError(msg("Sync cancelled; files already written stay written."))
        if progress:
            progress(IngestProgress("read", n, len(files), rel))
        old = mine.get(rel) or (adopt.get(str(path.resolve())) if adopt else None)
        try:
            st = scan.stats.get(path) or path.stat()
        except OSError:  # its card (if any) is left as it was: the next sync decides
            items.append(SourceSyncItem(rel, "skipped", reason=N_("vanished while the folder was read")))
            continue
        meta_stat = {"source_size": st.st_size, "source_mtime_ns": st.st_mtime_ns}
        seen[rel] = st
        if (not full and old is not None and rel in mine and "source_gone" not in old.metadata
                and table.same(rel, old, st)):
            items.append(SourceSyncItem(rel, "unchanged", old.id, old.revision, old.title))
            continue
        try:
            src = read_source(path)
        except InputRefusedError as exc:  # its stat came with the listing: it may have gone since
            items.append(SourceSyncItem(rel, "skipped", reason=N_("vanished while the folder was read") if not
                                        os.path.lexists(path) else refusal_reason(exc, path)))
            continue
        title = unicodedata.normalize("NFC", src.title)
        meta: dict[str, object] = {"source": unicodedata.normalize("NFC", path.name), "source_path": str(src.resolved),
                                   "sha256": src.sha256, "source_id": spec.id, "source_rel": rel, **meta_stat}
        if old is None and src.sha256 in by_hash:  # the same bytes under a new name: a move
            old = vanished.pop(by_hash.pop(src.sha256))
            status: SyncStatus = "moved"
        else:
            status = "updated"
        if old is None:
            batch.adds.append((rel, src, meta))
        elif old.metadata.get("sha256") == src.sha256 and old.title == title and status != "moved" \
                and "source_gone" not in old.metadata and rel in mine:
            items.append(SourceSyncItem(rel, "unchanged", old.id, old.revision, old.title))
            continue
        else:
            body = None if old.metadata.get("sha256") == src.sha256 and old.body == src.body else src.body
            batch.updates.append((rel, status, RecordUpdate(old.id, title=title, body=body, metadata=meta,
                                                            tags=src.tags or None), src.body))
            batch.replaced.append(old)
        batch.chars += len(src.body)
        if batch.chars > MAX_BATCH_CHARS:
            items += _flush(vault, batch, check_fits)
            batch = _Batch()
    for rel, old in sorted(vanished.items()):
        if not _really_gone(root, old):
            del vanished[rel]
            items.append(SourceSyncItem(rel, "skipped", old.id, old.revision, old.title,
                                  N_("not found by this sync, but its file or folder is still there (unreadable, or "
                                     "the folder vanished during the sync); its card is left as it was")))
        elif prune:
            batch.replaced.append(old)
            items.append(SourceSyncItem(rel, "pruned", old.id, old.revision, old.title))
        elif "source_gone" in old.metadata:
            items.append(SourceSyncItem(rel, "gone", old.id, old.revision, old.title))
        else:
            batch.updates.append((rel, "gone", RecordUpdate(old.id, metadata={**old.metadata, "source_gone": stamp}),
                                  ""))
    items += _flush(vault, batch, check_fits)
    if prune:
        for old in vanished.values():
            vault.delete(old.id)
    if progress:
        progress(IngestProgress("written", len(files), len(files)))
    table.save(seen, items, partial is not None)
    return SourceSyncReport(spec, sorted(items, key=lambda i: i.file))


class _Table:
    """Each file's stat beside its card's revision, kept after a read that found the bytes
    unchanged (in an encrypted cache blob: derived data, so no card revision), so that a file
    touched but not changed is read once, not at every sync. Loaded only when a card's own
    record of size and time does not match."""

    def __init__(self, vault: UnlockedVault, name: str, full: bool) -> None:
        self.vault, self.name = vault, name
        self._rows: dict[str, list[int]] | None = {} if full else None

    def rows(self) -> dict[str, list[int]]:
        if self._rows is None:
            raw = self.vault.get_blob(self.name)
            try:
                found = json.loads(raw) if raw else {}
            except ValueError:
                found = {}
            self._rows = found if isinstance(found, dict) else {}
        return self._rows

    def same(self, rel: str, card: Record, st: os.stat_result) -> bool:
        """Whether the file is as the last sync left it."""
        if card.metadata.get("source_size") == st.st_size and card.metadata.get("source_mtime_ns") == st.st_mtime_ns:
            return True
        return self.rows().get(rel) == [st.st_size, st.st_mtime_ns, st.st_ino, card.revision]

    def save(self, seen: dict[str, os.stat_result], items: list[SourceSyncItem], partial: bool) -> None:
        old = self.rows()
        now = dict(old) if partial else {}
        for item in items:
            st = seen.get(item.file)
            if st is not None and item.revision is not None and item.status in ("unchanged", "created", "updated", "moved"):
                now[item.file] = [st.st_size, st.st_mtime_ns, st.st_ino, item.revision]
        if now != old:
            self.vault.put_cache_blob(self.name, json.dumps(now).encode())


def _flush(vault: UnlockedVault, batch: _Batch, check_fits: FitCheck | None) -> list[SourceSyncItem]:
    """Write one batch: the new cards and new revisions, in one transaction."""
    if check_fits is not None and (batch.adds or batch.updates):
        check_fits([(s.title, s.body) for _, s, _ in batch.adds]
                   + [(u.title or "", b) for _, st, u, b in batch.updates if st != "gone"], batch.replaced)
    added = vault.add_many([NewRecord("card", unicodedata.normalize("NFC", s.title), s.body, tags=s.tags,
                                      metadata=m) for _, s, m in batch.adds]) if batch.adds else []
    updated = vault.update_many([u[2] for u in batch.updates]) if batch.updates else []
    out = [SourceSyncItem(rel, "created", r.id, r.revision, r.title) for (rel, _, _), r in zip(batch.adds, added, strict=True)]
    out += [SourceSyncItem(rel, status, r.id, r.revision, r.title)
            for (rel, status, _, _), r in zip(batch.updates, updated, strict=True)]
    return out


def _changed_only(root: Path, changed: Collection[str], known: set[str]) -> tuple[list[Path], set[str]] | None:
    """(text files to look at, every file's place in scope) for a watcher's changed paths, or
    None when only a walk of the whole folder can tell (a folder or link changed)."""
    readable: list[Path] = []
    scope: set[str] = set()
    for name in changed:
        path = Path(name)
        try:
            parts = path.relative_to(root).parts
        except ValueError:
            return None
        if not parts or any(part.startswith(".") for part in parts):
            continue  # the walk leaves dot-names out too
        if path.is_symlink() or path.is_dir():
            return None
        rel = _rel(path, root)
        if path.exists():
            if not path.is_file():
                return None
            if path.suffix.lower() in TEXT_SUFFIXES:
                readable.append(path)
        elif rel not in known and any(k.startswith(rel + "/") for k in known):
            return None  # a folder of cards went away or was renamed
        scope.add(rel)
    return sorted(readable), scope


def _really_gone(root: Path, card: Record) -> bool:
    """A file the walk did not see is gone only if the folder is still there and the file is
    not: a folder that went away mid-sync or could not be read must not mark its cards gone."""
    where = card.metadata.get("source_path")
    return root.is_dir() and not (isinstance(where, str) and os.path.lexists(where))


def _rel(path: Path, root: Path) -> str:
    """The file's place under the folder, as kept in the card: POSIX and NFC (macOS names come as NFD)."""
    text, prefix = str(path), str(root) + os.sep
    rel = text[len(prefix):] if text.startswith(prefix) else path.relative_to(root).as_posix()
    rel = rel.replace(os.sep, "/") if os.sep != "/" else rel
    return unicodedata.normalize("NFC", shown(Path(rel)) if _undecodable(rel) else rel)


def _undecodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
