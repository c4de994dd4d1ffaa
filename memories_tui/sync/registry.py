"""Which target each vault of this home syncs with, and how its last sync went:
`<home>/sync.json` (0600), readable without a passphrase so `sync status` can list every vault.
It holds no secret and no vault content: a path or bucket URL, an endpoint, times and counts."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
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
    pending: int | None = None  # local writes since then (filled in by `sync_status`, never stored)
    pending_records: int | None = None  # records added, edited or deleted since, where the vault is unlocked
    # (filled in by `sync_status` or the daemon's `sync_pending`, never stored; elsewhere `pending` counts writes)


class Registry:
    def __init__(self, home: Path) -> None:
        self.path = home / "sync.json"

    def entries(self) -> dict[str, TargetEntry]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return {vid: TargetEntry.from_json({**item, "vault_id": vid}) for vid, item in data.items()}
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

    def remove(self, vault_id: str) -> TargetEntry | None:
        """Forget this vault's target (what it was, None when it had none)."""
        entries = self.entries()
        gone = entries.pop(vault_id, None)
        if gone is not None:
            self._write(entries)
        return gone

    def _write(self, entries: dict[str, TargetEntry]) -> None:
        tmp = self.path.with_name(f".sync.json.{os.getpid()}.{threading.get_ident()}.tmp")  # two threads may write
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({vid: e.to_json() for vid, e in entries.items()}, fh, indent=1, sort_keys=True)
        os.replace(tmp, self.path)


def with_pending(entry: TargetEntry, locate: Callable[[str], Any]) -> TargetEntry:
    """`entry` with how many local writes wait to be pushed: the vault's change counter now
    minus the one the last sync ended at. Read from the file's state row without the key (every
    commit moves it by one, a batch of records too), so no record is opened or parsed. `locate`
    finds the vault file (its `.path`); a vault gone from this home has no count."""
    from dataclasses import replace

    from ..vault.header import latest_state

    if entry.counter_at_sync is None:
        return replace(entry, pending=None)
    try:
        counter, _mac = latest_state(locate(entry.vault_id).path)
    except MemoriesError:
        return replace(entry, pending=None)
    return replace(entry, pending=max(0, counter - entry.counter_at_sync))
