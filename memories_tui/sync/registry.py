"""Which target each vault of this home syncs with, and how its last sync went:
`<home>/sync.json` (0600), readable without a passphrase so `sync status` can list every vault.
It holds no secret and no vault content: a path or bucket URL, an endpoint, times and counts."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import ErrorCode, SyncError
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
        tmp = self.path.with_name(f".sync.json.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({vid: e.to_json() for vid, e in entries.items()}, fh, indent=1, sort_keys=True)
        os.replace(tmp, self.path)
