"""The vault's egress log: one encrypted entry per request that sent vault content out.

Entries live in their own table, `egress(seq, nonce, ciphertext, digest)`, sealed with the
blob key and associated data binding the vault id and the entry's sequence number, so an
entry cannot be edited, swapped or moved to another position. The table is outside the
record manifest (a request during a search must not invalidate every index), so a deleted
entry shows as a gap in the sequence, and entries cut from the end cannot be told from
entries never written (docs/backups.md says so). Vaults made before the log existed get the table
with their first entry; until then reading it gives an empty log. A vault that has kept a log
says so in its authenticated settings (`EGRESS_MARK`, set at creation and at the first entry),
so a dropped table is damage, not an empty log.

An entry is written before its request is sent (outcome "sending") and rewritten with the
outcome afterwards; one that still says "sending" was sent but its end was not recorded (the
process died or the vault was locked meanwhile).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..egress import SentChunk
from ..errors import TamperError
from ..i18n import msg
from ..serial import Jsonable
from . import crypto
from .header import sqlite_errors
from .integrity import checked_blob_row, digest
from .keys import VaultKeys
from .part import VaultPart

SCHEMA = ("CREATE TABLE IF NOT EXISTS egress (seq INTEGER PRIMARY KEY, nonce BLOB NOT NULL, "
          "ciphertext BLOB NOT NULL, digest BLOB NOT NULL)")
SENDING = "sending"
EGRESS_MARK = "egress_log"  # in the settings record: this vault keeps a log (its table must be there)


@dataclass(frozen=True)
class EgressEntry(Jsonable):
    seq: int
    time: str  # UTC, ISO 8601, when the request was about to be sent
    host: str
    purpose: str
    loopback: bool
    chunks: tuple[SentChunk, ...]
    bytes_sent: int
    bytes_received: int = 0
    outcome: str = SENDING
    attempts: int = 0
    client: str | None = None  # e.g. "mcp:claude-code" when an MCP call caused it
    objects: int = 0  # objects written to a sync target (0 for model requests)

    JSON_COMPUTED = (("records", "records", "loopback"),)

    @property
    def records(self) -> list[str]:
        """The ids of the records whose chunks the request carried."""
        return sorted({c.record_id for c in self.chunks if c.record_id})

    def sealed_form(self) -> bytes:
        """What is sealed in the vault: written out here, apart from the printed JSON, so that
        changing what `--json` shows never changes the format of entries already stored."""
        data = {"time": self.time, "host": self.host, "purpose": self.purpose, "loopback": self.loopback,
                "client": self.client, "outcome": self.outcome, "attempts": self.attempts,
                "bytes_sent": self.bytes_sent, "bytes_received": self.bytes_received, "objects": self.objects,
                "chunks": [{"id": c.record_id, "revision": c.revision, "chunk_hash": c.chunk_hash}
                           for c in self.chunks]}
        return json.dumps(data, ensure_ascii=False, sort_keys=True).encode("utf-8")

    @classmethod
    def from_sealed(cls, seq: int, raw: bytes | bytearray) -> EgressEntry:
        """Parse a decrypted entry; a field of the wrong type is a TamperError."""
        try:
            data = json.loads(raw)
            chunks = tuple(SentChunk(_opt(c["id"], str), _opt(c["revision"], int), _req(c["chunk_hash"], str))
                           for c in _req(data["chunks"], list))
            return cls(seq=seq, time=_req(data["time"], str), host=_req(data["host"], str),
                       purpose=_req(data["purpose"], str), loopback=_req(data["loopback"], bool), chunks=chunks,
                       bytes_sent=_req(data["bytes_sent"], int), bytes_received=_req(data["bytes_received"], int),
                       outcome=_req(data["outcome"], str), attempts=_req(data["attempts"], int),
                       client=_opt(data.get("client"), str), objects=_req(data.get("objects", 0), int))
        except (ValueError, KeyError, TypeError, RecursionError):
            raise TamperError(msg("Egress log entry {seq} decrypted to a malformed entry.", seq=seq)) from None


def _req(value: Any, kind: type) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(kind.__name__)
    return value


def _opt(value: Any, kind: type) -> Any:
    return None if value is None else _req(value, kind)


def entry_ad(vault_id: str, seq: int) -> bytes:
    return crypto.length_prefixed("egress/v1", vault_id, seq)


@dataclass
class EgressRead:
    """The readable entries, and what is wrong with the rest."""

    entries: list[EgressEntry] = field(default_factory=list)
    damaged: list[int] = field(default_factory=list)  # sequence numbers that failed their checks
    missing: list[int] = field(default_factory=list)  # sequence numbers absent below the last one


def open_entry(keys: VaultKeys, vault_id: str, seq: Any, nonce: Any, ct: Any, row_digest: Any,
                where: str) -> EgressEntry:
    if type(seq) is not int:
        raise TamperError(msg("{where}: an egress log row has a sequence number of the wrong type.", where=where))
    what = f"{where}: egress log entry {seq}"
    checked = checked_blob_row(nonce, ct, row_digest, what)
    raw = crypto.open_sealed(keys.blob, *checked, entry_ad(vault_id, seq), what)
    try:
        return EgressEntry.from_sealed(seq, raw)
    finally:
        crypto.zero(raw)


def has_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'egress'").fetchone() is not None


def check_entries(conn: sqlite3.Connection, path: Path, vault_id: str, keys: VaultKeys | None) -> int:
    """For file verification: every entry's digest (and AEAD with keys); the number of entries."""
    if not has_table(conn):
        return 0
    count = 0
    for seq, nonce, ct, row_digest in conn.execute("SELECT seq, nonce, ciphertext, digest FROM egress"):
        if keys is not None:
            open_entry(keys, vault_id, seq, nonce, ct, row_digest, path.name)
        else:
            checked_blob_row(nonce, ct, row_digest, f"{path.name}: egress log entry {seq}")
        count += 1
    return count


class EgressLog(VaultPart):
    """The log of one unlocked vault (shares its connection and lock, like the cache blobs)."""

    def append(self, entry: EgressEntry) -> EgressEntry:
        """Write `entry` under the next sequence number and return it with that number."""
        with self._writing() as keys:
            self._conn.execute(SCHEMA)
            last = self._conn.execute("SELECT MAX(seq) FROM egress").fetchone()[0]
            seq = (last if type(last) is int else 0) + 1
            numbered = EgressEntry(**{**entry.__dict__, "seq": seq})
            self._put(keys, numbered, insert=True)
        return numbered

    def rewrite(self, entry: EgressEntry) -> None:
        """Replace entry `entry.seq` (its outcome is known now)."""
        with self._writing() as keys:
            self._put(keys, entry, insert=False)

    def _put(self, keys: VaultKeys, entry: EgressEntry, *, insert: bool) -> None:
        nonce, ct = crypto.seal(keys.blob, entry.sealed_form(), entry_ad(self.vault_id, entry.seq))
        verb = "INSERT INTO" if insert else "REPLACE INTO"
        self._conn.execute(f"{verb} egress VALUES (?, ?, ?, ?)", (entry.seq, nonce, ct, digest(nonce, ct)))

    def exists(self) -> bool:
        with self._reading():
            return has_table(self._conn)

    def read(self, since: str | None = None) -> EgressRead:
        """Every entry (oldest first), or those at or after the UTC time `since` (ISO 8601)."""
        out = EgressRead()
        with self._reading() as keys:
            rows = (self._conn.execute("SELECT seq, nonce, ciphertext, digest FROM egress ORDER BY seq")
                    .fetchall() if has_table(self._conn) else [])
        expected = 1
        for seq, nonce, ct, row_digest in rows:
            if type(seq) is int:
                out.missing.extend(range(expected, seq))
                expected = seq + 1
            try:
                entry = open_entry(keys, self.vault_id, seq, nonce, ct, row_digest, self.path.name)
            except TamperError:
                out.damaged.append(seq if type(seq) is int else -1)
                continue
            if since is None or entry.time >= since:
                out.entries.append(entry)
        return out


Row = tuple[Any, Any, Any, Any]


def last_seq(path: Path) -> int:
    """The highest entry number in a vault file (0 without a log), read-only."""
    from .header import connect_readonly

    conn = connect_readonly(path)
    try:
        with sqlite_errors(path):
            if not has_table(conn):
                return 0
            value = conn.execute("SELECT MAX(seq) FROM egress").fetchone()[0]
    finally:
        conn.close()
    return value if type(value) is int else 0


def egress_after(conn: sqlite3.Connection, path: Path, seq: int) -> list[Row]:
    """The sealed rows numbered above `seq`, as they are (they stay valid: same vault, same numbers)."""
    with sqlite_errors(path):
        if not has_table(conn):
            return []
        return conn.execute("SELECT seq, nonce, ciphertext, digest FROM egress WHERE seq > ? ORDER BY seq",
                            (seq,)).fetchall()


def keep_egress(conn: sqlite3.Connection, path: Path, rows: list[Row]) -> None:
    """Put rows from `egress_after` back after the database was replaced by an older copy."""
    if not rows:
        return
    with sqlite_errors(path):
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(SCHEMA)
            conn.executemany("INSERT OR IGNORE INTO egress VALUES (?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
