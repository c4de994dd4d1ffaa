"""Cache blobs of an unlocked vault: the lexical-index snapshot and the embedding vectors.

Derived data, outside the manifest and the change counter. Each blob is AEAD-bound to the
vault id and its name and its row digest is checked on read; one that fails is dropped,
noted in `repairs` (shown by `rag status`) and rebuilt by the caller from verified records.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import LockedError, TamperError, VaultError
from ..i18n import msg
from . import crypto
from .integrity import SETTINGS_BLOB, blob_ad, checked_blob_row, put_blob
from .keys import VaultKeys
from .part import VaultPart


class CacheBlobs(VaultPart):
    def __init__(self, path: Path, conn: sqlite3.Connection, lock: threading.RLock,
                 keys: Callable[[], VaultKeys], vault_id: str) -> None:
        super().__init__(path, conn, lock, keys, vault_id)
        self.repairs: list[str] = []

    def names_for_vectors(self, space_key: str, chunk_hashes: list[str]) -> list[str]:
        """Blob names for cached vectors: keyed HMACs, so the clear name reveals no chunk hash."""
        key = self._keys().blob_mac
        return ["emb:" + crypto.mac(key, crypto.length_prefixed("emb", space_key, h)).hex()[:40]
                for h in chunk_hashes]

    def get(self, names: list[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        bad: list[tuple[Any, Any, Any]] = []
        with self._reading() as keys:
            for start in range(0, len(names), 500):
                part = names[start:start + 500]
                marks = ",".join("?" * len(part))
                rows = self._conn.execute(
                    f"SELECT name, nonce, ciphertext, digest FROM blobs WHERE name IN ({marks})", part).fetchall()
                for name, nonce, ct, row_digest in rows:
                    what = f"Cache blob {name!r}"
                    try:
                        checked = checked_blob_row(nonce, ct, row_digest, what)
                        raw = crypto.open_sealed(keys.blob, *checked, blob_ad(self.vault_id, name), what)
                        out[name] = bytes(raw)
                        crypto.zero(raw)
                    except TamperError:
                        bad.append((name, nonce, ct))
        if bad:
            self._drop(bad)
        return out

    def _drop(self, bad: list[tuple[Any, Any, Any]]) -> None:
        """Delete cache rows that failed their check (only if still unchanged) and say so."""
        names = [str(name) for name, _, _ in bad]
        shown = ", ".join(repr(n) for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        self.repairs.append(
            f"{len(names)} cache blob(s) failed their integrity check and were dropped ({shown}); "
            "they are rebuilt from the verified records.")
        with contextlib.suppress(VaultError, LockedError), self._writing():  # a vault locked meanwhile keeps them
            self._conn.executemany("DELETE FROM blobs WHERE name = ? AND nonce IS ? AND ciphertext IS ? "
                                   "AND name NOT IN ('settings', 'sync')", bad)

    def put(self, items: dict[str, bytes]) -> None:
        """Write several blobs in one transaction."""
        if SETTINGS_BLOB in items or "sync" in items:
            raise VaultError(msg("The settings record is written through set_settings only."))
        with self._writing() as keys:
            for name, data in items.items():
                put_blob(self._conn, keys, name, data)

    def prune(self, prefix: str, keep: set[str]) -> int:
        """Delete blobs under `prefix` not in `keep` (vectors of deleted text)."""
        with self._writing():  # raises LockedError after lock
            names = [n for (n,) in self._conn.execute(
                "SELECT name FROM blobs WHERE substr(name, 1, ?) = ?", (len(prefix), prefix))]
            stale = [n for n in names if n not in keep]
            self._conn.executemany("DELETE FROM blobs WHERE name = ?", [(n,) for n in stale])
        return len(stale)
