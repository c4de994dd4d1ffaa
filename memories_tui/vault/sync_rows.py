"""The vault side of sync: its sealed state blob, and pulled revisions written together with it.

The state (device id, chain positions, revision trees, kept conflicts) is one blob sealed with
the blob key and covered by the manifest, so it cannot be swapped or rolled back apart from the
records it describes. Pulled revisions and the state that names them are written in one
transaction: a crash leaves both as they were or both new.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..errors import ErrorCode, SyncError
from ..i18n import msg
from . import crypto
from .integrity import blob_ad, checked_blob_row, put_blob
from .keys import VaultKeys
from .records import Record

SYNC_BLOB = "sync"


@dataclass(frozen=True)
class SyncedChange:
    """What one sync writes: records to store (revision numbers already chosen), records to
    delete, the latest revision each touched record must still have (None: absent), the state,
    and the state it was computed from (None: there was none), which must still be the stored one."""

    puts: Sequence[Record] = ()
    deletes: Sequence[str] = ()
    expected: dict[str, int | None] = field(default_factory=dict)
    state: bytes = b""
    base: bytes | None = field(default=None, kw_only=True)


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
               insert: Callable[[sqlite3.Connection, Record], None]) -> None:
    """Inside the store's write transaction: refuse if a touched record changed since the sync
    read it, or if another sync of this vault committed meanwhile (two would both write bundle
    N+1 and other devices would see two versions of it); the caller tries again. Then write."""
    if read_state(conn, keys) != change.base:
        raise SyncError(msg("Another sync of this vault ran at the same time; sync again."), code=ErrorCode.SYNC_BUSY)
    for record_id, revision in change.expected.items():
        current = conn.execute("SELECT MAX(revision) FROM records WHERE record_id = ?", (record_id,)).fetchone()[0]
        if current != revision:
            raise SyncError(msg("A record changed while the sync was running; sync again."), code=ErrorCode.SYNC_BUSY)
    conn.executemany("DELETE FROM records WHERE record_id = ?", [(rid,) for rid in change.deletes])
    for record in change.puts:
        insert(conn, record)
    put_blob(conn, keys, SYNC_BLOB, change.state)
