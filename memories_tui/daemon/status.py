"""What `memories daemon status` (and the TUI's status screen) says about a resident engine:
the vaults it holds with the time each has left, the processes that use it and the AI
clients' grants, its memory and whether a model is loaded.

Clients connect once per request, so "connected" means a live process that has talked to the
daemon: an MCP server, a TUI beside the daemon, a CLI command while it runs. `ClientBook`
keeps them by the pid the kernel reports and forgets a process once it has exited. It holds
method names and times only, never arguments.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

from ..engine import Jsonable, json_meta
from ..i18n import N_, _
from .peer import Peer

KIND_LABELS = {"cli": "CLI", "mcp": N_("AI client (MCP)"), "tui": "TUI"}
FORGET_SECONDS = 24 * 3600.0  # a process the kernel cannot name (no pid) is shown this long


@dataclass(frozen=True)
class HeldVault(Jsonable):
    """A vault the daemon holds unlocked; it locks at the earliest of `expires_at`, `idle_lock_at`
    and the idle lock of a TUI that serves it or follows it (`locks_by` names which one comes first)."""

    vault_id: str
    name: str
    unlocked_at: float
    last_used: float
    expires_at: float | None  # `unlock --for`
    idle_lock_at: float | None  # None: no idle lock
    seconds_left: float | None = field(metadata=json_meta(round=1))  # None: until `memories lock`
    locks_by: str | None = None  # --for | idle | tui (the TUI's own idle lock); None: until `memories lock`


@dataclass(frozen=True)
class ClientInfo(Jsonable):
    """A live process that uses the daemon."""

    pid: int | None
    kind: str  # cli | mcp | tui | unknown
    calls: int
    last_method: str
    last_seen: float
    running: str | None  # the method it waits on now

    def describe(self, now: float) -> str:
        """One line for people: `pid 4242 AI client (MCP), 3 calls, last mcp_call 5s ago`."""
        what = KIND_LABELS.get(self.kind, self.kind)
        doing = f"running {self.running}" if self.running else f"last {self.last_method} {span(now - self.last_seen)} ago"
        return f"pid {self.pid or '?'} {what}, {self.calls} call{'s' if self.calls != 1 else ''}, {doing}"


@dataclass(frozen=True)
class GrantInfo(Jsonable):
    """An MCP server's grant, held and checked in the daemon."""

    pid: int | None
    vaults: list[str]  # vault ids
    names: list[str]
    started_at: float
    expires_at: float | None
    expired: bool
    revoked: list[str]  # ids of the granted vaults revoked since (`memories mcp revoke`, the TUI's x)

    @property
    def state(self) -> str:
        if self.expired:
            return N_("expired")
        if self.revoked:
            return N_("revoked") if len(self.revoked) == len(self.vaults) else f"{len(self.revoked)} revoked"
        return N_("active")

    def describe(self) -> str:
        """One line for people: `pid 4242: notes, work until 2026-12-03 18:00 (active)`."""
        until = "" if self.expires_at is None else f" until {clock(self.expires_at)}"
        return f"pid {self.pid or '?'}: {', '.join(self.names)}{until} ({self.state})"


@dataclass(frozen=True)
class DaemonStatus(Jsonable):
    kind: str  # daemon | tui (the TUI serving the socket itself)
    pid: int
    home: str
    started_at: float
    uptime_seconds: float = field(metadata=json_meta(round=1))
    idle_lock_minutes: float
    vaults: list[HeldVault]
    clients: list[ClientInfo]
    grants: list[GrantInfo]
    requests_served: int
    rss_bytes: int | None  # None where the platform does not say
    model_loaded: bool


@dataclass
class _Seen:
    peer: Peer
    kind: str
    calls: int = 0
    last_method: str = ""
    last_seen: float = 0.0
    running: dict[int, str] = field(default_factory=dict)  # request token -> method


class ClientBook:
    """Who has talked to the daemon, by pid; safe from the server's request threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[tuple[int | None, str], _Seen] = {}  # (pid, kind): one process may be both
        self._tokens = 0
        self.served = 0

    def begin(self, peer: Peer, kind: str, method: str) -> int:
        """A request starts; returns the token `end` takes."""
        with self._lock:
            self._tokens += 1
            self.served += 1
            kind = kind if kind in KIND_LABELS else "unknown"
            seen = self._seen.get((peer.pid, kind))
            if seen is None or seen.peer.uid != peer.uid:
                seen = self._seen[peer.pid, kind] = _Seen(peer, kind)
            seen.calls += 1
            seen.last_method, seen.last_seen = method, time.time()
            seen.running[self._tokens] = method
            return self._tokens

    def end(self, peer: Peer, kind: str, token: int) -> None:
        with self._lock:
            seen = self._seen.get((peer.pid, kind if kind in KIND_LABELS else "unknown"))
            if seen is not None:
                seen.running.pop(token, None)
                seen.last_seen = time.time()

    def rows(self, *, leave_out: int | None = None) -> list[ClientInfo]:
        """The live clients, most recent first (`leave_out`: the pid asking for the status)."""
        now = time.time()
        with self._lock:
            for key in [key for key, seen in self._seen.items() if not _alive(key[0], seen, now)]:
                del self._seen[key]
            seen_now = [s for (pid, _), s in self._seen.items() if pid is None or pid != leave_out]
            rows = [ClientInfo(s.peer.pid, s.kind, s.calls, s.last_method, s.last_seen,
                               next(iter(s.running.values()), None)) for s in seen_now]
        return sorted(rows, key=lambda row: -row.last_seen)


def _alive(pid: int | None, seen: _Seen, now: float) -> bool:
    if seen.running:
        return True
    if pid is None:
        return now - seen.last_seen < FORGET_SECONDS
    return process_alive(pid)


def process_alive(pid: int) -> bool:
    """Does process `pid` still run as this user?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, but not ours to signal: not the client we saw any more
        return False
    return True


def span(seconds: float) -> str:
    """`42s`, `5m`, `2h 05m`."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, _ = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m"


def clock(stamp: float | None) -> str:
    """A time of day for people (local time), or `never`."""
    if stamp is None:
        return _("never")
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def resident_bytes() -> int | None:
    """This process's resident memory (Linux /proc), else the peak (getrusage), else None."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak if os.uname().sysname == "Darwin" else peak * 1024)
    except (ImportError, OSError):
        return None
