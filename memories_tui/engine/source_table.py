"""The stat table of a source: each file's size, time and inode beside its card's revision.

Kept apart from the sync itself because it is a cache with its own rules (an encrypted blob,
derived data, never a card revision), read by both the sync and the status screen's count of
pending files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from .fits import FULL_BYTES, FULL_CHUNKS

if TYPE_CHECKING:
    from ..vault.records import Record
    from ..vault.store import UnlockedVault

STAT_BLOB = "source-stat-"  # + the source's id: each file's stat at the last sync


class SyncedFile(Protocol):
    """What the table needs of a sync's item (source_sync.SourceSyncItem), named here so that
    the two modules do not import each other."""

    @property
    def file(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def id(self) -> str | None: ...
    @property
    def revision(self) -> int | None: ...
    @property
    def reason(self) -> str: ...


class StatTable:
    """Each file's stat beside its card's revision, kept after a read that found the bytes
    unchanged (in an encrypted cache blob: derived data, so no card revision), so that a file
    touched but not changed is read once, not at every sync. Loaded only when a card's own
    record of size and time does not match."""

    def __init__(self, vault: UnlockedVault, source_id: str, full: bool) -> None:
        self.vault, self.name = vault, STAT_BLOB + source_id
        self._rows: dict[str, list[int]] | None = {} if full else None

    def rows(self) -> dict[str, list[int]]:
        if self._rows is None:
            raw = self.vault.get_blob(self.name)
            try:
                found = json.loads(raw) if raw else {}
            except ValueError:
                found = {}
            self._rows = found if isinstance(found, dict) else {}
        return self._rows

    def same(self, rel: str, card: Record, st: os.stat_result) -> bool:
        """Whether the file is as the last sync left it."""
        if card.metadata.get("source_size") == st.st_size and card.metadata.get("source_mtime_ns") == st.st_mtime_ns:
            return True
        return self.rows().get(rel) == [st.st_size, st.st_mtime_ns, st.st_ino, card.revision]

    def skipped_as_is(self, rel: str, st: os.stat_result) -> bool:
        """Whether the file is as it was when a sync last refused it (kept as revision 0) or left
        it out for want of room (revision -1): a sync now would not take it in either."""
        row = self.rows().get(rel)
        return row is not None and row[:3] == [st.st_size, st.st_mtime_ns, st.st_ino] and row[3] in (0, -1)

    def left_out(self, rel: str, st: os.stat_result) -> bool:
        """Whether the file is as it was when a sync left it out because the vault was full."""
        return self.rows().get(rel) == [st.st_size, st.st_mtime_ns, st.st_ino, -1]

    def save(self, seen: dict[str, os.stat_result], items: Sequence[SyncedFile], partial: bool,
             refused: dict[str, os.stat_result]) -> None:
        old = self.rows()
        now = dict(old) if partial else {}
        now.update({rel: [st.st_size, st.st_mtime_ns, st.st_ino, 0] for rel, st in refused.items()})
        for item in items:
            st = seen.get(item.file)
            if st is not None and item.revision is not None and item.status in ("unchanged", "created", "updated", "moved"):
                now[item.file] = [st.st_size, st.st_mtime_ns, st.st_ino, item.revision]
            elif st is not None and item.id is None and item.reason in (FULL_CHUNKS, FULL_BYTES):
                now[item.file] = [st.st_size, st.st_mtime_ns, st.st_ino, -1]  # a new file the vault had no room for
        if now != old:
            self.vault.put_cache_blob(self.name, json.dumps(now).encode())
