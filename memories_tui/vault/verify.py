"""Checking a whole vault file, read-only: what a backup is verified with before it counts,
and what a restore checks before it replaces anything.

Without keys: the clear header and its checksum, SQLite's own integrity check, the type of
every column and every row's ciphertext digest. With the vault's keys as well: every record
revision decrypts and parses (AEAD), the keyed manifest matches, the settings record and the
egress log entries decrypt. Cache blobs are derived data (dropped and rebuilt when bad), so a
bad one is counted, not fatal.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import CancelledError, ErrorCode, TamperError, VaultError
from ..i18n import msg
from . import crypto
from . import manifest as rowmac
from .header import Header, connect_readonly, header_from, sqlite_errors
from .integrity import (
    SETTINGS_BLOB,
    blob_ad,
    checked_blob_row,
    decode_payload,
    record_ad,
)
from .keys import VaultKeys
from .records import KINDS

VerifyProgress = Callable[[int, int], None]  # (record rows checked, rows in all)


@dataclass(frozen=True)
class FileCheck:
    """What a verified vault file holds (its state is `counter` + `manifest`)."""

    path: Path
    header: Header
    counter: int
    manifest: bytes
    records: int  # distinct record ids
    revisions: int  # record rows
    keyed: bool  # AEAD and manifest checked too (keys were at hand)
    egress_entries: int
    bad_cache_blobs: int

    @property
    def state(self) -> str:
        """A short, stable name of this state for messages: change number + manifest prefix."""
        return state_name(self.counter, self.manifest)


def state_name(counter: int, mac: bytes) -> str:
    return f"change {counter} (manifest {mac.hex()[:12]})"


def open_checked(path: Path) -> tuple[sqlite3.Connection, Header]:
    """A read-only connection to a file recognised as a vault, after SQLite's integrity check."""
    conn = connect_readonly(path)
    try:
        header = header_from(conn, path)
        with sqlite_errors(path):
            problems = [row[0] for row in conn.execute("PRAGMA integrity_check(5)")]
        if problems != ["ok"]:
            shown = "; ".join(str(p)[:80] for p in problems[:2])
            raise VaultError(msg("{name} is damaged (SQLite integrity check: {shown}).",
                                 name=path.name, shown=shown), code=ErrorCode.VAULT_DAMAGED)
    except BaseException:
        conn.close()
        raise
    return conn, header


def check_vault_file(path: Path, keys: VaultKeys | None = None, *, progress: VerifyProgress | None = None,
                     cancel: threading.Event | None = None) -> FileCheck:
    """Verify `path` as described above; raises VaultError / TamperError naming the problem."""
    conn, header = open_checked(path)
    try:
        if keys is not None and keys.vault_id != header.vault_id:
            raise VaultError(msg("{name} belongs to vault {vault_id}, not {vault_id2}.",
                                 name=path.name, vault_id=header.vault_id, vault_id2=keys.vault_id),
                             code=ErrorCode.VAULT_MISMATCH)
        with sqlite_errors(path):
            conn.execute("BEGIN")
            try:
                return _check(conn, path, header, keys, progress, cancel)
            finally:
                conn.execute("COMMIT")
    finally:
        conn.close()


def _check(conn: sqlite3.Connection, path: Path, header: Header, keys: VaultKeys | None,
           progress: VerifyProgress | None, cancel: threading.Event | None) -> FileCheck:
    state = conn.execute("SELECT change_counter, manifest FROM state").fetchone()
    if state is None or type(state[0]) is not int or not isinstance(state[1], bytes):
        raise TamperError(msg("{name}: the vault state row is missing or damaged.", name=path.name))
    counter, stored = state
    total = conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    ids: set[str] = set()
    done = 0
    for record_id, revision, kind, nonce, ct, row_digest in conn.execute(
            "SELECT record_id, revision, kind, nonce, ciphertext, digest FROM records"):
        if not (isinstance(record_id, str) and type(revision) is int and kind in KINDS):
            raise TamperError(msg("{name}: a record row has a column of the wrong type or an unknown kind.",
                                  name=path.name))
        what = f"{path.name}: record {record_id} revision {revision}"
        nonce, ct = checked_blob_row(nonce, ct, row_digest, what)
        if keys is not None:
            raw = crypto.open_sealed(keys.record, nonce, ct, record_ad(header.vault_id, record_id, kind, revision),
                                     what)
            try:
                decode_payload(raw, record_id, revision, kind, what)
            finally:
                crypto.zero(raw)
        ids.add(record_id)
        done += 1
        if done % 200 == 0 or done == total:
            if cancel is not None and cancel.is_set():
                raise CancelledError(msg("Verification cancelled."))
            if progress is not None:
                progress(done, total)
    if keys is not None and rowmac.verified_sum(conn, keys, counter, stored) is None:
        raise TamperError(msg("{name}: the record manifest does not match (rows were deleted, added or rolled back "
                              "outside Memories).", name=path.name))
    bad_caches = _check_blobs(conn, path, header, keys)
    from .egress_log import check_entries

    entries = check_entries(conn, path, header.vault_id, keys)
    return FileCheck(path, header, counter, stored, len(ids), done, keys is not None, entries, bad_caches)


def _check_blobs(conn: sqlite3.Connection, path: Path, header: Header, keys: VaultKeys | None) -> int:
    """The settings record must be sound; cache blobs that fail are only counted."""
    bad = 0
    found_settings = False
    for name, nonce, ct, row_digest in conn.execute("SELECT name, nonce, ciphertext, digest FROM blobs"):
        what = f"{path.name}: blob {name!r}"
        try:
            if not isinstance(name, str):
                raise TamperError(msg("{what} has a name of the wrong type.", what=what))
            checked = checked_blob_row(nonce, ct, row_digest, what)
            if keys is not None:
                crypto.zero(crypto.open_sealed(keys.blob, *checked, blob_ad(header.vault_id, name), what))
        except TamperError:
            if name in (SETTINGS_BLOB, "sync"):  # the sync state is not derived data either
                raise
            bad += 1
        found_settings = found_settings or name == SETTINGS_BLOB
    if not found_settings:
        raise TamperError(msg("{name}: the vault settings record is missing.", name=path.name))
    return bad
