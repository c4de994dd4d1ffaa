"""A part of one unlocked vault that keeps a table of its own in the vault's file (the cache
blobs, the egress log).

It shares the vault's connection and lock rather than opening its own: one connection sees
its own writes, and the lock keeps a part's transaction from interleaving with the store's
on that connection. The keys are asked for on each use, so a part of a locked vault raises
`LockedError` like the store does.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from .header import sqlite_errors
from .keys import VaultKeys


class VaultPart:
    def __init__(self, path: Path, conn: sqlite3.Connection, lock: threading.RLock,
                 keys: Callable[[], VaultKeys], vault_id: str) -> None:
        self.path = path
        self._conn = conn
        self._lock = lock
        self._keys = keys
        self.vault_id = vault_id

    @contextlib.contextmanager
    def _reading(self) -> Iterator[VaultKeys]:
        """One snapshot of the file under the vault's lock, with the keys."""
        with self._lock, sqlite_errors(self.path):
            keys = self._keys()
            self._conn.execute("BEGIN")
            try:
                yield keys
            finally:
                self._conn.execute("COMMIT")

    @contextlib.contextmanager
    def _writing(self) -> Iterator[VaultKeys]:
        """One write transaction (BEGIN IMMEDIATE: one writer across processes), committed when
        the block ends and rolled back when it raises."""
        with self._lock, sqlite_errors(self.path):
            keys = self._keys()
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield keys
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
