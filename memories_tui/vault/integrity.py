"""Associated data, digests, the keyed manifest and record payloads: what makes a row trusted.

Every value read from the file is type-checked before use, so an edited column (TEXT where a
BLOB belongs, a huge integer) is a TamperError, never a TypeError or a giant allocation.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import sqlite3
import struct
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import TamperError
from ..i18n import msg
from . import crypto
from .keys import VaultKeys
from .records import Kind, PulledRecord, Record, sensitivity_for

SETTINGS_BLOB = "settings"
_PACK = struct.Struct(">I").pack


def record_ad(vault_id: str, record_id: str, kind: str, revision: int) -> bytes:
    """length_prefixed("record/v1", vault_id, record_id, kind, sensitivity_for(kind), revision),
    with the parts every record of a vault shares made once (a sync of a vault makes 10,000s)."""
    ident, number = record_id.encode("utf-8"), str(revision).encode()
    return b"".join((_ad_head("record/v1", vault_id), _PACK(len(ident)), ident, _kind_part(kind),
                     _PACK(len(number)), number))


@functools.lru_cache(maxsize=8)
def _ad_head(label: str, vault_id: str) -> bytes:
    return crypto.length_prefixed(label, vault_id)


@functools.lru_cache(maxsize=16)
def _kind_part(kind: str) -> bytes:
    return crypto.length_prefixed(kind, sensitivity_for(kind))


def record_row(aead: AESGCM, vault_id: str, record: Record | PulledRecord) -> tuple[Any, ...]:
    """The `records` row of this record sealed (a pulled one as it was pulled)."""
    data = record.payload.encode("utf-8") if isinstance(record, PulledRecord) else encode_payload(record)
    nonce, ct = crypto.seal(aead, data, record_ad(vault_id, record.id, record.kind, record.revision))
    return (record.id, record.revision, record.kind, nonce, ct, digest(nonce, ct))


def blob_ad(vault_id: str, name: str) -> bytes:
    return crypto.length_prefixed("blob/v1", vault_id, name)


def digest(nonce: bytes, ciphertext: bytes) -> bytes:
    return hashlib.sha256(nonce + ciphertext).digest()


def put_blob(conn: sqlite3.Connection, keys: VaultKeys, name: str, data: bytes | bytearray) -> None:
    """Seal `data` as blob `name` (AD: vault id and name) and store it with its digest."""
    nonce, ct = crypto.seal(keys.blob, data, blob_ad(keys.vault_id, name))
    conn.execute("INSERT OR REPLACE INTO blobs VALUES (?, ?, ?, ?)", (name, nonce, ct, digest(nonce, ct)))



def read_settings(conn: sqlite3.Connection, keys: VaultKeys, what: str) -> dict[str, Any]:
    """The settings record as `conn` holds it; TamperError when it is missing or altered."""
    row = conn.execute("SELECT nonce, ciphertext, digest FROM blobs WHERE name = ?", (SETTINGS_BLOB,)).fetchone()
    if row is None:
        raise TamperError(msg("{what} is missing; the file was altered.", what=what))
    return open_settings(keys, keys.vault_id, row, what)


def checked_blob_row(nonce: object, ciphertext: object, stored_digest: object, what: str) -> tuple[bytes, bytes]:
    """(nonce, ciphertext) once their types and their digest check out, else TamperError."""
    if not (isinstance(nonce, bytes) and isinstance(ciphertext, bytes) and isinstance(stored_digest, bytes)):
        raise TamperError(msg("{what} has a column of the wrong type: the vault file was altered.", what=what))
    if digest(nonce, ciphertext) != stored_digest:
        raise TamperError(msg("{what} does not match its digest: the vault file was altered or rolled back.",
                              what=what))
    return nonce, ciphertext


def open_settings(keys: VaultKeys, vault_id: str, row: Any, what: str) -> dict[str, Any]:
    """The settings record from its (nonce, ciphertext, digest) row: opened, its plaintext
    buffer wiped once parsed, and a TamperError unless it is a JSON object."""
    nonce, ct = checked_blob_row(row[0], row[1], row[2], what)
    raw = crypto.open_sealed(keys.blob, nonce, ct, blob_ad(vault_id, SETTINGS_BLOB), what)
    try:
        settings = json.loads(raw)
    except ValueError:
        settings = None
    finally:
        crypto.zero(raw)
    if not isinstance(settings, dict):
        raise TamperError(msg("{what} is malformed; refusing it.", what=what))
    return settings


def manifest(conn: sqlite3.Connection, keys: VaultKeys, counter: int) -> bytes:
    """Keyed MAC over every (record_id, revision, kind, digest) row and the settings digest."""
    if type(counter) is not int:
        raise TamperError(msg("The vault state row has a change counter of the wrong type: the file was altered."))
    h = hashlib.sha256()
    h.update(crypto.length_prefixed("manifest/v1", keys.vault_id, counter))
    for record_id, revision, kind, row_digest in conn.execute(
        "SELECT record_id, revision, kind, digest FROM records ORDER BY record_id, revision"
    ):
        if not (isinstance(record_id, str) and type(revision) is int and isinstance(kind, str)
                and isinstance(row_digest, bytes)):
            raise TamperError(msg("A record row has a column of the wrong type: the vault file was altered."))
        # inlined crypto.length_prefixed(record_id, revision, kind, digest): same bytes, 3x faster
        rid, rev, knd = record_id.encode("utf-8", "surrogatepass"), str(revision).encode(), kind.encode(
            "utf-8", "surrogatepass")
        h.update(b"".join((_PACK(len(rid)), rid, _PACK(len(rev)), rev, _PACK(len(knd)), knd,
                           _PACK(len(row_digest)), row_digest)))
    row = conn.execute("SELECT digest FROM blobs WHERE name = ?", (SETTINGS_BLOB,)).fetchone()
    settings_digest = row[0] if row else b""
    if not isinstance(settings_digest, bytes):
        raise TamperError(msg("The settings row has a digest of the wrong type: the vault file was altered."))
    h.update(crypto.length_prefixed("settings", settings_digest))
    sync = conn.execute("SELECT digest FROM blobs WHERE name = 'sync'").fetchone()
    if sync is not None:  # vaults that never synced keep the manifest they always had
        if not isinstance(sync[0], bytes):
            raise TamperError(msg("The sync state row has a digest of the wrong type: the vault file was altered."))
        h.update(crypto.length_prefixed("sync", sync[0]))
    return crypto.mac(keys.manifest, h.digest())


def encode_payload(record: Record) -> bytes:
    payload: dict[str, Any] = {
        "kind": record.kind, "sensitivity": record.sensitivity, "title": record.title, "body": record.body,
        "tags": list(record.tags), "metadata": record.metadata, "created": record.created,
        "updated": record.updated,
    }
    if record.data is not None:
        payload["data"] = base64.b64encode(record.data).decode("ascii")
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


def decode_payload(raw: bytearray | str, record_id: str, revision: int, kind: Kind, what: str) -> Record:
    """Parse an authenticated payload (as decrypted, or as a verified bundle carried it); its
    own kind must match the row's label on disk."""
    try:
        payload = json.loads(raw)
        if not isinstance(payload, dict):
            raise ValueError("not an object")
        if payload.get("kind") != kind or payload.get("sensitivity") != sensitivity_for(kind):
            raise TamperError(msg("{what}: its stored kind does not match its label on disk; refusing it.",
                                  what=what))
        title, body = payload["title"], payload["body"]
        tags, metadata = payload.get("tags", []), payload.get("metadata", {})
        created, updated = payload.get("created", ""), payload.get("updated", "")
        if not (isinstance(title, str) and isinstance(body, str) and isinstance(tags, list)
                and all(isinstance(t, str) for t in tags) and isinstance(metadata, dict)
                and isinstance(created, str) and isinstance(updated, str)):
            raise ValueError("a field has the wrong type")
        data = base64.b64decode(payload["data"], validate=True) if "data" in payload else None
    except TamperError:
        raise
    except (ValueError, KeyError, TypeError, RecursionError, binascii.Error):
        raise TamperError(msg("{what} decrypted to a malformed record; refusing it.", what=what)) from None
    return Record(id=record_id, revision=revision, kind=kind, title=title, body=body, tags=tuple(tags),
                  metadata=metadata, created=created, updated=updated, data=data)
