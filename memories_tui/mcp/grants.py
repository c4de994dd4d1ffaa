"""What a running MCP server may read, and for how long (R-MCP-1).

A server is granted the vaults named at start, optionally until an expiry. `memories mcp
revoke VAULT_ID`, run from any other process, writes `<home>/mcp/revoked/<VAULT_ID>` with
the time of revocation; every call re-reads it, so a server started *before* that time loses
the grant at its next call (a server started later is a fresh grant). A call checks its
grant before it starts and again before it answers, so work that finishes after the grant
ended returns nothing. Running servers leave a small record under `<home>/mcp/servers/`
(pid, vault ids, start and expiry; no content) so a status view can list and revoke them.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..errors import MemoriesError, UsageError

T = TypeVar("T")

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"(\d+)\s*([smhdw])")
MAX_DURATION = 366 * 86400


class GrantError(MemoriesError):
    """A call for a vault this server may not (or may no longer) read."""

    code = "grant_denied"


def parse_duration(text: str) -> float:
    """'30m', '8h', '7d', '1h30m' → seconds. Bare numbers and zero are refused (ambiguous, useless)."""
    compact = text.strip().lower().replace(" ", "")
    if not compact or _DURATION.sub("", compact):
        raise UsageError(f"Cannot read the duration {text!r}: use a number and a unit, e.g. 30m, 8h, 7d or 1h30m "
                         "(units: s, m, h, d, w).")
    seconds = sum(int(n) * _UNITS[unit] for n, unit in _DURATION.findall(compact))
    if seconds <= 0:
        raise UsageError(f"The duration {text!r} is zero; give a positive one, e.g. 8h.")
    if seconds > MAX_DURATION:
        raise UsageError(f"The duration {text!r} is over a year; grant less, or leave --expires out.")
    return float(seconds)


def mcp_dir(home: Path) -> Path:
    return home / "mcp"


def _revocation_path(home: Path, vault_id: str) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", vault_id):
        raise UsageError(f"{vault_id!r} is not a vault id.")
    return mcp_dir(home) / "revoked" / vault_id


def revoke(home: Path, vault_id: str, *, now: float | None = None) -> float:
    """End every running server's grant for `vault_id`; returns the revocation time."""
    when = time.time() if now is None else now
    _atomic_write(_revocation_path(home, vault_id), f"{when!r}\n")
    return when


def revoked_at(home: Path, vault_id: str) -> float | None:
    try:
        return float(_revocation_path(home, vault_id).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class GrantedVault:
    vault_id: str
    name: str


class Grants:
    """The vaults one server was started with; `check` is called at every tool call."""

    def __init__(self, home: Path, vaults: list[GrantedVault], *, expires_in: float | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.home = home
        self.vaults = {v.vault_id: v for v in vaults}
        self._clock = clock
        self.started_at = clock()
        self.expires_at = None if expires_in is None else self.started_at + expires_in

    def resolve(self, ref: str) -> str:
        """A granted vault's id from its id or name; anything else is not granted."""
        if ref in self.vaults:
            return ref
        matches = [v.vault_id for v in self.vaults.values() if v.name == ref]
        if len(matches) == 1:
            return matches[0]
        granted = ", ".join(f"{v.name} ({v.vault_id})" for v in self.vaults.values())
        raise GrantError(f"Vault {ref!r} is not granted to this server; granted: {granted}.")

    def check(self, ref: str) -> str:
        """The vault id if its grant still holds, else GrantError saying why it ended."""
        vault_id = self.resolve(ref)
        if self.expires_at is not None and self._clock() >= self.expires_at:
            raise GrantError(f"The grant for vault {vault_id} expired at {_stamp(self.expires_at)}; restart the "
                             "server to grant it again.", code="grant_expired")
        revoked = revoked_at(self.home, vault_id)
        if revoked is not None and revoked >= self.started_at:
            raise GrantError(f"The grant for vault {vault_id} was revoked at {_stamp(revoked)}; restart the "
                             "server to grant it again.", code="grant_revoked")
        return vault_id

    def run(self, ref: str, work: Callable[[str], T]) -> T:
        """Run `work(vault_id)` under the grant; if the grant ends meanwhile, its result is dropped."""
        vault_id = self.check(ref)
        result = work(vault_id)
        self.check(vault_id)
        return result

    # -- the record a status view reads --------------------------------------------------

    def register(self, pid: int | None = None) -> Path:
        record = {"pid": pid or os.getpid(), "vaults": sorted(self.vaults), "started_at": self.started_at,
                  "expires_at": self.expires_at}
        path = mcp_dir(self.home) / "servers" / f"{record['pid']}.json"
        _atomic_write(path, json.dumps(record) + "\n")
        return path

    def unregister(self, pid: int | None = None) -> None:
        (mcp_dir(self.home) / "servers" / f"{pid or os.getpid()}.json").unlink(missing_ok=True)


@dataclass(frozen=True)
class ServerRecord:
    pid: int
    vaults: list[str]
    started_at: float
    expires_at: float | None


def running_servers(home: Path, vault_id: str | None = None) -> list[ServerRecord]:
    """Live servers (their process still exists) holding an unexpired, unrevoked grant."""
    out = []
    now = time.time()
    for path in sorted((mcp_dir(home) / "servers").glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            record = ServerRecord(int(data["pid"]), list(data["vaults"]), float(data["started_at"]),
                                  None if data.get("expires_at") is None else float(data["expires_at"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not _alive(record.pid):
            path.unlink(missing_ok=True)  # a server that was killed could not remove its record
            continue
        live = [v for v in record.vaults
                if (record.expires_at is None or now < record.expires_at)
                and ((revoked := revoked_at(home, v)) is None or revoked < record.started_at)]
        if live and (vault_id is None or vault_id in live):
            out.append(ServerRecord(record.pid, live, record.started_at, record.expires_at))
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _stamp(when: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(when))


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    for folder in (path.parent.parent, path.parent):  # <home>/mcp and its subfolder: owner only
        try:
            os.chmod(folder, 0o700)
        except OSError:
            pass
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
