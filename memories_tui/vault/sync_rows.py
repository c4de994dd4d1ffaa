"""The vault side of sync: its sealed state blob and per-record rows, and pulled revisions
written together with them.

The state (device id, chain positions, kept conflicts) is one blob sealed with the blob key;
each record's entry (revision tree, the revision the vault holds) is a row of `sync_docs`,
sealed with the blob key under associated data naming the vault, the record and the vault
revision it describes, which is also a clear column (revision numbers are clear in `records`
too) so that finding the records changed since the last sync is one query. The manifest covers
the blob and every row, so none can be swapped or rolled back apart from the records they
describe. Pulled revisions and the state that names them are written in one transaction: a
crash leaves both as they were or both new.
"""

from __future__ import annotations

import functools
import hashlib
import sqlite3
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ErrorCode, SyncError, TamperError
from ..i18n import msg
from . import crypto
from . import manifest as rowmac
from .integrity import blob_ad, checked_blob_row, digest, put_blob
from .keys import VaultKeys
from .records import PulledRecord, Record

SYNC_BLOB = "sync"
_DOCS_SCHEMA = ("CREATE TABLE IF NOT EXISTS sync_docs (record_id TEXT PRIMARY KEY, local INTEGER, "
                "nonce BLOB NOT NULL, ciphertext BLOB NOT NULL, digest BLOB NOT NULL)")
_OUTBOX_SCHEMA = ("CREATE TABLE IF NOT EXISTS sync_outbox (seq INTEGER PRIMARY KEY, blob BLOB NOT NULL, "
                  "digest BLOB NOT NULL)")
_BATCH = 500
_PACK = struct.Struct(">I").pack


@dataclass(frozen=True)
class SyncedChange:
    """What one sync writes: records to store (revision numbers already chosen), records to
    delete, the latest revision each touched record must still have (None: absent), the state,
    and the state it was computed from (None: there was none), which must still be the stored one."""

    puts: Sequence[Record | PulledRecord] = ()
    deletes: Sequence[str] = ()
    expected: dict[str, int | None] = field(default_factory=dict)
    state: bytes = b""
    base: bytes | None = field(default=None, kw_only=True)
    docs: Sequence[tuple[str, int | None, bytes]] = field(default=(), kw_only=True)  # (record, revision, row)
    outbox: dict[int, bytes] = field(default_factory=dict, kw_only=True)  # sealed bundles not uploaded yet
    uploaded: Sequence[int] = field(default=(), kw_only=True)  # bundles that left: off the outbox


def read_outbox(conn: sqlite3.Connection, _keys: VaultKeys | None = None) -> dict[int, bytes]:
    """The bundles committed but not uploaded yet (already sealed for the target; the manifest
    covers their digests, so none is swapped or dropped here)."""
    if not rowmac.has_table(conn, "sync_outbox"):
        return {}
    out = {}
    for seq, blob, row_digest in conn.execute("SELECT seq, blob, digest FROM sync_outbox ORDER BY seq"):
        if not (type(seq) is int and isinstance(blob, bytes) and row_digest == hashlib.sha256(blob).digest()):
            raise TamperError(msg("The vault's sync state is malformed; refusing it."))
        out[seq] = blob
    return out


@dataclass(frozen=True)
class LocalChange:
    """A record added or edited here since the last sync, in the form the vault stores it (what a
    bundle carries: opening it into a Record only to encode it again cost most of a first push)."""

    record_id: str
    revision: int
    kind: str
    payload: str

    @classmethod
    def opened(cls, row: tuple[Any, ...], raw: bytearray) -> LocalChange:
        try:
            return cls(row[0], row[1], row[2], raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise TamperError(msg("{what} decrypted to a malformed record; refusing it.",
                                  what=f"Record {row[0]} revision {row[1]}")) from None
        finally:
            crypto.zero(raw)


@dataclass(frozen=True)
class LocalRef:
    """A record added or edited here since the last sync, not opened yet: a first push opens its
    changes a bundle's worth at a time (`size`, the stored ciphertext's length, cuts them)."""

    record_id: str
    revision: int
    size: int


def doc_ad(vault_id: str, record_id: str, local: int | None) -> bytes:
    """length_prefixed("sync-doc/v1", vault_id, record_id, "-" or the revision), with the part
    every row of a vault shares made once (a join seals one row a record)."""
    ident, number = record_id.encode("utf-8"), b"-" if local is None else str(local).encode()
    return b"".join((_doc_ad_head(vault_id), _PACK(len(ident)), ident, _PACK(len(number)), number))


@functools.lru_cache(maxsize=8)
def _doc_ad_head(vault_id: str) -> bytes:
    return crypto.length_prefixed("sync-doc/v1", vault_id)


def read_docs(conn: sqlite3.Connection, keys: VaultKeys, record_ids: list[str] | None
              ) -> dict[str, tuple[int | None, bytes]]:
    """The rows of these records (every row when None), opened: record -> (revision, row)."""
    if not rowmac.has_sync_docs(conn):
        return {}
    query = "SELECT record_id, local, nonce, ciphertext, digest FROM sync_docs"
    if record_ids is None:
        rows = conn.execute(query).fetchall()
    else:
        rows = []
        for start in range(0, len(record_ids), _BATCH):
            part = record_ids[start:start + _BATCH]
            rows += conn.execute(f"{query} WHERE record_id IN ({','.join('?' * len(part))})", part).fetchall()
    out = {}
    for record_id, local, nonce, ct, row_digest in rows:
        what = f"The sync state of record {record_id}"
        if not (isinstance(record_id, str) and (local is None or type(local) is int)):
            raise TamperError(msg("The vault's sync state is malformed; refusing it."))
        nonce, ct = checked_blob_row(nonce, ct, row_digest, what)
        raw = crypto.open_sealed(keys.blob, nonce, ct, doc_ad(keys.vault_id, record_id, local), what)
        out[record_id] = (local, bytes(raw))
        crypto.zero(raw)
    return out


def changed_since_sync(conn: sqlite3.Connection, candidates: list[str] | None = None
                       ) -> tuple[list[tuple[str, int]], list[str]]:
    """(records whose latest revision is not the one their sync row names, with that revision;
    records with a row naming a revision that are gone from the vault): local edits and
    deletions since the last sync, found without opening anything. `candidates`: only these
    records can have changed (None: any can, and every record is compared)."""
    if candidates is not None:
        latest: dict[str, int] = {}
        rows: dict[str, int | None] = {}
        for start in range(0, len(candidates), _BATCH):
            part = candidates[start:start + _BATCH]
            marks = ",".join("?" * len(part))
            latest.update(conn.execute("SELECT record_id, MAX(revision) FROM records WHERE record_id IN "
                                       f"({marks}) GROUP BY record_id", part).fetchall())
            if rowmac.has_sync_docs(conn):
                rows.update(conn.execute(f"SELECT record_id, local FROM sync_docs WHERE record_id IN ({marks})",
                                         part).fetchall())
        return ([(record_id, rev) for record_id, rev in latest.items() if rows.get(record_id) != rev],
                [record_id for record_id, local in rows.items() if local is not None and record_id not in latest])
    latest_q = "SELECT record_id, MAX(revision) AS rev FROM records GROUP BY record_id"
    if not rowmac.has_sync_docs(conn):
        return [(record_id, rev) for record_id, rev in conn.execute(latest_q)], []
    changed = conn.execute(f"SELECT m.record_id, m.rev FROM ({latest_q}) m LEFT JOIN sync_docs s ON "
                           "s.record_id = m.record_id WHERE s.local IS NULL OR s.local != m.rev").fetchall()
    gone = conn.execute("SELECT record_id FROM sync_docs WHERE local IS NOT NULL AND record_id NOT IN "
                        "(SELECT record_id FROM records)").fetchall()
    return [(record_id, rev) for record_id, rev in changed], [record_id for (record_id,) in gone]


class TouchedRecords:
    """The records this vault object wrote since the last sync, so that a sync after a few local
    edits compares those instead of every record. Unknown (every record is compared) when the
    vault was just opened, after another process committed, and after a sync that failed."""

    def __init__(self) -> None:
        self._ids: dict[str, int] | None = None  # record -> the write that last touched it
        self._writes = 0

    def wrote(self, record_ids: set[str]) -> None:
        self._writes += 1
        if self._ids is not None:
            self._ids.update(dict.fromkeys(record_ids, self._writes))

    def unknown(self) -> None:
        self._ids = None

    def start(self) -> tuple[list[str] | None, int]:
        """(the records a sync starting now must compare, None for all; its mark). From now on
        writes are noted, whatever was known before."""
        candidates = None if self._ids is None else sorted(self._ids)
        if self._ids is None:
            self._ids = {}
        return candidates, self._writes

    def synced(self, mark: int, ok: bool) -> None:
        """A sync that started at `mark` committed (its records are compared) or failed."""
        if not ok:
            self._ids = None
        elif self._ids is not None:
            self._ids = {record_id: n for record_id, n in self._ids.items() if n > mark}


def local_changes(conn: sqlite3.Connection, touched: TouchedRecords) -> tuple[list[LocalRef], list[str], int]:
    """Inside a verified read: what `UnlockedVault.sync_changes` returns."""
    candidates, mark = touched.start()
    try:
        changed, gone = changed_since_sync(conn, candidates)
        return [LocalRef(*row) for row in rows_at(conn, changed, "length(ciphertext)")], gone, mark
    except BaseException:
        touched.unknown()
        raise


def has_local_changes(conn: sqlite3.Connection, touched: TouchedRecords) -> bool:
    """Inside a verified read: whether `local_changes` would find anything. When it finds
    nothing, the `local_changes` of the same sync compares only what is written after this
    (every record was compared here when none were known); otherwise it compares as before."""
    candidates, _mark = touched.start()
    try:
        changed, gone = changed_since_sync(conn, candidates)
    except BaseException:
        touched.unknown()
        raise
    if (changed or gone) and candidates is None:
        touched.unknown()  # found here: local_changes compares every record again
    return bool(changed or gone)


def opened_changes(conn: sqlite3.Connection, refs: Sequence[LocalRef], open_row: Callable[..., bytearray]
                   ) -> list[LocalChange]:
    """Inside a verified read: these changes as stored (a record deleted since is left out: the
    next sync sees the deletion; one edited since sends this revision, and the next sync the new one)."""
    rows = rows_at(conn, [(ref.record_id, ref.revision) for ref in refs])
    return [LocalChange.opened(row[:3], open_row(*row)) for row in rows]


def rows_at(conn: sqlite3.Connection, pairs: list[tuple[str, int]],
            columns: str = "kind, nonce, ciphertext, digest") -> list[Any]:
    """The stored rows of these (record, revision) pairs, a few hundred per query."""
    rows = []
    for start in range(0, len(pairs), 400):
        part = pairs[start:start + 400]
        where = " OR ".join("(record_id = ? AND revision = ?)" for _ in part)
        rows += conn.execute(f"SELECT record_id, revision, {columns} FROM records WHERE "
                             + where, [v for pair in part for v in pair]).fetchall()
    return rows


def _write_docs(conn: sqlite3.Connection, keys: VaultKeys, docs: Sequence[tuple[str, int | None, bytes]]) -> None:
    """Replace these records' rows (a delete and an insert each: the manifest's triggers see both)."""
    if not docs:
        return
    if not rowmac.has_sync_docs(conn):
        conn.execute(_DOCS_SCHEMA)
        rowmac.watch(conn, fresh=False)  # the records this transaction wrote are noted already
    conn.executemany("DELETE FROM sync_docs WHERE record_id = ?", [(record_id,) for record_id, _local, _row in docs])
    conn.executemany("INSERT INTO sync_docs VALUES (?, ?, ?, ?, ?)", (_sealed_doc(keys, *doc) for doc in docs))


def _sealed_doc(keys: VaultKeys, record_id: str, local: int | None, row: bytes) -> tuple[Any, ...]:
    nonce, ct = crypto.seal(keys.blob, row, doc_ad(keys.vault_id, record_id, local))
    return (record_id, local, nonce, ct, digest(nonce, ct))


def read_state(conn: sqlite3.Connection, keys: VaultKeys) -> bytes | None:
    row = conn.execute("SELECT nonce, ciphertext, digest FROM blobs WHERE name = ?", (SYNC_BLOB,)).fetchone()
    if row is None:
        return None
    what = "The vault's sync state"
    nonce, ct = checked_blob_row(row[0], row[1], row[2], what)
    raw = crypto.open_sealed(keys.blob, nonce, ct, blob_ad(keys.vault_id, SYNC_BLOB), what)
    try:
        return bytes(raw)
    finally:
        crypto.zero(raw)


def apply_rows(conn: sqlite3.Connection, keys: VaultKeys, change: SyncedChange,
               insert: Callable[[sqlite3.Connection, Sequence[Record | PulledRecord]], None]) -> None:
    """Inside the store's write transaction: refuse if a touched record changed since the sync
    read it, or if another sync of this vault committed meanwhile (two would both write bundle
    N+1 and other devices would see two versions of it); the caller tries again. Then write
    (a few statements for the whole change: a join writes every record)."""
    if read_state(conn, keys) != change.base:
        raise SyncError(msg("Another sync of this vault ran at the same time; sync again."), code=ErrorCode.SYNC_BUSY)
    ids = list(change.expected)
    current: dict[str, int] = {}
    for start in range(0, len(ids), _BATCH):
        part = ids[start:start + _BATCH]
        current.update(conn.execute("SELECT record_id, MAX(revision) FROM records WHERE record_id IN "
                                    f"({','.join('?' * len(part))}) GROUP BY record_id", part).fetchall())
    if any(current.get(record_id) != revision for record_id, revision in change.expected.items()):
        raise SyncError(msg("A record changed while the sync was running; sync again."), code=ErrorCode.SYNC_BUSY)
    conn.executemany("DELETE FROM records WHERE record_id = ?", [(record_id,) for record_id in change.deletes])
    insert(conn, change.puts)
    _write_docs(conn, keys, change.docs)
    if change.outbox:
        if not rowmac.has_table(conn, "sync_outbox"):
            conn.execute(_OUTBOX_SCHEMA)
            rowmac.watch(conn, fresh=False)
        conn.executemany("INSERT INTO sync_outbox VALUES (?, ?, ?)",
                         [(seq, blob, hashlib.sha256(blob).digest()) for seq, blob in sorted(change.outbox.items())])
    if change.uploaded:
        conn.executemany("DELETE FROM sync_outbox WHERE seq = ?", [(seq,) for seq in change.uploaded])
    put_blob(conn, keys, SYNC_BLOB, change.state)
