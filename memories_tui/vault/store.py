"""One vault = one SQLite file of ciphertext (R-VAULT-3, DESIGN §2).

Tables:
  header   one row: magic, format, vault id, name, KDF params, salt, wrapped vault key,
           and an unkeyed checksum so accidental damage is told apart from a wrong passphrase.
  records  one row per record revision: clear (record_id, revision, kind) for lookups, the
           AES-256-GCM nonce + ciphertext, and a digest of the ciphertext.
  blobs    named encrypted blobs: the settings record (policy flags) and caches (index, vectors).
  state    the change counter other processes poll (R-CACHE-3) and the manifest MAC over every
           (record_id, revision, kind, digest) row plus the settings blob, which detects deleted,
           added or rolled-back rows that AEAD alone cannot see.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import secrets
import sqlite3
import struct
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import InputRefusedError, NotFoundError, TamperError, VaultError
from . import crypto
from .records import KINDS, NewRecord, Record, RecordUpdate, sensitivity_for

MAGIC = "memories-vault"
FORMAT_VERSION = 1
SETTINGS_BLOB = "settings"
_BUSY_TIMEOUT_S = 30.0

_SCHEMA = """
CREATE TABLE header (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    magic TEXT NOT NULL, format INTEGER NOT NULL, vault_id TEXT NOT NULL, name TEXT NOT NULL,
    kdf TEXT NOT NULL, salt BLOB NOT NULL, wrapped_key BLOB NOT NULL, created TEXT NOT NULL,
    checksum BLOB NOT NULL
);
CREATE TABLE records (
    record_id TEXT NOT NULL, revision INTEGER NOT NULL, kind TEXT NOT NULL,
    nonce BLOB NOT NULL, ciphertext BLOB NOT NULL, digest BLOB NOT NULL,
    PRIMARY KEY (record_id, revision)
);
CREATE TABLE blobs (name TEXT PRIMARY KEY, nonce BLOB NOT NULL, ciphertext BLOB NOT NULL,
                    digest BLOB NOT NULL);
CREATE TABLE state (id INTEGER PRIMARY KEY CHECK (id = 1), change_counter INTEGER NOT NULL,
                    manifest BLOB NOT NULL);
"""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Header:
    vault_id: str
    name: str
    format: int
    kdf: crypto.KdfParams
    salt: bytes
    wrapped_key: bytes
    created: str

    def associated_data(self) -> bytes:
        """Everything but the wrapped key: binds the key wrap to this exact header."""
        return crypto.length_prefixed(MAGIC, self.format, self.vault_id, self.name,
                                      json.dumps(self.kdf.to_dict(), sort_keys=True), self.salt, self.created)

    def checksum(self) -> bytes:
        return hashlib.sha256(self.associated_data() + self.wrapped_key).digest()


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA secure_delete=ON")
        conn.execute("PRAGMA temp_store=MEMORY")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise VaultError(f"{path.name} is not a Memories vault (or it is damaged): {exc}.") from None
    return conn


def read_header(path: Path) -> Header:
    """Read and sanity-check the clear header without any key. Refuses foreign/newer files."""
    if not path.is_file():
        raise NotFoundError(f"Vault file {path} does not exist.")
    conn = _connect(path)
    try:
        return _read_header(conn, path)
    finally:
        conn.close()


def _read_header(conn: sqlite3.Connection, path: Path) -> Header:
    try:
        row = conn.execute(
            "SELECT magic, format, vault_id, name, kdf, salt, wrapped_key, created, checksum FROM header"
        ).fetchone()
    except sqlite3.DatabaseError:
        raise VaultError(
            f"{path.name} is not a Memories vault (no vault header); refusing to open or change it."
        ) from None
    if row is None or row[0] != MAGIC:
        raise VaultError(f"{path.name} is not a Memories vault; refusing to open or change it.")
    if not isinstance(row[1], int) or row[1] > FORMAT_VERSION:
        raise VaultError(
            f"{path.name} was written by a newer version of Memories (format {row[1]}; this version "
            f"reads format {FORMAT_VERSION}). Upgrade Memories to open it."
        )
    try:
        kdf = crypto.KdfParams.from_dict(json.loads(row[4]))
    except (TypeError, ValueError):
        raise TamperError(f"{path.name}: the vault header is damaged (unreadable KDF parameters).") from None
    header = Header(vault_id=row[2], name=row[3], format=row[1], kdf=kdf, salt=bytes(row[5]),
                    wrapped_key=bytes(row[6]), created=row[7])
    if header.checksum() != bytes(row[8]):
        raise TamperError(f"{path.name}: the vault header is damaged or was edited (checksum mismatch).")
    return header


def count_records(path: Path) -> int:
    """Distinct record ids, read without a key (for `vault list`)."""
    conn = _connect(path)
    try:
        return conn.execute("SELECT COUNT(DISTINCT record_id) FROM records").fetchone()[0]
    except sqlite3.DatabaseError:
        raise VaultError(f"{path.name} is not a Memories vault (or it is damaged).") from None
    finally:
        conn.close()


def create_vault_file(path: Path, name: str, passphrase: str, *, device_only: bool = False) -> Header:
    """Create a new vault file; never overwrites an existing one."""
    params = crypto.creation_params()
    crypto.normalize_passphrase(passphrase)  # refuse empty before any work
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        raise VaultError(f"{path} already exists; refusing to overwrite it.")
    header = Header(vault_id=secrets.token_hex(8), name=name, format=FORMAT_VERSION, kdf=params,
                    salt=os.urandom(crypto.SALT_BYTES), wrapped_key=b"", created=now_iso())
    kek = crypto.derive_kek(passphrase, header.salt, params)
    vault_key = bytearray(os.urandom(crypto.KEY_BYTES))
    try:
        header = Header(**{**header.__dict__, "wrapped_key": crypto.wrap_key(kek, vault_key, header.associated_data())})
        tmp = path.with_suffix(".creating")
        tmp.unlink(missing_ok=True)
        conn = _connect(tmp)
        try:
            conn.executescript(_SCHEMA)
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                "INSERT INTO header VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (MAGIC, header.format, header.vault_id, header.name, json.dumps(params.to_dict(), sort_keys=True),
                 header.salt, header.wrapped_key, header.created, header.checksum()),
            )
            keys = _Keys(vault_key, header.vault_id)
            _put_blob(conn, keys, SETTINGS_BLOB, json.dumps({"device_only": device_only}).encode())
            conn.execute("INSERT INTO state VALUES (1, 1, ?)", (_manifest(conn, keys, 1),))
            conn.execute("COMMIT")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        for suffix in ("-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
        os.chmod(tmp, 0o600)  # SQLite gives -wal/-shm files the database file's permissions
        os.replace(tmp, path)
    finally:
        crypto.zero(kek)
        crypto.zero(vault_key)
    return header


class _Keys:
    """Subkeys derived from the vault key; zeroed on close."""

    def __init__(self, vault_key: bytearray, vault_id: str) -> None:
        self.vault_id = vault_id
        record = crypto.subkey(vault_key, "record")
        self.manifest = crypto.subkey(vault_key, "manifest")
        self.blob_mac = crypto.subkey(vault_key, "blob-name")
        blob = crypto.subkey(vault_key, "blob")
        # AEAD contexts built once (key schedule per record would cost ~10 µs each); the raw
        # subkey bytes are zeroed at once, the contexts are dropped on close.
        self.record: AESGCM = AESGCM(bytes(record))
        self.blob: AESGCM = AESGCM(bytes(blob))
        crypto.zero(record)
        crypto.zero(blob)

    def zero(self) -> None:
        crypto.zero(self.manifest)
        crypto.zero(self.blob_mac)
        self.__dict__.pop("record", None)  # drop the AEAD contexts
        self.__dict__.pop("blob", None)


def _record_ad(vault_id: str, record_id: str, kind: str, revision: int) -> bytes:
    return crypto.length_prefixed("record/v1", vault_id, record_id, kind, sensitivity_for(kind), revision)


def _blob_ad(vault_id: str, name: str) -> bytes:
    return crypto.length_prefixed("blob/v1", vault_id, name)


def _digest(nonce: bytes, ciphertext: bytes) -> bytes:
    return hashlib.sha256(nonce + ciphertext).digest()


def _put_blob(conn: sqlite3.Connection, keys: _Keys, name: str, data: bytes) -> None:
    nonce, ct = crypto.seal(keys.blob, data, _blob_ad(keys.vault_id, name))
    conn.execute("INSERT OR REPLACE INTO blobs VALUES (?, ?, ?, ?)", (name, nonce, ct, _digest(nonce, ct)))


def _manifest(conn: sqlite3.Connection, keys: _Keys, counter: int) -> bytes:
    h = hashlib.sha256()
    h.update(crypto.length_prefixed("manifest/v1", keys.vault_id, counter))
    pack = struct.Struct(">I").pack
    for record_id, revision, kind, digest in conn.execute(
        "SELECT record_id, revision, kind, digest FROM records ORDER BY record_id, revision"
    ):
        # inlined crypto.length_prefixed(record_id, revision, kind, digest): same bytes, 3x faster
        rid, rev, knd, dig = record_id.encode(), str(revision).encode(), kind.encode(), bytes(digest)
        h.update(b"".join((pack(len(rid)), rid, pack(len(rev)), rev, pack(len(knd)), knd, pack(len(dig)), dig)))
    row = conn.execute("SELECT digest FROM blobs WHERE name = ?", (SETTINGS_BLOB,)).fetchone()
    h.update(crypto.length_prefixed("settings", bytes(row[0]) if row else b""))
    return crypto.mac(keys.manifest, h.digest())


def _encode_payload(record: Record) -> bytes:
    payload: dict[str, Any] = {
        "kind": record.kind, "sensitivity": record.sensitivity, "title": record.title, "body": record.body,
        "tags": list(record.tags), "metadata": record.metadata, "created": record.created,
        "updated": record.updated,
    }
    if record.data is not None:
        payload["data"] = base64.b64encode(record.data).decode("ascii")
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


class UnlockedVault:
    """An open vault with its keys in memory. Thread-safe; every write is one IMMEDIATE transaction."""

    def __init__(self, path: Path, passphrase: str) -> None:
        self.path = path
        self._conn = _connect(path)
        self._lock = threading.RLock()
        try:
            self.header = _read_header(self._conn, path)
            kek = crypto.derive_kek(passphrase, self.header.salt, self.header.kdf)
            try:
                vault_key = crypto.unwrap_key(kek, self.header.wrapped_key, self.header.associated_data())
            finally:
                crypto.zero(kek)
            self._keys: _Keys | None = _Keys(vault_key, self.header.vault_id)
            crypto.zero(vault_key)
            with self._read() as conn:
                self._verify_manifest(conn)
        except BaseException:
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
    def keys(self) -> _Keys:
        if self._keys is None:
            from ..errors import LockedError

            raise LockedError("The vault is locked; unlock it again.")
        return self._keys

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot across several SELECTs (WAL readers never block writers)."""
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                yield self._conn
            finally:
                self._conn.execute("COMMIT")

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE: one writer at a time across processes; verify, change, re-MAC, bump."""
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                counter = self._verify_manifest(conn)
                yield conn
                counter += 1
                conn.execute("UPDATE state SET change_counter = ?, manifest = ?",
                             (counter, _manifest(conn, self.keys, counter)))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def _verify_manifest(self, conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT change_counter, manifest FROM state").fetchone()
        if row is None:
            raise TamperError(f"{self.path.name}: the vault state row is missing; the file was altered.")
        counter, stored = row
        if _manifest(conn, self.keys, counter) != bytes(stored):
            raise TamperError(
                f"{self.path.name}: the record manifest does not match (rows were deleted, added or "
                "rolled back outside Memories). Nothing from it is shown."
            )
        return counter

    def change_counter(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT change_counter FROM state").fetchone()[0]

    def policy_tag(self) -> bytes:
        """Changes whenever the settings record or the header (passphrase) changes: cached
        indexes are dropped on such changes even though no record changed (R-CACHE-3)."""
        with self._lock:
            settings = self._conn.execute("SELECT digest FROM blobs WHERE name = ?", (SETTINGS_BLOB,)).fetchone()
            header = self._conn.execute("SELECT checksum FROM header").fetchone()
        return hashlib.sha256(bytes(settings[0] if settings else b"") + bytes(header[0] if header else b"")).digest()

    def close(self) -> None:
        with self._lock:
            if self._keys is not None:
                self._keys.zero()
                self._keys = None
            self._conn.close()

    # -- records --------------------------------------------------------------------------
    def _decrypt_row(self, record_id: str, revision: int, kind: str, nonce: bytes, ct: bytes,
                     digest: bytes) -> Record:
        what = f"Record {record_id} revision {revision}"
        if _digest(bytes(nonce), bytes(ct)) != bytes(digest):
            raise TamperError(f"{what} does not match its manifest digest: the vault file was altered.")
        raw = crypto.open_sealed(self.keys.record, bytes(nonce), bytes(ct),
                                 _record_ad(self.vault_id, record_id, kind, revision), what)
        payload = json.loads(raw.decode("utf-8"))
        if payload.get("kind") != kind or payload.get("sensitivity") != sensitivity_for(kind):
            raise TamperError(f"{what}: its stored kind does not match its label on disk; refusing it.")
        data = base64.b64decode(payload["data"]) if "data" in payload else None
        return Record(id=record_id, revision=revision, kind=kind, title=payload["title"], body=payload["body"],
                      tags=tuple(payload.get("tags", ())), metadata=payload.get("metadata", {}),
                      created=payload.get("created", ""), updated=payload.get("updated", ""), data=data)

    def refresh(self, known: dict[str, int]) -> tuple[int, set[str], list[Record]]:
        """One verified read: (change counter, ids of all live records, decrypted latest
        revisions of those whose revision differs from `known`)."""
        with self._read() as conn:
            counter = self._verify_manifest(conn)
            latest = conn.execute(
                "SELECT record_id, MAX(revision) FROM records GROUP BY record_id").fetchall()
            changed = [(rid, rev) for rid, rev in latest if known.get(rid) != rev]
            rows = []
            for start in range(0, len(changed), 400):
                part = changed[start:start + 400]
                where = " OR ".join("(record_id = ? AND revision = ?)" for _ in part)
                rows += conn.execute(
                    f"SELECT record_id, revision, kind, nonce, ciphertext, digest FROM records WHERE {where}",
                    [v for pair in part for v in pair]).fetchall()
        return counter, {rid for rid, _ in latest}, [self._decrypt_row(*row) for row in rows]

    def read(self, record_id: str, revision: int | None = None) -> Record:
        with self._read() as conn:
            if revision is None:
                row = conn.execute(
                    "SELECT record_id, revision, kind, nonce, ciphertext, digest FROM records "
                    "WHERE record_id = ? ORDER BY revision DESC LIMIT 1", (record_id,)).fetchone()
            else:
                row = conn.execute(
                    "SELECT record_id, revision, kind, nonce, ciphertext, digest FROM records "
                    "WHERE record_id = ? AND revision = ?", (record_id, revision)).fetchone()
        if row is None:
            suffix = f" revision {revision}" if revision is not None else ""
            raise NotFoundError(f"No record {record_id}{suffix} in vault {self.name}.")
        return self._decrypt_row(*row)

    def read_many(self, record_ids: list[str] | None = None) -> list[Record]:
        """Latest revision of the given records (all records when None), after a manifest check."""
        with self._read() as conn:
            self._verify_manifest(conn)
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
            _check_kind(item.kind)
            records.append(Record(id=secrets.token_hex(8), revision=1, kind=item.kind, title=item.title,
                                  body=item.body, tags=tuple(item.tags), metadata=item.metadata,
                                  created=stamp, updated=stamp, data=item.data))
        with self._write() as conn:
            for record in records:
                self._insert(conn, record)
        return records

    def update(self, change: RecordUpdate) -> Record:
        return self.update_many([change])[0]

    def update_many(self, changes: Sequence[RecordUpdate]) -> list[Record]:
        """New revisions of existing records in one transaction. The current revision is read
        inside the write lock, so two concurrent writers both land (no lost update)."""
        out = []
        with self._write() as conn:
            for change in changes:
                record_id = change.record_id
                row = conn.execute(
                    "SELECT record_id, revision, kind, nonce, ciphertext, digest FROM records "
                    "WHERE record_id = ? ORDER BY revision DESC LIMIT 1", (record_id,)).fetchone()
                if row is None:
                    raise NotFoundError(f"No record {record_id} in vault {self.name}.")
                old = self._decrypt_row(*row)
                new = Record(id=old.id, revision=old.revision + 1, kind=old.kind,
                             title=old.title if change.title is None else change.title,
                             body=old.body if change.body is None else change.body,
                             tags=old.tags if change.tags is None else tuple(change.tags),
                             metadata=old.metadata if change.metadata is None else change.metadata,
                             created=old.created, updated=now_iso(), data=old.data)
                self._insert(conn, new)
                out.append(new)
        return out

    def delete(self, record_id: str) -> None:
        with self._write() as conn:
            cur = conn.execute("DELETE FROM records WHERE record_id = ?", (record_id,))
            if cur.rowcount == 0:
                raise NotFoundError(f"No record {record_id} in vault {self.name}.")

    def revisions(self, record_id: str) -> list[int]:
        with self._read() as conn:
            return [r for (r,) in conn.execute(
                "SELECT revision FROM records WHERE record_id = ? ORDER BY revision", (record_id,))]

    def _insert(self, conn: sqlite3.Connection, record: Record) -> None:
        nonce, ct = crypto.seal(self.keys.record, _encode_payload(record),
                                _record_ad(self.vault_id, record.id, record.kind, record.revision))
        conn.execute("INSERT INTO records VALUES (?, ?, ?, ?, ?, ?)",
                     (record.id, record.revision, record.kind, nonce, ct, _digest(nonce, ct)))

    # -- settings and blobs ---------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        data = self.get_blob(SETTINGS_BLOB)
        if data is None:
            raise TamperError(f"{self.path.name}: the vault settings record is missing; the file was altered.")
        return json.loads(data)

    def set_settings(self, settings: dict[str, Any]) -> None:
        with self._write() as conn:
            _put_blob(conn, self.keys, SETTINGS_BLOB, json.dumps(settings).encode())

    def get_blob(self, name: str) -> bytes | None:
        with self._lock:
            row = self._conn.execute("SELECT nonce, ciphertext FROM blobs WHERE name = ?", (name,)).fetchone()
        if row is None:
            return None
        return crypto.open_sealed(self.keys.blob, bytes(row[0]), bytes(row[1]), _blob_ad(self.vault_id, name),
                                  f"Encrypted blob {name!r}")

    def put_cache_blob(self, name: str, data: bytes) -> None:
        """Caches (index, vectors) are not part of the manifest and do not bump the counter:
        they are derived data, and a stale or rolled-back cache is detected by its own keys."""
        self.put_cache_blobs({name: data})

    def embedding_names(self, space_key: str, chunk_hashes: list[str]) -> list[str]:
        """Blob names for cached vectors: keyed HMACs, so the clear name reveals no chunk hash."""
        key = self.keys.blob_mac
        return ["emb:" + crypto.mac(key, crypto.length_prefixed("emb", space_key, h)).hex()[:40]
                for h in chunk_hashes]

    def get_cache_blobs(self, names: list[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        with self._lock:
            for start in range(0, len(names), 500):
                part = names[start:start + 500]
                marks = ",".join("?" * len(part))
                rows = self._conn.execute(
                    f"SELECT name, nonce, ciphertext FROM blobs WHERE name IN ({marks})", part).fetchall()
                for name, nonce, ct in rows:
                    out[name] = crypto.open_sealed(self.keys.blob, bytes(nonce), bytes(ct),
                                                   _blob_ad(self.vault_id, name), f"Encrypted blob {name!r}")
        return out

    def put_cache_blobs(self, items: dict[str, bytes]) -> None:
        """Write several derived-data blobs in one transaction (see put_cache_blob)."""
        if SETTINGS_BLOB in items:
            raise VaultError("The settings record is written through set_settings only.")
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for name, data in items.items():
                    _put_blob(self._conn, self.keys, name, data)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def prune_cache_blobs(self, prefix: str, keep: set[str]) -> int:
        """Delete derived blobs under `prefix` not in `keep` (vectors of deleted text)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                names = [n for (n,) in self._conn.execute(
                    "SELECT name FROM blobs WHERE substr(name, 1, ?) = ?", (len(prefix), prefix))]
                stale = [n for n in names if n not in keep]
                self._conn.executemany("DELETE FROM blobs WHERE name = ?", [(n,) for n in stale])
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return len(stale)

    def change_passphrase(self, old: str, new: str) -> None:
        """Re-wrap the vault key under a new passphrase; records are untouched."""
        crypto.normalize_passphrase(new)
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                header = _read_header(conn, self.path)
                kek = crypto.derive_kek(old, header.salt, header.kdf)
                try:
                    vault_key = crypto.unwrap_key(kek, header.wrapped_key, header.associated_data())
                finally:
                    crypto.zero(kek)
                params = header.kdf if crypto._TEST_KDF_OVERRIDE is None else crypto._TEST_KDF_OVERRIDE
                fresh = Header(vault_id=header.vault_id, name=header.name, format=header.format, kdf=params,
                               salt=os.urandom(crypto.SALT_BYTES), wrapped_key=b"", created=header.created)
                new_kek = crypto.derive_kek(new, fresh.salt, params)
                try:
                    wrapped = crypto.wrap_key(new_kek, vault_key, fresh.associated_data())
                finally:
                    crypto.zero(new_kek)
                    crypto.zero(vault_key)
                fresh = Header(**{**fresh.__dict__, "wrapped_key": wrapped})
                conn.execute("UPDATE header SET kdf = ?, salt = ?, wrapped_key = ?, checksum = ?",
                             (json.dumps(params.to_dict(), sort_keys=True), fresh.salt, wrapped, fresh.checksum()))
                counter = self._verify_manifest(conn) + 1
                conn.execute("UPDATE state SET change_counter = ?, manifest = ?",
                             (counter, _manifest(conn, self.keys, counter)))
                conn.execute("COMMIT")
                self.header = fresh
            except BaseException:
                conn.execute("ROLLBACK")
                raise


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise InputRefusedError(f"Unknown record kind {kind!r}; use one of {', '.join(KINDS)}.", code="bad_kind")
