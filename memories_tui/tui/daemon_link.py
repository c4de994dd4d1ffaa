"""The TUI and the home's resident engine: one lock state per vault per home.

While the TUI runs and no `memories daemon` does, the TUI serves the home's socket itself, on
its own engine: a vault unlocked in the TUI is available to the CLI and AI clients of the same
user, and ctrl+l (or the idle timer) locks it for them too. When a separate daemon runs, the
TUI keeps its in-process engine and mirrors its unlock and lock on the daemon's lock state
(the passphrase typed in the TUI is sent once to the daemon), and a lock made elsewhere (a
`memories lock`, the daemon's idle timer, `--for` running out) locks the TUI at its next poll.

Everything here that can wait on the socket runs in a thread; the UI thread only reads flags.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from ..errors import MemoriesError
from ..i18n import N_, _

if TYPE_CHECKING:  # the socket code loads after the first frame, in `start`
    from ..daemon import DaemonClient
    from ..daemon.lifecycle import SocketHost
    from ..engine import Engine

log = logging.getLogger("memories.tui")
POLL_SECONDS = 2.0  # how often a TUI beside a separate daemon asks whether its vault is still unlocked


@dataclass(eq=False)
class LockedElsewhere(Message):
    """Vaults were locked outside the TUI (the CLI, the daemon's timers): lock here too."""

    vault_ids: list[str]
    reason: str


class DaemonLink:
    """`on_locked_elsewhere(vault_ids, reason)` is called from a worker thread; the app hands it
    to its UI thread."""

    def __init__(self, engine: Engine, on_locked_elsewhere: Callable[[list[str], str], object],
                 idle_lock_in: Callable[[], float | None] = lambda: None) -> None:
        self.engine = engine
        self.on_locked_elsewhere = on_locked_elsewhere
        self.idle_lock_in = idle_lock_in  # seconds until the TUI's own idle timer locks its vault (None: never)
        self.host: SocketHost | None = None
        self.remote: DaemonClient | None = None
        self.problem = ""  # why the TUI neither serves nor follows a daemon, for the status screen
        self._lock = threading.Lock()
        self._active_vault: str | None = None
        self._last_activity = time.monotonic()
        self._last_poll = 0.0
        self._polling = False
        self._closed = False

    # -- start and stop ------------------------------------------------------------------------
    def start(self) -> None:
        """Serve the socket, or follow the daemon that already does (call from a thread)."""
        from ..daemon import connect, daemon_disabled, unix_sockets_supported

        if daemon_disabled() or not unix_sockets_supported():
            self.problem = N_("off (--no-daemon or this platform)")
            return
        from ..daemon.lifecycle import DaemonRunningError, SocketHost
        from ..daemon.service import DaemonService

        with self._lock:
            if self._closed or self.host is not None:
                return
            try:
                host = SocketHost(self.engine, "tui", DaemonService(self.engine, kind="tui",
                                                                    on_locked=self._service_locked))
                host.start()
            except DaemonRunningError:
                try:
                    self.remote = connect(self.engine.home, kind="tui")
                except MemoriesError:  # it runs but lets nobody in
                    self.remote = None
                self.problem = "" if self.remote is not None else N_("another daemon holds the home but does not answer")
                return
            except MemoriesError as exc:
                self.problem = exc.localized()
                return
            except OSError as exc:
                self.problem = type(exc).__name__
                return
            host.service.host_lock_in = self._host_lock_in  # `daemon status` tells the TUI's idle lock too
            self.host, self.remote, self.problem = host, None, ""

    def close(self) -> None:
        """Stop serving (the app locks its engine right after); a followed daemon keeps running."""
        with self._lock:
            self._closed = True
            host, self.host = self.host, None
        if host is not None:
            host.close("the TUI quit")

    def describe(self) -> str:
        """One line for the status screen: who serves the CLI and AI clients of this home."""
        from ..daemon import HELLO

        if self.host is not None:
            return _("this TUI serves the CLI and AI clients of this home")
        if self.remote is not None:
            pid = self.remote.call_quietly(HELLO).get("pid", "?")
            return _("the Memories daemon (pid {pid}) serves them; unlock and lock here act on it too").format(pid=pid)
        return _("not shared: {problem}").format(problem=_(self.problem)) if self.problem else _("not shared yet")

    def sharing_rows(self, vault_id: str | None = None) -> list[tuple[str, str]]:
        """(label, text) rows for the status screen: who serves the CLI and AI clients, the
        processes using it now and the AI clients' grants (of `vault_id`, when given). Blocks
        on the socket when following a daemon: call it in a worker."""
        from ..daemon import STATUS
        from ..daemon.status import DaemonStatus

        rows = [(_("shared"), self.describe())]
        host, remote = self.host, self.remote
        try:
            if host is not None:
                status = host.service.status()
            elif remote is not None:
                status = DaemonStatus.from_json(remote.call(STATUS))
            else:
                return rows
        except (MemoriesError, ValueError, TypeError):
            return [*rows, (_("clients"), _("the daemon did not answer"))]
        now = time.time()
        grants = [g for g in status.grants if vault_id is None or vault_id in g.vaults]
        rows.append((_("clients"), "\n".join(c.describe(now) for c in status.clients) or _("none")))
        rows.append((_("grants"), "\n".join(g.describe() for g in grants) or _("none")))
        return rows

    def _host_lock_in(self, vault_id: str) -> float | None:
        """Seconds until this TUI's idle timer locks `vault_id` (None: it will not)."""
        return self.idle_lock_in() if vault_id == self._active_vault else None

    # -- what the app reports ------------------------------------------------------------------
    def activity(self) -> None:
        """A key or mouse event: the open vault is in use (the daemon's idle timer counts it)."""
        self._last_activity = time.monotonic()
        host, vault_id = self.host, self._active_vault
        if host is not None and vault_id is not None:
            host.service.touch(vault_id)

    def unlocked(self, vault_id: str, passphrase: str) -> None:
        """The TUI unlocked `vault_id` (called in the unlock worker): a followed daemon unlocks it
        too. The vault is followed (polled) only once the daemon holds it: a poll answered while
        the daemon still derives the key would read as a lock and end the following for good."""
        from ..daemon import UNLOCK

        if self.remote is None and self.host is None and not self._closed:
            self.start()  # a start that failed (the home's folder in the way, a daemon gone) is tried again
        remote = self.remote
        if remote is None:
            self._active_vault = vault_id
            if self.host is not None:
                self.host.service.mark_unlocked(vault_id)
            return
        try:
            remote.call(UNLOCK, {"vault": vault_id, "passphrase": passphrase})
        except MemoriesError as exc:  # the TUI stays unlocked; the status screen says the daemon did not follow
            log.warning("the daemon did not unlock %s: %s", vault_id, exc.code)
            return
        self._active_vault = vault_id

    def locked(self, vault_id: str | None) -> None:
        """The TUI locked (ctrl+l, idle, switching vaults): lock it in a followed daemon too."""
        from ..daemon import LOCK

        self._active_vault = None
        remote = self.remote
        if remote is None or vault_id is None:
            return
        threading.Thread(target=remote.call_quietly, args=(LOCK, {"vault": vault_id}),
                         name="memories-daemon-lock", daemon=True).start()

    def poll(self) -> None:
        """From the app's one-second timer: beside a separate daemon, ask (in a thread) whether
        the open vault is still unlocked there; tell the daemon about recent activity."""
        remote, vault_id = self.remote, self._active_vault
        now = time.monotonic()
        if remote is None or vault_id is None or self._polling or now - self._last_poll < POLL_SECONDS:
            return
        self._last_poll, self._polling = now, True
        touch = now - self._last_activity < POLL_SECONDS * 2
        threading.Thread(target=self._check_remote, args=(remote, vault_id, touch),
                         name="memories-daemon-poll", daemon=True).start()

    def _check_remote(self, remote: DaemonClient, vault_id: str, touch: bool) -> None:
        from ..daemon import VAULT_STATE

        try:
            state = remote.call(VAULT_STATE, {"vault": vault_id, "touch": touch, "lock_in": self.idle_lock_in()})
            still = bool(state.get("unlocked"))
            reason = "locked in the Memories daemon"
        except MemoriesError:
            still, reason = False, "the Memories daemon stopped"
            self.remote = None
            threading.Thread(target=self.start, name="memories-daemon-host", daemon=True).start()
        finally:
            self._polling = False
        if not still and self._active_vault == vault_id:
            self._active_vault = None
            self.on_locked_elsewhere([vault_id], reason)

    def _service_locked(self, vault_ids: list[str], reason: str) -> None:
        """The socket this TUI serves locked vaults (`memories lock`, idle, `--for`)."""
        if reason == "the TUI quit":
            return
        if self._active_vault in vault_ids:
            self._active_vault = None
            self.on_locked_elsewhere(vault_ids, reason)
