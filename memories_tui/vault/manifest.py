"""The keyed manifest over every record row, every per-record sync row and bundle waiting to be
uploaded, the settings and the sync state, kept up to date in time that follows the rows a write changes, not the vault's size.

Form 2 (written now): each row gets a keyed MAC of its identity and digest; the rows' MACs are
added modulo 2**256 (a multiset hash: a row present twice counts twice, so duplicating rows
does not cancel out as XOR would); the stored value is b"\\x02" + a MAC over the counter, that
sum and the settings and sync-state digests. A write adjusts the sum by the rows it inserted
and deleted, which temporary triggers note as the transaction runs. Form 1 (a MAC over all rows
in order, 32 bytes) is still accepted when verifying a file written before; the first write
replaces it by form 2. The sum is never stored, so the file shows nothing an attacker could
adjust: changing any row without the key changes the sum to one no stored MAC names.
"""

from __future__ import annotations

import hmac
import sqlite3
import struct

from ..errors import TamperError
from ..i18n import msg
from . import crypto
from .keys import VaultKeys

FORM2 = b"\x02"
_MOD = 1 << 256
_PACK = struct.Struct(">I").pack
SYNC_DOCS = "sync_docs"
_DELTA = "temp.manifest_delta"


def _lp(*parts: bytes) -> bytes:
    out: list[bytes] = []
    for p in parts:
        out += (_PACK(len(p)), p)
    return b"".join(out)


def _text(value: object) -> bytes:
    if not isinstance(value, str):
        raise TamperError(msg("A record row has a column of the wrong type: the vault file was altered."))
    return value.encode("utf-8", "surrogatepass")


def _row_mac(key: bytearray | memoryview, table: bytes, row_id: object, number: object, kind: object,
             row_digest: object) -> int:
    if not ((number is None or type(number) is int) and isinstance(row_digest, bytes)):
        raise TamperError(msg("A record row has a column of the wrong type: the vault file was altered."))
    ident, label, num = _text(row_id), _text(kind), b"-" if number is None else str(number).encode()
    data = b"".join((_PACK(len(table)), table, _PACK(len(ident)), ident, _PACK(len(num)), num,  # _lp, unrolled:
                     _PACK(len(label)), label, _PACK(len(row_digest)), row_digest))  # once per row a write changes
    return int.from_bytes(hmac.digest(key, data, "sha256"), "big")


SYNC_OUTBOX = "sync_outbox"
# the covered tables: (tag, table, its row's identity: id, number, kind columns)
_COVERED = (("r", "records", "record_id", "revision", "kind"), ("s", SYNC_DOCS, "record_id", "local", "''"),
            ("o", SYNC_OUTBOX, "''", "seq", "''"))


def _rows(conn: sqlite3.Connection) -> list[tuple[bytes, str]]:
    return [(tag.encode(), f"SELECT {ident}, {num}, {kind}, digest FROM {table}")
            for tag, table, ident, num, kind in _COVERED if has_table(conn, table)]


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() \
        is not None


def has_sync_docs(conn: sqlite3.Connection) -> bool:
    return has_table(conn, SYNC_DOCS)


def row_sum(conn: sqlite3.Connection, keys: VaultKeys) -> int:
    """The sum of every row's MAC: one pass over the file (verification, creation, clones)."""
    total = 0
    for table, query in _rows(conn):
        for row in conn.execute(query):
            total += _row_mac(keys.manifest, table, *row)
    return total % _MOD


def _single(conn: sqlite3.Connection, name: str) -> bytes:
    row = conn.execute("SELECT digest FROM blobs WHERE name = ?", (name,)).fetchone()
    value = row[0] if row else b""
    if not isinstance(value, bytes):
        if name == "settings":
            raise TamperError(msg("The settings row has a digest of the wrong type: the vault file was altered."))
        raise TamperError(msg("The sync state row has a digest of the wrong type: the vault file was altered."))
    return value


def sealed_form(conn: sqlite3.Connection, keys: VaultKeys, counter: int, total: int) -> bytes:
    """What the state row stores for this counter and row sum (form 2)."""
    if type(counter) is not int:
        raise TamperError(msg("The vault state row has a change counter of the wrong type: the file was altered."))
    data = crypto.length_prefixed("manifest/v2", keys.vault_id, counter, total.to_bytes(32, "big"),
                                  _single(conn, "settings"), _single(conn, "sync"))
    return FORM2 + crypto.mac(keys.manifest, data)


def full(conn: sqlite3.Connection, keys: VaultKeys, counter: int) -> bytes:
    """The manifest of the file as it is, computed from every row (form 2)."""
    return sealed_form(conn, keys, counter, row_sum(conn, keys))


def verified_sum(conn: sqlite3.Connection, keys: VaultKeys, counter: int, stored: object) -> int | None:
    """The row sum when `stored` is this file's manifest (either form), else None."""
    if isinstance(stored, bytes) and len(stored) == 33 and stored[:1] == FORM2:
        total = row_sum(conn, keys)
        return total if sealed_form(conn, keys, counter, total) == stored else None
    from .integrity import manifest

    if isinstance(stored, bytes) and manifest(conn, keys, counter) == stored:
        return row_sum(conn, keys)
    return None


def watch(conn: sqlite3.Connection, *, fresh: bool = True) -> None:
    """Note, in this connection's temporary schema, every row a transaction inserts or deletes in
    the tables the manifest covers (idempotent; call inside the write transaction). `fresh`
    forgets what was noted before: at the start of a transaction, never within one."""
    conn.execute(f"CREATE TABLE IF NOT EXISTS {_DELTA} (sign INTEGER, tab BLOB, id, num, kind, digest)")
    for tag, name, ident, num, kind in _COVERED:
        if not has_table(conn, name):
            continue
        new = ", ".join(c if c == "''" else f"NEW.{c}" for c in (ident, num, kind, "digest"))
        old = new.replace("NEW.", "OLD.")
        conn.execute(f"CREATE TEMP TRIGGER IF NOT EXISTS manifest_{name}_ins AFTER INSERT ON main.{name} BEGIN "
                     f"INSERT INTO manifest_delta VALUES (1, '{tag}', {new}); END")
        conn.execute(f"CREATE TEMP TRIGGER IF NOT EXISTS manifest_{name}_del AFTER DELETE ON main.{name} BEGIN "
                     f"INSERT INTO manifest_delta VALUES (-1, '{tag}', {old}); END")
        conn.execute(f"CREATE TEMP TRIGGER IF NOT EXISTS manifest_{name}_upd AFTER UPDATE ON main.{name} BEGIN "
                     f"INSERT INTO manifest_delta VALUES (-1, '{tag}', {old}); "
                     f"INSERT INTO manifest_delta VALUES (1, '{tag}', {new}); END")
    if fresh:
        conn.execute(f"DELETE FROM {_DELTA}")


def changed_sum(conn: sqlite3.Connection, keys: VaultKeys, total: int) -> tuple[int, int, set[str]]:
    """(the row sum after this transaction's inserts and deletes, how many rows they were, the
    record ids among them)."""
    rows = conn.execute(f"SELECT sign, tab, id, num, kind, digest FROM {_DELTA}").fetchall()
    records = set()
    for sign, table, row_id, number, kind, row_digest in rows:
        tag = table.encode() if isinstance(table, str) else table
        mac = _row_mac(keys.manifest, tag, row_id, number, kind, row_digest)
        total += mac if sign > 0 else -mac
        if tag == b"r":
            records.add(row_id)
    conn.execute(f"DELETE FROM {_DELTA}")
    return total % _MOD, len(rows), records


__all__ = ["changed_sum", "full", "has_sync_docs", "has_table", "row_sum", "sealed_form", "verified_sum", "watch"]
