"""One vault = one SQLite file of ciphertext.

Tables:
  header   one row: magic, format, vault id, name, KDF params, salt, wrapped vault key,
           and an unkeyed checksum so accidental damage is told apart from a wrong passphrase.
  records  one row per record revision: clear (record_id, revision, kind) for lookups, the
           AES-256-GCM nonce + ciphertext, and a digest of the ciphertext.
  blobs    named encrypted blobs: the settings record (policy flags), sync state, caches (index, vectors).
  sync_docs  once synced: one sealed row per record with its sync entry (sync_rows.py).
  state    the change counter other processes poll (their caches refresh when it moves) and the keyed
           manifest over every record and sync row plus the settings and sync blobs (manifest.py),
           which detects deleted, added or rolled-back rows that AEAD alone cannot see.

Trust rules: every read of records or settings runs in one SQLite snapshot whose
manifest was verified, again whenever another connection committed (PRAGMA data_version);
a row is used only if its digest matches. Cache blobs (index, vectors) are derived data:
one that fails its check is dropped, reported in `cache_repairs` and rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import LockedError, MemoriesError, NotFoundError, TamperError
from ..i18n import msg
from ..testhooks import pause_point
from . import crypto
from . import manifest as rowmac
from . import sync_rows as synced
from .caches import CacheBlobs
from .create import create_vault_file, now_iso
from .egress_log import EgressLog
from .header import (
    FORMAT_VERSION,
    MAGIC,
    Header,
    connect_readwrite,
    header_from,
    latest_state,
    read_header,
    scan_folder,
    scan_vault_file,
    sqlite_errors,
)
from .integrity import (
    SETTINGS_BLOB,
    checked_blob_row,
    decode_payload,
    put_blob,
    read_settings,
    record_ad,
    record_row,
)
from .keys import ADOPTED, VaultKeys, is_adopted, open_keys
from .passwd import own_form, rewrapped
from .records import KINDS, NewRecord, PulledRecord, Record, RecordUpdate, check_kind, check_record_id, check_revision

if TYPE_CHECKING:
    from .anchor import StateWatcher

__all__ = ["FORMAT_VERSION", "MAGIC", "SETTINGS_BLOB", "Header", "UnlockedVault", "create_vault_file",
           "read_header", "scan_folder", "scan_vault_file"]

T = TypeVar("T")
_ROW = "SELECT record_id, revision, kind, nonce, ciphertext, digest FROM records"


def count_records(path: Path) -> int:
    """Distinct record ids, read-only and without a key (for `vault list`)."""
    return scan_vault_file(path)[1]


class UnlockedVault:
    """An open vault with its keys in memory. Thread-safe; every write is one IMMEDIATE transaction."""

    def __init__(self, path: Path, passphrase: str, *, watcher: StateWatcher | None = None) -> None:
        """`watcher` (anchor.py) is told every verified or committed state: rollback detection."""
        self.path = path
        self._watcher = watcher
        crypto.check_unlockable(read_header(path).kdf)  # recognised read-only before anything writes to it
        self._lock = threading.RLock()
        self._keys: VaultKeys | None = None
        self._verified: tuple[int, int, bytes, int] | None = None  # (data_version, counter, manifest, row sum)
        self.rows_written = 0  # rows inserted or deleted by this object's writes (tests count them)
        self.touched = synced.TouchedRecords()  # records written here since the last sync
        self._conn = connect_readwrite(path)
        try:
            with sqlite_errors(path):
                self.header = header_from(self._conn, path)
            self._caches = CacheBlobs(path, self._conn, self._lock, lambda: self.keys, self.header.vault_id)
            self.egress = EgressLog(path, self._conn, self._lock, lambda: self.keys, self.header.vault_id)
            self._keys = open_keys(self.header, passphrase)
            with self._read():
                pass  # verifies the manifest
            if is_adopted(self.header):
                with contextlib.suppress(MemoriesError):  # a read-only file opens as it is; rewrapped later
                    self._rewrap_adopted(passphrase)
        except BaseException:
            if self._keys is not None:
                self._keys.wipe()
                self._keys = None
            self._conn.close()
            raise

    # -- plumbing -------------------------------------------------------------------------
    @property
    def vault_id(self) -> str:
        return self.header.vault_id

    @property
    def name(self) -> str:
        return self.header.name

    @property
    def keys(self) -> VaultKeys:
        if self._keys is None:
            raise LockedError(msg("The vault is locked; unlock it again."))
        return self._keys

    @contextlib.contextmanager
    def _read(self, verify: bool = True) -> Iterator[sqlite3.Connection]:
        """One consistent snapshot across several SELECTs (WAL readers never block writers);
        with `verify`, the manifest of that snapshot is checked first (cheap when unchanged)."""
        with self._lock:
            self.keys  # noqa: B018 -- raises LockedError after lock
            with sqlite_errors(self.path):
                self._conn.execute("BEGIN")
                try:
                    if verify:
                        self._check_current(self._conn)
                    yield self._conn
                finally:
                    self._conn.execute("COMMIT")

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE: one writer at a time; verify (unless nothing committed since this connection
        last did), change, re-MAC from the rows changed (manifest.py: no pass over the vault), bump."""
        with self._lock:
            keys = self.keys
            with sqlite_errors(self.path):
                conn = self._conn
                conn.execute("BEGIN IMMEDIATE")
                try:
                    counter = self._check_current(conn)
                    assert self._verified is not None
                    total = self._verified[3]
                    version = conn.execute("PRAGMA data_version").fetchone()[0]
                    rowmac.watch(conn)
                    yield conn
                    counter += 1
                    total, rows, records = rowmac.changed_sum(conn, keys, total)
                    mac = rowmac.sealed_form(conn, keys, counter, total)
                    conn.execute("UPDATE state SET change_counter = ?, manifest = ?", (counter, mac))
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                self._verified = (version, counter, mac, total)  # our own commit does not move data_version
                self.rows_written += rows
                self.touched.wrote(records)
                self._seen(counter, mac)

    def _check_current(self, conn: sqlite3.Connection) -> int:
        """Inside a read transaction: re-verify the manifest when any other connection has
        committed since the last check (data_version) or the state row differs."""
        row = conn.execute("SELECT change_counter, manifest FROM state").fetchone()
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if row is not None and self._verified is not None and self._verified[:3] == (version, row[0], row[1]):
            return int(row[0])
        counter, total = self._verify_manifest(conn)
        self.touched.unknown()  # another process may have written any record
        self._seen(counter, row[1])
        self._verified = (version, counter, row[1], total)
        return counter

    def _seen(self, counter: int, mac: bytes) -> None:
        if self._watcher is not None:
            self._watcher.seen(self.keys, counter, mac, name=self.name, latest=lambda: latest_state(self.path))

    def _verify_manifest(self, conn: sqlite3.Connection) -> tuple[int, int]:
        """(change counter, row sum) once the stored manifest checks out over every row."""
        row = conn.execute("SELECT change_counter, manifest FROM state").fetchone()
        if row is None:
            raise TamperError(msg("{name}: the vault state row is missing; the file was altered.",
                                  name=self.path.name))
        counter, stored = row
        total = rowmac.verified_sum(conn, self.keys, counter, stored)
        if total is None:
            raise TamperError(
                msg("{name}: the record manifest does not match (rows were deleted, added or rolled back "
                    "outside Memories). Nothing from it is shown.", name=self.path.name)
            )
        return counter, total

    def change_counter(self) -> int:
        """The verified change counter: re-checks the manifest if the file changed since."""
        with self._read() as conn:
            return self._check_current(conn)

    def policy_tag(self) -> bytes:
        """Changes with the settings record or the header (passphrase): cached indexes are then dropped."""
        with self._read(verify=False) as conn:
            settings = conn.execute("SELECT digest FROM blobs WHERE name = ?", (SETTINGS_BLOB,)).fetchone()
            header = conn.execute("SELECT checksum FROM header").fetchone()
        parts = [settings[0] if settings else b"", header[0] if header else b""]
        return hashlib.sha256(b"".join(p if isinstance(p, bytes) else repr(p).encode() for p in parts)).digest()

    def close(self) -> None:
        with self._lock:
            if self._keys is not None:
                self._keys.wipe()
                self._keys = None
            self._conn.close()

    # -- records --------------------------------------------------------------------------
    def _open_row(self, record_id: Any, revision: Any, kind: Any, nonce: Any, ct: Any, row_digest: Any) -> bytearray:
        if not (isinstance(record_id, str) and type(revision) is int and isinstance(kind, str) and kind in KINDS):
            raise TamperError(msg("A record row has a column of the wrong type or an unknown kind: the vault "
                                  "file was altered."))
        what = f"Record {record_id} revision {revision}"
        nonce, ct = checked_blob_row(nonce, ct, row_digest, what)
        return crypto.open_sealed(self.keys.record, nonce, ct, record_ad(self.vault_id, record_id, kind, revision), what)

    def _decrypt_row(self, record_id: Any, revision: Any, kind: Any, nonce: Any, ct: Any, row_digest: Any) -> Record:
        raw = self._open_row(record_id, revision, kind, nonce, ct, row_digest)
        try:
            return decode_payload(raw, record_id, revision, kind, f"Record {record_id} revision {revision}")
        finally:
            crypto.zero(raw)

    def refresh(self, known: dict[str, int]) -> tuple[int, set[str], list[Record]]:
        """One verified read: (change counter, ids of all live records, decrypted latest
        revisions of those whose revision differs from `known`)."""
        with self._read() as conn:
            counter = self._check_current(conn)
            latest = conn.execute(
                "SELECT record_id, MAX(revision) FROM records GROUP BY record_id").fetchall()
            changed = [(record_id, rev) for record_id, rev in latest if known.get(record_id) != rev]
            rows = synced.rows_at(conn, changed)
        return counter, {record_id for record_id, _ in latest}, [self._decrypt_row(*row) for row in rows]

    def read(self, record_id: str, revision: int | None = None) -> Record:
        record_id = check_record_id(record_id)
        with self._read() as conn:
            if revision is None:
                row = conn.execute(f"{_ROW} WHERE record_id = ? ORDER BY revision DESC LIMIT 1",
                                   (record_id,)).fetchone()
            else:
                row = conn.execute(f"{_ROW} WHERE record_id = ? AND revision = ?",
                                   (record_id, check_revision(revision))).fetchone()
        if row is None:
            if revision is None:
                raise NotFoundError(msg("No record {record_id} in vault {vault}.", record_id=record_id, vault=self.name))
            raise NotFoundError(msg("No record {record_id} revision {revision} in vault {vault}.",
                                    record_id=record_id, revision=revision, vault=self.name))
        return self._decrypt_row(*row)

    def read_many(self, record_ids: list[str] | None = None) -> list[Record]:
        """Latest revision of the given records (all records when None), after a manifest check."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT r.record_id, r.revision, r.kind, r.nonce, r.ciphertext, r.digest FROM records r JOIN "
                "(SELECT record_id, MAX(revision) AS rev FROM records GROUP BY record_id) m "
                "ON r.record_id = m.record_id AND r.revision = m.rev ORDER BY r.record_id"
            ).fetchall()
        wanted = set(record_ids) if record_ids is not None else None
        return [self._decrypt_row(*row) for row in rows if wanted is None or row[0] in wanted]

    def add(self, item: NewRecord) -> Record:
        return self.add_many([item])[0]

    def add_many(self, items: Sequence[NewRecord]) -> list[Record]:
        """Add several records in one transaction: all of them or none (used by ingest)."""
        stamp = now_iso()
        records = []
        for item in items:
            check_kind(item.kind)
            records.append(Record(id=item.record_id or secrets.token_hex(8), revision=1, kind=item.kind, title=item.title,
                                  body=item.body, tags=tuple(item.tags), metadata=item.metadata,
                                  created=stamp, updated=stamp, data=item.data))
        with self._write() as conn:
            self._insert_many(conn, records)
            pause_point("vault-add-before-commit")  # crash tests kill -9 here (testhooks)
        return records

    def update(self, change: RecordUpdate) -> Record:
        return self.update_many([change])[0]

    def update_many(self, changes: Sequence[RecordUpdate]) -> list[Record]:
        """New revisions in one transaction, each on the revision read inside the write lock (no lost update)."""
        out = []
        with self._write() as conn:
            for change in changes:
                record_id = check_record_id(change.record_id)
                row = conn.execute(f"{_ROW} WHERE record_id = ? ORDER BY revision DESC LIMIT 1",
                                   (record_id,)).fetchone()
                if row is None:
                    raise NotFoundError(msg("No record {record_id} in vault {vault}.",
                                            record_id=record_id, vault=self.name))
                old = self._decrypt_row(*row)
                change.check_at(old.revision)
                new = Record(id=old.id, revision=old.revision + 1, kind=old.kind,
                             title=old.title if change.title is None else change.title,
                             body=old.body if change.body is None else change.body,
                             tags=old.tags if change.tags is None else tuple(change.tags),
                             metadata=old.metadata if change.metadata is None else change.metadata,
                             created=old.created, updated=now_iso(), data=old.data)
                self._insert_many(conn, [new])
                out.append(new)
        return out

    def delete(self, record_id: str) -> None:
        with self._write() as conn:
            cur = conn.execute("DELETE FROM records WHERE record_id = ?", (check_record_id(record_id),))
            if cur.rowcount == 0:
                raise NotFoundError(msg("No record {record_id} in vault {vault}.",
                                        record_id=record_id, vault=self.name))

    def revisions(self, record_id: str) -> list[int]:
        record_id = check_record_id(record_id)
        with self._read() as conn:
            return [r for (r,) in conn.execute(
                "SELECT revision FROM records WHERE record_id = ? ORDER BY revision", (record_id,))]

    def _insert_many(self, conn: sqlite3.Connection, items: Sequence[Record | PulledRecord]) -> None:
        """Seal and insert these records, each as SQLite takes it."""
        aead, vault_id = self.keys.record, self.vault_id
        conn.executemany("INSERT INTO records VALUES (?, ?, ?, ?, ?, ?)", (record_row(aead, vault_id, r) for r in items))

    def sync_state(self) -> bytes | None:  # sync state and pulled revisions: one transaction each (sync_rows.py)
        return self.sync_read(synced.read_state)

    def sync_read(self, read: Callable[[sqlite3.Connection, VaultKeys], T]) -> T:
        with self._read() as conn:  # sync_rows.read_docs, read_outbox
            return read(conn, self.keys)

    def sync_changes(self) -> tuple[list[synced.LocalRef], list[str], int]:
        """(records added or edited since the last sync, ids deleted, a mark for `touched.synced`)."""
        with self._read() as conn:
            return synced.local_changes(conn, self.touched)

    def sync_opened(self, refs: Sequence[synced.LocalRef]) -> list[synced.LocalChange]:
        with self._read() as conn:
            return synced.opened_changes(conn, refs, self._open_row)

    def apply_synced(self, change: synced.SyncedChange) -> None:
        with self._write() as conn:
            synced.apply_rows(conn, self.keys, change, self._insert_many)

    # -- settings (strict, under the manifest) -------------------------------------------
    def settings(self) -> dict[str, Any]:
        """The settings record, read in a snapshot whose verified manifest covers its digest."""
        with self._read() as conn:
            return read_settings(conn, self.keys, f"{self.path.name}: the vault settings record")

    def set_settings(self, settings: dict[str, Any]) -> None:
        with self._write() as conn:
            put_blob(conn, self.keys, SETTINGS_BLOB, json.dumps(settings).encode())

    # -- caches (derived data: a bad one is dropped and rebuilt) ---------------------------
    def get_blob(self, name: str) -> bytes | None:
        if name == SETTINGS_BLOB:
            return json.dumps(self.settings()).encode()
        return self.get_cache_blobs([name]).get(name)

    def put_cache_blob(self, name: str, data: bytes) -> None:
        """Caches (index, vectors) are derived data outside the manifest (see caches.py)."""
        self._caches.put({name: data})

    def put_cache_blobs(self, items: dict[str, bytes]) -> None:
        self._caches.put(items)

    def get_cache_blobs(self, names: list[str]) -> dict[str, bytes]:
        """The blobs that pass their checks; the others are dropped and noted in cache_repairs."""
        return self._caches.get(names)

    def embedding_names(self, space_key: str, chunk_hashes: list[str]) -> list[str]:
        return self._caches.names_for_vectors(space_key, chunk_hashes)

    def prune_cache_blobs(self, prefix: str, keep: set[str]) -> int:
        return self._caches.prune(prefix, keep)

    @property
    def cache_repairs(self) -> list[str]:
        return self._caches.repairs

    def change_passphrase(self, old: str, new: str) -> None:
        """Re-wrap the vault key under a new passphrase (passwd.py); records are untouched."""
        crypto.zero(crypto.normalize_passphrase(new))
        self._write_header(lambda current: rewrapped(current, old, new))

    def adopt_wrap(self, kdf: crypto.KdfParams, salt: bytes, wrapped: bytes) -> None:
        """Take the vault key as another device wrapped it after changing the passphrase (a
        sync target's join record, already authenticated by the caller): from now on only that
        passphrase unlocks this file. The next unlock re-wraps it in this header's own form."""
        self._write_header(lambda current: Header(**{**current.__dict__, "kdf": kdf, "salt": salt,
                                                     "wrapped_key": ADOPTED + wrapped}))

    def _rewrap_adopted(self, passphrase: str) -> None:
        self._write_header(lambda current: own_form(current, passphrase))

    def _write_header(self, change: Callable[[Header], Header]) -> None:
        with self._lock, sqlite_errors(self.path):
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                fresh = change(header_from(conn, self.path))
                conn.execute("UPDATE header SET kdf = ?, salt = ?, wrapped_key = ?, checksum = ?",
                             (json.dumps(fresh.kdf.to_dict(), sort_keys=True), fresh.salt, fresh.wrapped_key,
                              fresh.checksum()))
                counter = self._verify_manifest(conn)[0] + 1
                mac = rowmac.full(conn, self.keys, counter)
                conn.execute("UPDATE state SET change_counter = ?, manifest = ?", (counter, mac))
                conn.execute("COMMIT")
                self.header = fresh
                self._verified = None
                self._seen(counter, mac)
            except BaseException:
                conn.execute("ROLLBACK")
                raise

