"""A target that reports how far a sync is: it counts the bundles fetched against those the
other devices' heads name, then the objects uploaded. It sits between the sync and the real
target, so the sync's own steps stay as they are; its reads and listings are waited for in a way
ctrl+c, a lock and a deadline can end (waiting.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import CancelledError, MemoriesError
from ..i18n import msg
from .sealing import Head
from .targets import Target
from .types import SyncProgress
from .waiting import wait_for

if TYPE_CHECKING:
    from ..vault.keys import VaultKeys


class WatchedTarget:
    """Wraps `target`; calls `report` after each object fetched or uploaded. With `cancel` set,
    a fetch or listing stops the sync, one waiting included (nothing is written before every
    object is fetched); so does `check` raising (the vault was locked)."""

    def __init__(self, target: Target, keys: VaultKeys, report: Callable[[SyncProgress], None] | None,
                 cancel: threading.Event | None = None, check: Callable[[], object] | None = None) -> None:
        self.target = target
        self.description = target.description
        self.on_this_machine = target.on_this_machine
        self._keys = keys
        self._report = report
        self._cancel = cancel
        self._check = check
        self._heads: dict[str, int] = {}  # device → the last bundle its head names
        self._counted: dict[str, int] = {}  # device -> its lowest bundle fetched (those from it are in the total)
        self._lock = threading.Lock()
        self.fetched = self.total = self.fetched_bytes = 0
        self.sent = self.sent_bytes = 0

    def get(self, name: str, limit: int | None = None) -> bytes | None:
        if self._cancel is not None and self._cancel.is_set():
            raise CancelledError(msg("Sync cancelled; nothing was changed here."))
        blob = wait_for(lambda: self.target.get(name, limit), where=self.description, name=name, cancel=self._cancel,
                        check=self._check)
        with self._lock:  # a pull fetches a few objects at once (ahead.py)
            self._count(name, blob)
        return blob

    def _count(self, name: str, blob: bytes | None) -> None:
        parts = name.split("/")
        if blob is None or len(parts) != 3 or parts[0] != "d":
            return
        device, last = parts[1], parts[2]
        if last == "head":
            try:
                self._heads[device] = Head.opened(self._keys.sync_aead("head"), self._keys.vault_id, device, blob).seq
            except MemoriesError:
                pass  # the sync itself refuses it, with the clear error
            return
        if last.isdigit() and device in self._heads:
            low = self._counted.get(device)
            if low is None or int(last) < low:  # the lowest fetched: the ones before it were read earlier
                self._counted[device] = int(last)  # (fetched a few at once, a later one may come first)
                self.total += max(0, self._heads[device] - int(last) + 1) if low is None else low - int(last)
            self.fetched += 1
            self.fetched_bytes += len(blob)
            self._tell(SyncProgress("pull", self.fetched, max(self.total, self.fetched), self.fetched_bytes))

    def put(self, name: str, data: bytes) -> None:
        self.target.put(name, data)
        self.sent += 1
        self.sent_bytes += len(data)
        self._tell(SyncProgress("push", self.sent, 0, self.sent_bytes))

    def _tell(self, progress: SyncProgress) -> None:
        if self._report is not None:
            self._report(progress)

    def list(self, prefix: str) -> list[str]:
        return wait_for(lambda: self.target.list(prefix), where=self.description, name=None, cancel=self._cancel,
                        check=self._check)

    def delete(self, name: str) -> None:
        self.target.delete(name)
