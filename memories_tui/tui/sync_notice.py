"""A notice when the background sync of the open vault starts failing, and when it works again;
the records list reloaded when a sync ended.

The resident engine syncs unlocked vaults in the background (engine/sync_watch.py) and keeps
each target's last error in the home's sync registry. The status screen shows it, but a user
who never opens that screen would not learn that syncing stopped (expired S3 keys, a full
disk, a NAS that is not mounted). The app reads the registry every few seconds, in a thread.
The same look sees a sync end (its time or the vault's change counter at its end moved): the
notes another device wrote then show in the records list without leaving it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import MemoriesError
from ..i18n import _
from .text import tilde

if TYPE_CHECKING:
    from textual.app import App

    from ..engine import EngineHandle, TargetEntry

EVERY_SECONDS = 5.0


class SyncNotices:
    def __init__(self, synced: Callable[[str], None] | None = None) -> None:
        self._vault: str | None = None
        self._error: str | None = None
        self._ended: tuple[str | None, int | None] | None = None  # the last sync seen: (its time, counter)
        self._synced = synced  # called with the vault's id when a sync of it ended since the last look
        self._looking = threading.Lock()

    def check(self, app: App[object], engine: EngineHandle, vault_id: str | None) -> None:
        """Look at the open vault's target in a thread, unless a look is running."""
        if vault_id is None or not self._looking.acquire(blocking=False):
            return

        def look() -> None:
            try:
                entries = engine.sync_status(vault_id, count_records=False)
            except MemoriesError:  # a registry being rewritten, a vault gone: the next look tells
                entries = []
            finally:
                self._looking.release()
            try:
                app.call_from_thread(self.seen, app, vault_id, entries[0] if entries else None)
            except RuntimeError:
                pass  # the app ended meanwhile

        threading.Thread(target=look, name="memories-sync-notice", daemon=True).start()

    def seen(self, app: App[object], vault_id: str, entry: TargetEntry | None) -> None:
        """Notify a failure that is new (the first look at a vault counts an old one as new) and
        the first good sync after one. The records list reloads when a sync ended since the last
        look, and at the first look at a vault: the sync its unlock starts may have ended before it
        (a fresh start showed the list from before that sync until it was left)."""
        before = self._error if vault_id == self._vault else None
        ended = (entry.last_sync, entry.counter_at_sync) if entry is not None else None
        if ended is not None and self._synced is not None and (vault_id != self._vault or ended != self._ended):
            self._synced(vault_id)
        self._ended = ended
        self._vault, self._error = vault_id, entry.last_error if entry is not None else None
        if entry is None or self._error == before:
            return
        if self._error:
            app.notify(_("Syncing with {target} failed ({code}); nothing was lost, and it is tried again in the "
                         "background. s on the status screen (t) syncs now and shows what went wrong.").format(target=tilde(entry.url),
                                                                              code=self._error),
                       title=_("Sync"), severity="warning", timeout=10, markup=False)
        else:
            app.notify(_("Syncing with {target} works again.").format(target=tilde(entry.url)), title=_("Sync"),
                       markup=False)
