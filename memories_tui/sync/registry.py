"""Which target each vault of this home syncs with, and how its last sync went:
`<home>/sync.json` (0600), readable without a passphrase so `sync status` can list every vault.
It holds no secret and no vault content: a path or bucket URL, an endpoint, times and counts.
`<home>/sync-removed.json` keeps, in the same form, the entry `sync remove` took out, so that
adding the same target again shows the last sync as before."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import ErrorCode, MemoriesError, SyncError
from ..i18n import msg
from ..serial import Jsonable


@dataclass(frozen=True)
class TargetEntry(Jsonable):
    vault_id: str
    url: str
    endpoint_url: str | None = None
    last_sync: str | None = None
    last_error: str | None = None  # the error code of the last failed sync, None after a good one
    conflicts: int = 0
    passphrase_adopted: str | None = None  # when a sync took the passphrase another device set
    counter_at_sync: int | None = None  # the vault's change counter when the last sync ended
    left: int = 0  # records the last sync left for the next one (stopped part-way by ctrl+c or a lock)
    pending: int | None = None  # local writes since then (filled in by `sync_status`, never stored)
    pending_records: int | None = None  # records added, edited or deleted since, where the vault is unlocked
    # (filled in by `sync_status` or the daemon's `sync_pending`, never stored; elsewhere `pending` counts writes)


class Registry:
    def __init__(self, home: Path) -> None:
        self.path = home / "sync.json"
        self.removed_path = home / "sync-removed.json"

    def entries(self) -> dict[str, TargetEntry]:
        try:
            return _read(self.path)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            raise SyncError(msg("{path} is unreadable or malformed; fix or remove it and add the targets again.",
                                path=self.path), code=ErrorCode.SYNC_REGISTRY_INVALID) from None

    def get(self, vault_id: str) -> TargetEntry | None:
        return self.entries().get(vault_id)

    def put(self, entry: TargetEntry) -> None:
        entries = self.entries()
        entries[entry.vault_id] = entry
        self._write(entries)

    def add(self, entry: TargetEntry) -> TargetEntry:
        """Put a target `sync add` gave (what is stored). The same target (URL and endpoint) added
        again, in place of itself or after `remove`, keeps its last sync, counts and last error: the
        vault's sync state goes on from there. Another target starts blank."""
        entries, removed = self.entries(), self._removed()
        before = entries.get(entry.vault_id) or removed.get(entry.vault_id)
        if before is not None and (before.url, before.endpoint_url) == (entry.url, entry.endpoint_url):
            entry = replace(before, passphrase_adopted=entry.passphrase_adopted or before.passphrase_adopted)
        entries[entry.vault_id] = entry
        self._write(entries)
        if removed.pop(entry.vault_id, None) is not None:
            self._write(removed, self.removed_path)
        return entry

    def remove(self, vault_id: str) -> TargetEntry | None:
        """Forget this vault's target (what it was, None when it had none); `add` of the same
        target finds it again."""
        entries = self.entries()
        gone = entries.pop(vault_id, None)
        if gone is not None:
            self._write({**self._removed(), vault_id: gone}, self.removed_path)
            self._write(entries)
        return gone

    def _removed(self) -> dict[str, TargetEntry]:
        try:
            return _read(self.removed_path)
        except (OSError, ValueError, TypeError, KeyError, AttributeError):  # only a memory of the last status
            return {}

    def _write(self, entries: dict[str, TargetEntry], path: Path | None = None) -> None:
        path = path or self.path
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")  # two threads may write
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({vid: e.to_json() for vid, e in entries.items()}, fh, indent=1, sort_keys=True)
        os.replace(tmp, path)


def _read(path: Path) -> dict[str, TargetEntry]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {vid: TargetEntry.from_json({**item, "vault_id": vid}) for vid, item in data.items()}


def with_pending(entry: TargetEntry, locate: Callable[[str], Any]) -> TargetEntry:
    """`entry` with how many local writes wait to be pushed: the vault's change counter now
    minus the one the last sync ended at, plus the records a sync stopped part-way left. Read
    from the file's state row without the key (every commit moves it by one, a batch of records
    too), so no record is opened or parsed. `locate` finds the vault file (its `.path`); a vault
    gone from this home has no count."""
    from dataclasses import replace

    from ..vault.header import latest_state

    if entry.counter_at_sync is None:
        return replace(entry, pending=None)
    try:
        counter, _mac = latest_state(locate(entry.vault_id).path)
    except MemoriesError:
        return replace(entry, pending=None)
    return replace(entry, pending=max(0, counter - entry.counter_at_sync) + entry.left)
