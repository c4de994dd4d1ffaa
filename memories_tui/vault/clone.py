"""A copy of a vault under a new id and name (`vault restore --as NAME`).

The vault id is bound into every record's associated data, so a copy that must live beside
the original in one home is re-encrypted: a new vault (new id, new random vault key, the
same passphrase) receives every revision of every record with its id, revision and dates
unchanged, the settings record and the egress log. Caches are derived data and are rebuilt.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any  # rows as sqlite3 returns them

from ..errors import TamperError
from ..i18n import msg
from . import crypto
from . import manifest as rowmac
from .create import create_vault_file
from .egress_log import SCHEMA as EGRESS_SCHEMA
from .egress_log import EgressEntry, entry_ad, has_table, open_entry
from .header import Header, connect_readonly, connect_readwrite, header_from, sqlite_errors
from .integrity import (
    SETTINGS_BLOB,
    checked_blob_row,
    decode_payload,
    digest,
    encode_payload,
    open_settings,
    put_blob,
    record_ad,
)
from .keys import VaultKeys, open_keys


def clone_vault(source: Path, source_keys: VaultKeys, target: Path, name: str, passphrase: str) -> Header:
    """Write a re-encrypted copy of the verified vault file `source` to the new file `target`."""
    header = create_vault_file(target, name, passphrase)
    keys = open_keys(header, passphrase)
    src = connect_readonly(source)
    dst = connect_readwrite(target)
    try:
        with sqlite_errors(source):
            source_header = header_from(src, source)
            rows = src.execute("SELECT record_id, revision, kind, nonce, ciphertext, digest FROM records").fetchall()
            settings = src.execute("SELECT nonce, ciphertext, digest FROM blobs WHERE name = ?",
                                   (SETTINGS_BLOB,)).fetchone()
            log = (src.execute("SELECT seq, nonce, ciphertext, digest FROM egress").fetchall()
                   if has_table(src) else [])
        if settings is None:
            raise TamperError(msg("{name}: the vault settings record is missing.", name=source.name))
        with sqlite_errors(target):
            dst.execute("BEGIN IMMEDIATE")
            try:
                copy = _Copy(source.name, source_keys, source_header.vault_id, keys, header.vault_id, dst)
                copy.records(rows)
                copy.settings(settings)
                copy.egress(log)
                dst.execute("UPDATE state SET change_counter = 2, manifest = ?", (rowmac.full(dst, keys, 2),))
                dst.execute("COMMIT")
            except BaseException:
                dst.execute("ROLLBACK")
                raise
            dst.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        src.close()
        dst.close()
        keys.wipe()
    return header


class _Copy:
    """Re-seal rows read from the source vault under the new vault's keys and id, one kind of
    row per method; every row is checked against the source's keys on the way."""

    def __init__(self, source_name: str, source_keys: VaultKeys, source_id: str, keys: VaultKeys, vault_id: str,
                 dst: sqlite3.Connection) -> None:
        self.source_name, self.source_keys, self.source_id = source_name, source_keys, source_id
        self.keys, self.vault_id, self.dst = keys, vault_id, dst

    def records(self, rows: list[Any]) -> None:
        """Every revision of every record, with its id, revision and dates unchanged."""
        for record_id, revision, kind, nonce, ct, row_digest in rows:
            what = f"{self.source_name}: record {record_id} revision {revision}"
            checked = checked_blob_row(nonce, ct, row_digest, what)
            raw = crypto.open_sealed(self.source_keys.record, *checked,
                                     record_ad(self.source_id, record_id, kind, revision), what)
            try:
                record = decode_payload(raw, record_id, revision, kind, what)
            finally:
                crypto.zero(raw)
            new_nonce, new_ct = crypto.seal(self.keys.record, encode_payload(record),
                                            record_ad(self.vault_id, record_id, kind, revision))
            self.dst.execute("INSERT INTO records VALUES (?, ?, ?, ?, ?, ?)",
                             (record_id, revision, kind, new_nonce, new_ct, digest(new_nonce, new_ct)))

    def settings(self, row: Any) -> None:
        """The settings record; a malformed one is refused, not copied."""
        values = open_settings(self.source_keys, self.source_id, row, f"{self.source_name}: the settings record")
        put_blob(self.dst, self.keys, SETTINGS_BLOB, json.dumps(values).encode())

    def egress(self, log: list[Any]) -> None:
        """The egress log, entry by entry under the same sequence numbers."""
        self.dst.execute(EGRESS_SCHEMA)
        for seq, nonce, ct, row_digest in log:
            entry: EgressEntry = open_entry(self.source_keys, self.source_id, seq, nonce, ct, row_digest,
                                             self.source_name)
            new_nonce, new_ct = crypto.seal(self.keys.blob, entry.sealed_form(), entry_ad(self.vault_id, seq))
            self.dst.execute("INSERT INTO egress VALUES (?, ?, ?, ?)", (seq, new_nonce, new_ct,
                                                                        digest(new_nonce, new_ct)))
