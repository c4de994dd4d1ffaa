"""The vaults this process holds unlocked, each with a cache of its latest records.

Decrypted records and keys live only here, in memory; `close` zeroes the keys and forgets
the records. The cache is refreshed when any process changed the vault (change counter).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from ..errors import LockedError
from ..i18n import msg

if TYPE_CHECKING:  # the vault store (cryptography, SQLite writes) loads at the first unlock
    from ..vault.records import Record
    from ..vault.store import UnlockedVault


_SERIALS = itertools.count(1)


@dataclass
class OpenVault:
    vault: UnlockedVault
    latest: dict[str, Record] = field(default_factory=dict)  # record id -> latest revision
    counter: int = -1  # the vault's change counter when `latest` was last refreshed
    lock: threading.RLock = field(default_factory=threading.RLock)
    read_at: dict[str, float] = field(default_factory=dict)  # record id -> when read in this session
    serial: int = field(default_factory=lambda: next(_SERIALS))  # tells one unlock of a vault from the next

    def note_read(self, record_id: str) -> None:
        with self.lock:
            self.read_at[record_id] = time.time()

    def embed_priority(self) -> Callable[[str], float]:
        """Background embedding order: the later of a record's last change and its
        last read in this session first, so what the user just wrote or opened is searchable
        by meaning soonest."""
        ranks: dict[str, float] = {}

        def rank(record_id: str) -> float:  # lazy: searches with every chunk embedded never call it
            if record_id not in ranks:
                with self.lock:
                    record = self.latest.get(record_id)
                    read = self.read_at.get(record_id, 0.0)
                ranks[record_id] = max(_epoch(record.updated or record.created) if record else 0.0, read)
            return ranks[record_id]

        return rank

    def latest_records(self) -> dict[str, Record]:
        """Latest revision of every record, refreshed when any process changed the vault."""
        return self.latest_counted()[0]

    def latest_counted(self) -> tuple[dict[str, Record], int]:
        """`latest_records` with the change counter they are from, read together: an index built
        from them is marked with that counter, never with a later one another thread (a pull
        committed meanwhile) moved it to, which would leave the pulled records out of search."""
        with self.lock:
            if self.vault.change_counter() != self.counter:
                known = {record_id: r.revision for record_id, r in self.latest.items()}
                counter, live, changed = self.vault.refresh(known)
                for record_id in [record_id for record_id in self.latest if record_id not in live]:
                    del self.latest[record_id]
                for record in changed:
                    self.latest[record.id] = record
                self.counter = counter
            return dict(self.latest), self.counter


def _epoch(stamp: str) -> float:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


class OpenVaults:
    def __init__(self) -> None:
        self._open: dict[str, OpenVault] = {}
        self._lock = threading.RLock()

    def add(self, vault_id: str, vault: UnlockedVault) -> None:
        with self._lock:
            if vault_id in self._open:
                vault.close()
            else:
                self._open[vault_id] = OpenVault(vault)

    def __contains__(self, vault_id: object) -> bool:
        with self._lock:
            return vault_id in self._open

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._open)

    def peek(self, vault_id: str) -> OpenVault | None:
        with self._lock:
            return self._open.get(vault_id)

    def get(self, vault_ref: str) -> OpenVault:
        """The open vault with this id (or name), else LockedError."""
        with self._lock:
            entry = self._open.get(vault_ref)
            if entry is None:
                for candidate in self._open.values():
                    if candidate.vault.name == vault_ref:
                        entry = candidate
                        break
        if entry is None:
            raise LockedError(msg("Vault {vault_ref} is locked; unlock it first.", vault_ref=vault_ref))
        return entry

    def close(self, vault_id: str) -> None:
        """Zero the vault's keys and forget its decrypted records."""
        with self._lock:
            entry = self._open.pop(vault_id, None)
        if entry is not None:
            with entry.lock:
                entry.latest.clear()
                entry.read_at.clear()
                entry.vault.close()
