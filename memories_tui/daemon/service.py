"""What the resident engine does for its clients: one `Engine` holding the unlocked vaults,
the time each may stay unlocked, and the methods the socket serves.

One lock state per vault per home: this process's engine is the only one clients reach, so
a vault locked here (a `memories lock`, the idle timer, an `unlock --for` running out, the
TUI's ctrl+l when the TUI hosts it) is locked for every client at its next call. Times come
from `testhooks.now()`, the system clock unless a test moves it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import testhooks
from ..errors import ErrorCode, LockedError, MemoriesError, UsageError
from ..i18n import msg
from .handshake import this_build
from .protocol import HELLO, LOCK, STATUS, STOP, UNLOCK, VAULT_STATE
from .server import Call, Dispatcher, Method, StreamMethod
from .status import ClientBook, DaemonStatus, GrantInfo, HeldVault, resident_bytes
from .upgrade import CHANGED_API, SourceWatch

if TYPE_CHECKING:
    from ..engine import Engine

log = logging.getLogger("memories.daemon")
SWEEP_SECONDS = 15.0  # how often a quiet daemon looks for vaults whose time is up
# A TUI following the daemon says when its own idle timer will lock a vault at every poll
# (daemon_link.py, every 2 s); a report older than this is from a TUI that went away.
FOLLOWER_FRESH_SECONDS = 10.0
MAX_UNLOCK_SECONDS = 366 * 86400


@dataclass
class VaultTimes:
    unlocked_at: float
    last_used: float
    expires_at: float | None = None  # `unlock --for`


def how_to_unlock(name: str) -> str:
    return f"unlock it with `memories unlock {name}` (or in the Memories TUI), then call again"


class DaemonService(Dispatcher):
    def __init__(self, engine: Engine, *, kind: str = "daemon",
                 on_locked: Callable[[list[str], str], None] | None = None) -> None:
        self.engine = engine
        self.kind = kind  # "daemon" (memories daemon) or "tui" (the TUI serving the socket itself)
        self.started_at = time.time()
        self.idle_seconds = float(engine.config.daemon.idle_lock_minutes) * 60.0
        self.on_locked = on_locked  # told after vaults were locked here: (vault ids, reason)
        self.stop_requested = threading.Event()
        self._times: dict[str, VaultTimes] = {}
        self._lock = threading.RLock()
        self.clients = ClientBook()  # the host hands over its server's
        self.grants_status: Callable[[], list[GrantInfo]] = lambda: []  # set by the host
        # seconds until the hosting TUI's own idle timer locks a vault (None: it will not); set by the TUI
        self.host_lock_in: Callable[[str], float | None] = lambda _vault_id: None
        self._follower_lock_at: dict[str, tuple[float, float]] = {}  # vault id -> (lock at, reported at)
        self.api = ""  # the fingerprint of what it serves, set by the host once every method is added
        self.sources = SourceWatch()  # the package's files as loaded: an upgrade under it is noticed
        self._methods: dict[str, Method] = {
            HELLO: self._hello, STATUS: lambda _a, call: self.status(asking=call.peer.pid).to_wire(),
            UNLOCK: self._unlock,
            LOCK: self._lock_method, VAULT_STATE: self._vault_state, STOP: self._stop,
        }
        self._streams: dict[str, StreamMethod] = {}

    # -- dispatch -----------------------------------------------------------------------------
    def method(self, name: str) -> Method | None:
        return self._methods.get(name)

    def add_methods(self, methods: dict[str, Method]) -> None:
        self._methods.update(methods)

    def stream(self, name: str) -> StreamMethod | None:
        return self._streams.get(name)

    def add_streams(self, streams: dict[str, StreamMethod]) -> None:
        self._streams.update(streams)

    def before_call(self) -> None:
        self.expire_due()

    def method_names(self) -> list[str]:
        return [*self._methods, *self._streams]

    def build(self) -> dict[str, Any]:
        if not self.api:
            return {}
        build = this_build(self.api)
        return {"version": build.version, "api": CHANGED_API if self.sources.changed() else build.api, "kind": self.kind,
                "unlocked": bool(self.unlocked_ids()), "config": str(self.engine.config.path)}

    # -- lock state ---------------------------------------------------------------------------
    def unlocked_ids(self) -> list[str]:
        """The vaults unlocked here (by a request or in the hosting TUI), known without reading
        any vault file."""
        return self.engine.unlocked_ids()

    def resolve(self, ref: str) -> tuple[str, str, bool]:
        """(vault id, name, unlocked) for a vault id or unique name. An unlocked vault is found
        among the open ones without touching its file: reading a vault's header read-only in
        the process that holds it open for writing fails while another process writes to it."""
        unlocked = [(vid, self.engine.vault_name(vid)) for vid in self.unlocked_ids()]
        for vid, name in unlocked:
            if vid == ref:
                return vid, name, True
        named = [(vid, name) for vid, name in unlocked if name == ref]
        if len(named) == 1:
            return named[0][0], named[0][1], True
        info = self.engine.resolve_vault(ref)
        return info.vault_id, info.name, self.engine.is_unlocked(info.vault_id)

    def _times_of(self, vault_id: str) -> VaultTimes:
        """A vault unlocked outside the service (the TUI's own unlock screen) starts its idle time now."""
        with self._lock:
            times = self._times.get(vault_id)
            if times is None:
                now = testhooks.now()
                times = self._times[vault_id] = VaultTimes(unlocked_at=now, last_used=now)
            return times

    def require(self, ref: str) -> str:
        """The id of an unlocked vault (by id or unique name), marked as used now; else
        LockedError saying how to unlock it."""
        vault_id, name, unlocked = self.resolve(ref)
        if not unlocked:
            raise LockedError(msg("Vault {name} is locked; {how}.", name=name, how=how_to_unlock(name)))
        self._times_of(vault_id).last_used = testhooks.now()
        return vault_id

    def cut_by_lock(self, vault_ref: object, epoch: int) -> LockedError | None:
        """A call on `vault_ref` that started at lock epoch `epoch` was cancelled: when the
        vault was locked meanwhile (a lock cuts a model request that is waiting), the error
        that says so; else None (the cancel has its own reason)."""
        if not isinstance(vault_ref, str) or self.engine.lock_epoch == epoch:
            return None
        try:
            _vid, name, unlocked = self.resolve(vault_ref)
        except MemoriesError:
            return None
        if unlocked:
            return None
        return LockedError(msg("Vault {name} was locked during the call, which stopped there; nothing more was "
                               "sent. To go on, {how}.", name=name, how=how_to_unlock(name)))

    def mark_unlocked(self, vault_id: str) -> None:
        """The hosting TUI unlocked `vault_id` itself: its times start now."""
        now = testhooks.now()
        with self._lock:
            self._times[vault_id] = VaultTimes(unlocked_at=now, last_used=now)

    def touch(self, vault_id: str) -> None:
        """Activity that did not come through a request (the hosting TUI's own screens)."""
        if self.engine.is_unlocked(vault_id):
            self._times_of(vault_id).last_used = testhooks.now()

    def lock(self, vault_id: str | None, reason: str) -> list[str]:
        """Lock one vault or all (keys wiped, indexes dropped); returns the ids that were unlocked.
        A backup that is due (`[backup] every_hours`) is taken first, while the keys are there; if
        it fails, the failure is logged by its code and the vault locks anyway. Not before a
        restore replaces the vault: the restore keeps its own copy of what it replaces."""
        for vid in (self.unlocked_ids() if vault_id is None else [vault_id]) if reason != "restore" else []:
            self._backup_if_due(vid)
        with self._lock:
            ids = self.unlocked_ids() if vault_id is None else [vault_id]
            ids = [vid for vid in ids if self.engine.is_unlocked(vid)]
            self.engine.lock(vault_id)
            for vid in ids if vault_id is not None else list(self._times):
                self._times.pop(vid, None)
                self._follower_lock_at.pop(vid, None)
        for vid in ids:
            log.info("lock %s (%s)", vid, reason)
        if ids and self.on_locked is not None:
            self.on_locked(ids, reason)
        return ids

    def _backup_if_due(self, vault_id: str) -> None:
        if not self.engine.is_unlocked(vault_id):
            return
        try:
            report = self.engine.backup_if_due(vault_id)
        except MemoriesError as exc:
            log.warning("backup before lock of %s failed: %s", vault_id, exc.code)
            return
        if report is not None:
            log.info("backup of %s before lock (%d bytes)", vault_id, report.bytes)

    def expire_due(self) -> None:
        """Lock every vault whose `--for` ran out or that nobody used for the idle time."""
        now = testhooks.now()
        for vault_id in self.unlocked_ids():
            times = self._times_of(vault_id)
            if times.expires_at is not None and now >= times.expires_at:
                self.lock(vault_id, "expired")
            elif self.idle_seconds > 0 and now - times.last_used >= self.idle_seconds:
                self.lock(vault_id, "idle")

    def sweep_forever(self, stop: threading.Event) -> None:
        """A quiet daemon still wipes keys on time (the check also runs before every call)."""
        while not stop.wait(SWEEP_SECONDS):
            try:
                self.expire_due()
            except Exception as exc:  # noqa: BLE001 - the next sweep or call tries again
                log.error("sweep failed: %s", type(exc).__name__)

    # -- methods ------------------------------------------------------------------------------
    def _hello(self, args: dict[str, Any], call: Call) -> dict[str, Any]:
        return {"kind": self.kind, "pid": os.getpid(), "home": str(self.engine.home), **self.build()}

    def _vault_state(self, args: dict[str, Any], call: Call) -> dict[str, Any]:
        vault_id, name, unlocked = self.resolve(_text(args, "vault"))
        if unlocked and args.get("touch"):
            self._times_of(vault_id).last_used = testhooks.now()
        lock_in = args.get("lock_in")  # a following TUI: its own idle timer locks the vault this soon
        if unlocked and isinstance(lock_in, int | float) and not isinstance(lock_in, bool) and lock_in >= 0:
            now = testhooks.now()
            with self._lock:
                self._follower_lock_at[vault_id] = (now + float(lock_in), now)
        return {"vault_id": vault_id, "name": name, "unlocked": unlocked}

    def _unlock(self, args: dict[str, Any], call: Call) -> dict[str, Any]:
        vault_id, name, already = self.resolve(_text(args, "vault"))
        for_seconds = args.get("for_seconds")
        if for_seconds is not None and (not isinstance(for_seconds, int | float) or isinstance(for_seconds, bool)
                                        or not 0 < for_seconds <= MAX_UNLOCK_SECONDS):
            raise UsageError(msg("for_seconds must be a positive number of seconds, at most a year."))
        if not already:
            passphrase = args.get("passphrase")
            if not isinstance(passphrase, str) or not passphrase:
                raise UsageError(msg("Vault {name} is locked; a passphrase is needed to unlock it.", name=name))
            epoch = self.engine.lock_epoch
            testhooks.hold_point("unlock-deriving")
            self.engine.unlock(vault_id, passphrase, accept_rollback=args.get("accept_rollback") is True)
            del passphrase
            if self.engine.lock_epoch != epoch:  # a lock came while the key was derived: it wins
                self.engine.lock(vault_id)
                raise LockedError(msg("Vault {name} was locked while it was being unlocked; nothing stays "
                                      "open.", name=name))
        now = testhooks.now()
        with self._lock:
            times = self._times_of(vault_id)
            if not already:
                times.unlocked_at = now
            times.last_used = now
            times.expires_at = None if for_seconds is None else now + float(for_seconds)
        log.info("unlock %s (%s)", vault_id, "already unlocked" if already else "key derived")
        return {**self._held(vault_id, name, now).to_wire(), "already_unlocked": already}

    def _lock_method(self, args: dict[str, Any], call: Call) -> dict[str, Any]:
        ref = args.get("vault")
        if ref is None:
            ids = self.lock(None, "lock --all")
        else:
            vault_id = self.resolve(_text(args, "vault"))[0]
            ids = self.lock(vault_id, "lock")
        return {"locked": ids}

    def _stop(self, args: dict[str, Any], call: Call) -> dict[str, Any]:
        if self.kind != "daemon":
            raise UsageError(msg("The TUI serves this home's socket; quit the TUI to stop it (ctrl+q)."),
                             code=ErrorCode.DAEMON_IS_TUI)
        names = sorted(self.engine.vault_name(vid) for vid in self.unlocked_ids())
        if names and args.get("if_none_unlocked") is True:  # a client restarting it for its own build
            raise UsageError(msg("The daemon holds unlocked vaults; it was not stopped."), code=ErrorCode.DAEMON_HOLDS_VAULTS)
        self.stop_requested.set()
        return {"pid": os.getpid(), "stopping": True, "locked": names}

    # -- status -------------------------------------------------------------------------------
    def _held(self, vault_id: str, name: str, now: float) -> HeldVault:
        """The vault's row: it locks at the earliest of its timers, whoever runs them (`--for` and
        the idle time here, the idle lock of the TUI that hosts this service or follows it)."""
        times = self._times_of(vault_id)
        idle_at = times.last_used + self.idle_seconds if self.idle_seconds > 0 else None
        follower = self._follower_lock_at.get(vault_id)
        host_in = self.host_lock_in(vault_id)
        tui_at = None if host_in is None else now + host_in
        if follower is not None and now - follower[1] <= FOLLOWER_FRESH_SECONDS:
            tui_at = follower[0] if tui_at is None else min(tui_at, follower[0])
        ends = [(t, why) for t, why in ((times.expires_at, "--for"), (idle_at, "idle"), (tui_at, "tui"))
                if t is not None]
        first = min(ends, key=lambda end: end[0]) if ends else None
        return HeldVault(vault_id, name, times.unlocked_at, times.last_used, times.expires_at, idle_at,
                         None if first is None else max(0.0, first[0] - now), None if first is None else first[1])

    def status(self, *, asking: int | None = None) -> DaemonStatus:
        """What `memories daemon status` shows (`asking`: the pid of the process asking, left
        out of the clients)."""
        now = testhooks.now()
        vaults = sorted((self._held(vid, self.engine.vault_name(vid), now) for vid in self.unlocked_ids()),
                        key=lambda row: row.name.casefold())
        return DaemonStatus(kind=self.kind, pid=os.getpid(), home=str(self.engine.home), started_at=self.started_at,
                            uptime_seconds=max(0.0, time.time() - self.started_at),
                            idle_lock_minutes=self.idle_seconds / 60.0, vaults=vaults,
                            clients=self.clients.rows(leave_out=asking), grants=self.grants_status(),
                            requests_served=self.clients.served, rss_bytes=resident_bytes(),
                            model_loaded=self.engine.model_loaded)


def _text(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value:
        raise UsageError(msg("The request needs a text {key!r}.", key=key), code=ErrorCode.DAEMON_BAD_REQUEST)
    return value
