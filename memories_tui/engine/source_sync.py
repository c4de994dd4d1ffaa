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

import os
import threading
import unicodedata
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .. import testhooks
from ..errors import CancelledError, ErrorCode, InputRefusedError
from ..i18n import N_, msg
from ..serial import Jsonable, json_meta
from ..vault.records import NewRecord, Record, RecordUpdate
from .fits import FitCheck, fitting
from .folders import TEXT_SUFFIXES, TRUNCATED, FolderScan, refusal_reason, scan_folder, shown
from .ingest import MAX_BATCH_CHARS
from .source_elsewhere import own_cards
from .source_list import SourceSpec
from .source_stat import all_unchanged, count_pending
from .source_table import StatTable
from .sources import SourceFile, read_source
from .types import IngestProgress

if TYPE_CHECKING:
    from ..vault.store import UnlockedVault

IMPORT_KEYS = frozenset({"import_key", "import_sha256", "import_origin", "import_file"})  # the import's, not the source's
TORN = N_("changed while being read; synced next time")
VANISHED = N_("vanished while the folder was read")
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
    # rel, status, change, body, the card's revision it replaces (None: a metadata-only change)
    updates: list[tuple[str, SyncStatus, RecordUpdate, str, Record | None]] = field(default_factory=list)
    pruned: list[Record] = field(default_factory=list)
    chars: int = 0


def sync_source(vault: UnlockedVault, current: dict[str, Record], spec: SourceSpec, *, prune: bool,
                stamp: str, progress: Callable[[IngestProgress], None] | None = None,
                cancel: threading.Event | None = None, check_fits: FitCheck | None = None,
                changed: Collection[str] | None = None, full: bool = False) -> SourceSyncReport:
    """`changed`: the paths a file watcher saw change; only they are looked at, unless one of
    them is a folder or a link (then, as without it, the whole folder is walked). `full`: read
    and hash every file, even those whose size and time are as the last sync saw them."""
    testhooks.hold_point("source-sync")
    if not Path(spec.path).is_dir():
        raise InputRefusedError(msg("Source folder {path} is missing or not a folder (an unmounted drive?); "
                                    "nothing was changed. Remove the source or bring the folder back.",
                                    path=spec.path), code=ErrorCode.SOURCE_MISSING)
    run = _SyncRun(vault, current, spec, full=full, check_fits=check_fits)
    if changed is None and not full:
        quick = run.quick_report(progress)
        if quick is not None:
            return quick
    return run.walk(changed, prune=prune, stamp=stamp, progress=progress, cancel=cancel)


class _SyncRun:
    """One sync's state (the source's cards, its stat table, what was seen, refused and decided
    so far), shared by the steps below so that each step is one job: list, look at a file, read
    it, decide its card, settle the files that vanished."""

    def __init__(self, vault: UnlockedVault, current: dict[str, Record], spec: SourceSpec, *, full: bool,
                 check_fits: FitCheck | None) -> None:
        self.vault, self.spec, self.root, self.full, self.check_fits = vault, spec, Path(spec.path), full, check_fits
        self.mine, self.twins, self.other_twins = own_cards(current, spec.id)
        self.adopt = {str(r.metadata.get("source_path")): r for r in current.values()
                      if r.kind == "card" and "source_id" not in r.metadata and r.metadata.get("source_path")}
        self.imported = _imported_here(current, spec.path)
        self.table = StatTable(vault, spec.id, full)
        self.seen: dict[str, os.stat_result] = {}
        self.refused: dict[str, os.stat_result] = {}  # text files this sync could not take as they are (not UTF-8, …)
        self.items: list[SourceSyncItem] = []
        self.batch = _Batch()
        self.vanished: dict[str, Record] = {}
        self.by_hash: dict[str, str] = {}
        self._probe: list[str] = []

    def quick_report(self, progress: Callable[[IngestProgress], None] | None) -> SourceSyncReport | None:
        """The report when a listing alone shows every file as the last sync left it; else None."""
        quick = all_unchanged(self.spec.path, self.mine, self.table.same, self.spec)
        if quick is None or self.twins or self.other_twins:  # said on every sync until one is deleted
            return None
        if progress:
            progress(IngestProgress("written", len(quick[0]), len(quick[0])))
        return SourceSyncReport(self.spec, sorted([SourceSyncItem(rel, "unchanged", c.id, c.revision, c.title)
                                                   for rel, c in quick[0]]
                                                  + [SourceSyncItem(rel, "skipped", reason=why) for rel, why in quick[1]],
                                                  key=lambda i: i.file))

    def walk(self, changed: Collection[str] | None, *, prune: bool, stamp: str,
             progress: Callable[[IngestProgress], None] | None, cancel: threading.Event | None) -> SourceSyncReport:
        """Look at every listed file, then settle the cards whose files were not seen, and write."""
        partial = _changed_only(self.root, changed, set(self.mine)) if changed is not None else None
        scan = FolderScan(partial[0], []) if partial is not None else scan_folder(self.root, with_stats=True)
        files = self._listed(scan)
        present = {rel for rel, _ in files}
        self.vanished = {rel: r for rel, r in self.mine.items() if rel not in present
                         and (partial is None or rel in partial[1])
                         and not scan.truncated}  # a walk cut short did not see them: not a reason to call them gone
        self.by_hash = {str(r.metadata.get("sha256")): rel for rel, r in self.vanished.items()}
        for n, (rel, path) in enumerate(files, 1):
            if cancel is not None and cancel.is_set():
                raise CancelledError(msg("Sync cancelled; files already written stay written."))
            if progress:
                progress(IngestProgress("read", n, len(files), rel))
            self._look_at(rel, path, scan)
        self._settle_vanished(prune, stamp)
        self.items += _flush(self.vault, self.batch, self.check_fits)
        self._settle_twins()
        if prune:
            for old in self.vanished.values():
                self.vault.delete(old.id)
        if progress:
            progress(IngestProgress("written", len(files), len(files)))
        self.table.save(self.seen, self.items, partial is not None, self.refused)
        return SourceSyncReport(self.spec, sorted(self.items, key=lambda i: i.file))

    def _listed(self, scan: FolderScan) -> list[tuple[str, Path]]:
        """The files the source wants; the skipped ones it wants (and links, and a cut-short walk) said."""
        files: list[tuple[str, Path]] = []
        for path in scan.readable:
            rel = _rel(path, self.root)
            if self.spec.wants(rel):
                files.append((rel, path))
        for path, reason in scan.skipped:
            rel = _rel(path, self.root)
            if self.spec.wants(rel) or path.is_symlink() or reason == TRUNCATED:  # a glob picks files; the rest is always said
                self._skip(rel, reason)
        return files

    def _look_at(self, rel: str, path: Path, scan: FolderScan) -> None:
        """One file: left alone when its stat says so, else read and its card decided."""
        old = self.mine.get(rel) or (self.adopt.get(str(path.resolve())) if self.adopt else None)
        if old is None and rel in self.imported:
            old = self.imported.pop(rel)
        try:
            st = scan.stats.get(path) or path.stat()
        except OSError:  # its card (if any) is left as it was: the next sync decides
            self._skip(rel, VANISHED)
            return
        if (not self.full and old is not None and rel in self.mine and "source_gone" not in old.metadata
                and self.table.same(rel, old, st)):
            self.seen[rel] = st
            self.items.append(SourceSyncItem(rel, "unchanged", old.id, old.revision, old.title))
            return
        if old is None and not self.full and self.table.left_out(rel, st) and (why := self._full_now()):  # not read again
            self.seen[rel] = st
            self._skip(rel, why)
            return
        read = self._read(rel, path, st)
        if read is not None:
            self._decide(rel, path, *read, old)

    def _read(self, rel: str, path: Path, st: os.stat_result) -> tuple[SourceFile, os.stat_result] | None:
        """The file's text and its stat as read, or None (said as skipped) when it cannot be taken now."""
        try:
            st = path.stat()  # now, not at the listing: what the bytes read must still match
            src = read_source(path)
            testhooks.hold_point("source-read")
            torn = _stamp(path.stat()) != _stamp(st)
        except (InputRefusedError, OSError) as exc:  # its stat came with the listing: it may have gone since
            if isinstance(exc, InputRefusedError) and os.path.lexists(path):
                self._skip(rel, refusal_reason(exc, path))
                self.refused[rel] = st
            else:
                self._skip(rel, VANISHED)
            return None
        if torn:  # an editor still writing: half a note must not become a revision, nor its stat "seen"
            self._skip(rel, TORN)
            return None
        return src, st

    def _decide(self, rel: str, path: Path, src: SourceFile, st: os.stat_result, old: Record | None) -> None:
        """A read file becomes a new card, a new revision, a move of a vanished card, or nothing."""
        meta_stat = {"source_size": st.st_size, "source_mtime_ns": st.st_mtime_ns}
        self.seen[rel] = st
        title = unicodedata.normalize("NFC", src.title)
        meta: dict[str, object] = {"source": unicodedata.normalize("NFC", path.name), "source_path": str(src.resolved),
                                   "sha256": src.sha256, "source_id": self.spec.id, "source_rel": rel, **meta_stat}
        if old is not None and "source_app" in old.metadata and rel not in self.mine:  # an imported note adopted
            if not _same_note(old, src.body):
                old = None
            else:
                meta = {**{k: v for k, v in old.metadata.items() if k not in IMPORT_KEYS}, **meta}
        if old is None and src.sha256 in self.by_hash:  # the same bytes under a new name: a move
            old = self.vanished.pop(self.by_hash.pop(src.sha256))
            status: SyncStatus = "moved"
        else:
            status = "updated"
        if old is None:
            self.batch.adds.append((rel, src, meta))
        elif old.metadata.get("sha256") == src.sha256 and old.title == title and status != "moved" \
                and "source_gone" not in old.metadata and rel in self.mine:
            self.items.append(SourceSyncItem(rel, "unchanged", old.id, old.revision, old.title))
            return
        else:
            body = None if old.metadata.get("sha256") == src.sha256 and old.body == src.body else src.body
            self.batch.updates.append((rel, status, RecordUpdate(old.id, title=title, body=body, metadata=meta,
                                                                 tags=src.tags or None), src.body, old))
        self.batch.chars += len(src.body)
        if self.batch.chars > MAX_BATCH_CHARS:
            self.items += _flush(self.vault, self.batch, self.check_fits)
            self.batch = _Batch()

    def _settle_vanished(self, prune: bool, stamp: str) -> None:
        """Cards whose files were not seen: left as they were, pruned, or marked gone (once)."""
        for rel, old in sorted(self.vanished.items()):
            if not _really_gone(self.root, old):
                del self.vanished[rel]
                self.items.append(SourceSyncItem(rel, "skipped", old.id, old.revision, old.title,
                                                 N_("not found by this sync, but its file or folder is still there "
                                                    "(unreadable, or the folder vanished during the sync); its card "
                                                    "is left as it was")))
            elif prune:
                self.batch.pruned.append(old)
                self.items.append(SourceSyncItem(rel, "pruned", old.id, old.revision, old.title))
            elif "source_gone" in old.metadata:
                self.items.append(SourceSyncItem(rel, "gone", old.id, old.revision, old.title))
            else:
                self.batch.updates.append((rel, "gone", RecordUpdate(old.id, metadata={**old.metadata,
                                                                                       "source_gone": stamp}), "", None))

    def _settle_twins(self) -> None:
        """Second cards of one file (two devices took it in at once): deleted when they hold the
        kept card's text, else left and said (source_elsewhere.py)."""
        for twin in self.twins:
            self.vault.delete(twin.id)
            self.items.append(SourceSyncItem(str(twin.metadata.get("source_rel")), "pruned", twin.id, twin.revision,
                                             twin.title, N_("a second card of this file (two devices took it in at "
                                                            "once), with the same text")))
        for twin in self.other_twins:
            self.items.append(SourceSyncItem(str(twin.metadata.get("source_rel")), "skipped", twin.id, twin.revision,
                                             twin.title, N_("a second card of this file with another text (edited "
                                                            "in the vault); delete the one you do not want")))

    def _full_now(self) -> str:
        """Why nothing more fits in the vault now ("" while a one-line note still would)."""
        if not self._probe:
            self._probe.append(fitting(self.check_fits, [("", "x", None)])[1] if self.check_fits is not None else "")
        return self._probe[0]

    def _skip(self, rel: str, reason: str) -> None:
        self.items.append(SourceSyncItem(rel, "skipped", reason=reason))


def pending_files(vault: UnlockedVault, current: dict[str, Record], spec: SourceSpec) -> int:
    """How many files of the source a sync would take in now (see source_stat.count_pending)."""
    if not Path(spec.path).is_dir():
        return 0
    table = StatTable(vault, spec.id, False)
    return count_pending(spec.path, own_cards(current, spec.id)[0], table.same, table.skipped_as_is, spec)


def _flush(vault: UnlockedVault, batch: _Batch, check_fits: FitCheck | None) -> list[SourceSyncItem]:
    """Write one batch: the new cards and new revisions. What would take the vault past its
    limits is left out (skipped, with the reason; its card, if any, as it was): the pruned and
    the changed first, then new files in the folder's order, as many as fit."""
    marks = [u for u in batch.updates if u[4] is None]
    changes = [u for u in batch.updates if u[4] is not None]
    out: list[SourceSyncItem] = []
    if check_fits is not None and (batch.adds or changes):
        wanted = ([("", "", r) for r in batch.pruned] + [(u.title or "", body, old) for _, _, u, body, old in changes]
                  + [(s.title, s.body, None) for _, s, _ in batch.adds])
        room, why = fitting(check_fits, wanted)
        room = max(0, room - len(batch.pruned))
        out += [SourceSyncItem(rel, "skipped", old.id, old.revision, old.title, why)
                for rel, _, _, _, old in changes[room:] if old is not None]
        out += [SourceSyncItem(rel, "skipped", reason=why) for rel, _, _ in batch.adds[max(0, room - len(changes)):]]
        changes, batch.adds = changes[:room], batch.adds[:max(0, room - len(changes))]
    added = vault.add_many([NewRecord("card", unicodedata.normalize("NFC", s.title), s.body, tags=s.tags,
                                      metadata=m) for _, s, m in batch.adds]) if batch.adds else []
    updates = changes + marks
    updated = vault.update_many([u[2] for u in updates]) if updates else []
    out += [SourceSyncItem(rel, "created", r.id, r.revision, r.title) for (rel, _, _), r in zip(batch.adds, added, strict=True)]
    out += [SourceSyncItem(rel, status, r.id, r.revision, r.title)
            for (rel, status, _, _, _), r in zip(updates, updated, strict=True)]
    return out


def _imported_here(current: dict[str, Record], folder: str) -> dict[str, Record]:
    """Cards an import of this very folder made, by their file under it: a source added after an
    import takes them over instead of making a second card per note. An import older than the
    record of its folder names only the file: `_same_note` then checks the text too."""
    out: dict[str, Record] = {}
    for r in current.values():
        meta = r.metadata
        if r.kind != "card" or "source_id" in meta or "source_app" not in meta:
            continue
        origin = meta.get("import_origin")
        rel = meta.get("import_file") if origin is not None else meta.get("source_path")
        if isinstance(rel, str) and origin in (folder, None):
            out.setdefault(rel, r)
    return out


def _same_note(card: Record, text: str) -> bool:
    """An imported card is this file's note: the import recorded the folder, or the file's text
    ends with the card's (an importer keeps the text after the front matter)."""
    if card.metadata.get("import_origin") is not None:
        return True
    body = card.body.strip()
    return bool(body) and text.replace("\r\n", "\n").rstrip().endswith(body)


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


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
