"""Creating a vault file: schema, header, wrapped key, settings record and first manifest.

The file is written under a temporary name, checkpointed, made 0600 and then moved into
place, so a crash never leaves a half-made vault under its final name.
"""

from __future__ import annotations

import json
import os
import secrets
from datetime import UTC, datetime
from pathlib import Path

from ..errors import VaultError
from ..i18n import msg
from . import crypto
from . import manifest as rowmac
from .egress_log import EGRESS_MARK
from .egress_log import SCHEMA as EGRESS_SCHEMA
from .header import FORMAT_VERSION, MAGIC, Header, connect_readwrite
from .integrity import SETTINGS_BLOB, put_blob
from .keys import VaultKeys, disable_core_dumps

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
""" + EGRESS_SCHEMA + ";\n"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def create_vault_file(path: Path, name: str, passphrase: str, *, device_only: bool = False,
                      joined: tuple[str, bytearray] | None = None) -> Header:
    """Create a new vault file; never overwrites an existing one. `joined` (vault id, vault key)
    makes this device's file of a vault that already exists elsewhere (`sync join`)."""
    params = crypto.creation_params()
    crypto.zero(crypto.normalize_passphrase(passphrase))  # refuse empty before any work
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.exists():
        raise VaultError(msg("{path} already exists; refusing to overwrite it.", path=path))
    header = Header(vault_id=joined[0] if joined else secrets.token_hex(8), name=name, format=FORMAT_VERSION, kdf=params,
                    salt=os.urandom(crypto.SALT_BYTES), wrapped_key=b"", created=now_iso())
    disable_core_dumps()
    kek = crypto.derive_kek(passphrase, header.salt, params)
    vault_key = bytearray(joined[1]) if joined else crypto.random_key()
    keys = None
    try:
        header = Header(**{**header.__dict__, "wrapped_key": crypto.wrap_key(kek, vault_key, header.associated_data())})
        keys = VaultKeys(vault_key, header.vault_id)
        tmp = path.with_suffix(".creating")
        tmp.unlink(missing_ok=True)
        conn = connect_readwrite(tmp)
        try:
            conn.executescript(_SCHEMA)
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                "INSERT INTO header VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (MAGIC, header.format, header.vault_id, header.name, json.dumps(params.to_dict(), sort_keys=True),
                 header.salt, header.wrapped_key, header.created, header.checksum()),
            )
            put_blob(conn, keys, SETTINGS_BLOB, json.dumps({"device_only": device_only, EGRESS_MARK: True}).encode())
            conn.execute("INSERT INTO state VALUES (1, 1, ?)", (rowmac.full(conn, keys, 1),))
            conn.execute("COMMIT")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        for suffix in ("-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
        os.chmod(tmp, 0o600)  # SQLite gives -wal/-shm files the database file's permissions
        os.replace(tmp, path)
    finally:
        if keys is not None:
            keys.wipe()
        crypto.zero(kek)
        crypto.zero(vault_key)
    return header
