"""What every importer hands over, and how the notes are written idempotently.

An importer yields `ImportedNote`s (and `Skipped` for what it cannot take), each with a key
that names the note within the app's export (a path, a Notion id, an Evernote note's
notebook, creation time and title). The key is kept in the card's metadata, so importing the
same export again finds each card: the same content is `unchanged` (no write), other content
a new revision. Notes are written in batches, each in one transaction: a killed import leaves
whole batches, and running it again goes on without duplicates.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ... import testhooks
from ...errors import CancelledError
from ...i18n import msg
from ...serial import Jsonable, json_meta
from ...vault.records import NewRecord, Record, RecordUpdate

if TYPE_CHECKING:
    from ...vault.store import UnlockedVault
    from ..fits import FitCheck
    from ..types import IngestProgress

ImportStatus = Literal["created", "updated", "unchanged", "skipped"]
BATCH_NOTES = 500
BATCH_CHARS = 32 * 1024 * 1024


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@dataclass
class ImportedNote:
    key: str  # the note's identity within the app's export
    name: str  # how the report names it (its path in the export, or its title)
    title: str
    body: str
    tags: tuple[str, ...] = ()
    metadata: dict[str, object] = field(default_factory=dict)  # dates, notebook, properties, …
    link_names: tuple[str, ...] = ()  # names other notes' [[links]] use for this one
    links: tuple[str, ...] = ()  # the [[targets]] this note names
    warning: str = ""  # imported, with something left out (shown as the item's reason)
    file: str = ""  # its file under an export that is a folder (POSIX, NFC): a source of that folder adopts the card


@dataclass(frozen=True)
class ImportedAsset:
    """An attachment kept as an encrypted asset record (bytes only, never indexed)."""

    key: str  # its path in the export
    name: str
    data: bytes


@dataclass(frozen=True)
class Skipped:
    name: str
    reason: str


@dataclass(frozen=True)
class ImportItem(Jsonable):
    note: str
    status: ImportStatus
    id: str | None = None
    revision: int | None = None
    title: str = ""
    reason: str = field(default="", metadata=json_meta(omit=lambda r: not r.reason))


@dataclass(frozen=True)
class ImportReport(Jsonable):
    app: str
    path: str
    dry_run: bool
    items: list[ImportItem]

    def count(self, status: str) -> int:
        return sum(1 for i in self.items if i.status == status)


def link_key(name: str) -> str:
    """How a [[link]] target is compared: the last path part, no `.md`, NFC, case-folded."""
    name = nfc(name).strip().split("/")[-1]
    return name.removesuffix(".md").casefold()


class Writer:
    """Writes notes batch by batch; knows every card this app's imports made (by key)."""

    def __init__(self, vault: UnlockedVault, current: dict[str, Record], app: str, *, dry_run: bool,
                 check_fits: FitCheck | None, origin: str = "") -> None:
        self.vault, self.app, self.dry_run, self.check_fits = vault, app, dry_run, check_fits
        self.origin = origin  # the export's folder, absolute ("" for a zip or a file)
        cards = [r for r in current.values() if r.kind in ("card", "asset")]  # an import's assets are found again too
        self.known = {str(r.metadata["import_key"]): r for r in cards
                      if r.metadata.get("source_app") == app and "import_key" in r.metadata}
        self.names: dict[str, str] = {}  # link_key -> record id
        for r in cards:
            for name in [r.title, *_strs(r.metadata.get("link_names"))]:
                self.names.setdefault(link_key(name), r.id)
        self.items: list[ImportItem] = []
        self.reserved: dict[str, str] = {}  # key -> id chosen ahead for a note not yet written

    def reserve(self, notes: Iterable[ImportedNote | ImportedAsset | Skipped]) -> None:
        """Choose ids for every note of an export read whole, so [[links]] to notes written in a
        later batch resolve too."""
        for note in notes:
            if isinstance(note, ImportedAsset):
                old = self.known.get(note.key)
                self.reserved[note.key] = old.id if old is not None else secrets.token_hex(8)
                self.names[link_key(note.key)] = self.names[link_key(note.name)] = self.reserved[note.key]
            elif isinstance(note, ImportedNote):
                old = self.known.get(note.key)
                self.reserved[note.key] = old.id if old is not None else secrets.token_hex(8)
                for name in (note.title, *note.link_names):
                    self.names[link_key(name)] = self.reserved[note.key]

    def run(self, notes: Iterable[ImportedNote | ImportedAsset | Skipped], progress: Callable[[IngestProgress], None] | None,
            cancel: threading.Event | None) -> None:
        from ..types import IngestProgress

        batch: list[ImportedNote] = []
        chars = 0
        for n, note in enumerate(notes, 1):
            if cancel is not None and cancel.is_set():
                raise CancelledError(msg("Import cancelled; notes already written stay written (run it again to "
                                         "go on)."))
            if progress:
                progress(IngestProgress("read", n, 0, note.name))
            if isinstance(note, Skipped):
                self.items.append(ImportItem(note.name, "skipped", reason=note.reason))
                continue
            if isinstance(note, ImportedAsset):
                self._asset(note)
                continue
            batch.append(note)
            chars += len(note.body)
            if len(batch) >= BATCH_NOTES or chars >= BATCH_CHARS:
                self._write(batch)
                testhooks.pause_point("import-batch-written")  # the crash tests kill the process here
                batch, chars = [], 0
        self._write(batch)

    def _write(self, batch: list[ImportedNote]) -> None:
        if not batch:
            return
        ids: dict[int, str] = {}
        for i, note in enumerate(batch):  # ids first: a note may link to one later in the batch
            old = self.known.get(note.key)
            ids[i] = old.id if old is not None else self.reserved.get(note.key) or secrets.token_hex(8)
            for name in (note.title, *note.link_names):
                self.names[link_key(name)] = ids[i]
        adds: list[tuple[int, NewRecord]] = []
        updates: list[tuple[int, RecordUpdate, Record]] = []
        results: dict[int, ImportItem] = {}
        for i, note in enumerate(batch):
            meta = self._metadata(note)
            old = self.known.get(note.key)
            title = nfc(note.title) or note.name
            if old is not None and old.metadata.get("import_sha256") == meta["import_sha256"]:
                results[i] = ImportItem(note.name, "unchanged", old.id, old.revision, old.title, note.warning)
            elif old is not None:
                updates.append((i, RecordUpdate(old.id, title=title, body=note.body, tags=note.tags, metadata=meta),
                                old))
            else:
                adds.append((i, NewRecord("card", title, note.body, note.tags, meta, record_id=ids[i])))
        if self.dry_run:
            for i, _ in adds:
                results[i] = ImportItem(batch[i].name, "created", None, None, nfc(batch[i].title), batch[i].warning)
            for i, change, _ in updates:
                results[i] = ImportItem(batch[i].name, "updated", change.record_id, None, change.title or "",
                                        batch[i].warning)
        else:
            if self.check_fits is not None and (adds or updates):
                adds, updates = self._fitting(batch, adds, updates, results)
            added = self.vault.add_many([a for _, a in adds]) if adds else []
            updated = self.vault.update_many([u for _, u, _ in updates]) if updates else []
            for (i, _), record in zip(adds, added, strict=True):
                results[i] = ImportItem(batch[i].name, "created", record.id, record.revision, record.title,
                                        batch[i].warning)
                self.known[batch[i].key] = record
            for (i, _, _), record in zip(updates, updated, strict=True):
                results[i] = ImportItem(batch[i].name, "updated", record.id, record.revision, record.title,
                                        batch[i].warning)
                self.known[batch[i].key] = record
        self.items += [results[i] for i in range(len(batch))]

    def _asset(self, asset: ImportedAsset) -> None:
        """One attachment: stored once, found again by its path; assets have no revisions, so a
        changed attachment is listed, not replaced."""
        digest = hashlib.sha256(asset.data).hexdigest()
        old = self.known.get(asset.key)
        if old is not None:
            same = old.metadata.get("import_sha256") == digest
            self.items.append(ImportItem(asset.key, "unchanged" if same else "skipped", old.id, old.revision, old.title,
                                         "" if same else "attachment changed since it was imported; the stored asset is "
                                         "kept (assets have no revisions: delete it to import the new one)"))
            return
        meta: dict[str, object] = {"source_app": self.app, "import_key": asset.key, "import_sha256": digest,
                                   "source": asset.name, "bytes": len(asset.data)}
        record_id = self.reserved.get(asset.key) or secrets.token_hex(8)
        if self.dry_run:
            self.items.append(ImportItem(asset.key, "created", None, None, asset.name))
            return
        record = self.vault.add(NewRecord("asset", asset.name, "", (), meta, asset.data, record_id=record_id))
        self.known[asset.key] = record
        self.names[link_key(asset.key)] = self.names[link_key(asset.name)] = record.id
        self.items.append(ImportItem(asset.key, "created", record.id, record.revision, record.title))

    def _fitting(self, batch: list[ImportedNote], adds: list[tuple[int, NewRecord]],
                 updates: list[tuple[int, RecordUpdate, Record]], results: dict[int, ImportItem],
                 ) -> tuple[list[tuple[int, NewRecord]], list[tuple[int, RecordUpdate, Record]]]:
        """The changed notes, then the new ones, as many as the vault's limits take; the rest
        are skipped with the reason (a changed note's card stays as it was)."""
        from ..fits import fitting

        if self.check_fits is None:
            return adds, updates
        room, why = fitting(self.check_fits, [(u.title or "", u.body or "", old) for _, u, old in updates]
                            + [(a.title, a.body, None) for _, a in adds])
        for i, _, old in updates[room:]:
            results[i] = ImportItem(batch[i].name, "skipped", old.id, old.revision, old.title, why)
        for i, _ in adds[max(0, room - len(updates)):]:
            results[i] = ImportItem(batch[i].name, "skipped", None, None, nfc(batch[i].title), why)
        return adds[:max(0, room - len(updates))], updates[:room]

    def _metadata(self, note: ImportedNote) -> dict[str, object]:
        """The card's metadata: the app's fields, the links resolved to cards, and a hash of it all."""
        links = {t: self.names[link_key(t)] for t in note.links if link_key(t) in self.names}
        meta: dict[str, object] = {"source_app": self.app, "import_key": note.key, **note.metadata}
        if note.link_names:
            meta["link_names"] = list(note.link_names)
        if links:
            meta["links"] = links
        digest = hashlib.sha256(json.dumps([nfc(note.title), note.body, list(note.tags), meta], sort_keys=True,
                                           ensure_ascii=False, default=str).encode()).hexdigest()
        meta["import_sha256"] = digest
        if self.origin and note.file:  # where the note lives, outside the hash: an older import stays unchanged
            meta["import_origin"], meta["import_file"] = self.origin, note.file
        return meta


def _strs(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def shown_name(path: Path) -> str:
    """A path as report text: NFC, POSIX, undecodable bytes as `\\xNN`."""
    import os

    return nfc(os.fsencode(path.as_posix()).decode("utf-8", "backslashreplace"))
