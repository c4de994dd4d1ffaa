"""What one running MCP server may read, and for how long.

A server is granted the vaults named at start, optionally until an expiry. Every call checks
the grant before it starts and again before it answers, so work that finishes after the grant
ended (expired, or revoked from another process through frontend/grant_records.py) returns
nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..errors import ErrorCode, MemoriesError
from ..frontend.grant_records import remove_server_record, revoked_at, write_server_record
from ..i18n import msg

T = TypeVar("T")


class GrantError(MemoriesError):
    """A call for a vault this server may not (or may no longer) read."""

    code = ErrorCode.GRANT_DENIED


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
        raise GrantError(msg("Vault {ref!r} is not granted to this server; granted: {granted}.",
                             ref=ref, granted=granted))

    def check(self, ref: str) -> str:
        """The vault id if its grant still holds, else GrantError saying why it ended."""
        vault_id = self.resolve(ref)
        if self.expires_at is not None and self._clock() >= self.expires_at:
            raise GrantError(msg("The grant for vault {vault_id} expired at {when}; restart the server to "
                                 "grant it again.", vault_id=vault_id, when=_stamp(self.expires_at)), code=ErrorCode.GRANT_EXPIRED)
        revoked = revoked_at(self.home, vault_id)
        if revoked is not None and revoked >= self.started_at:
            raise GrantError(msg("The grant for vault {vault_id} was revoked at {when}; restart the server "
                                 "to grant it again.", vault_id=vault_id, when=_stamp(revoked)), code=ErrorCode.GRANT_REVOKED)
        return vault_id

    def run(self, ref: str, work: Callable[[str], T]) -> T:
        """Run `work(vault_id)` under the grant; if the grant ends meanwhile, its result is dropped."""
        vault_id = self.check(ref)
        result = work(vault_id)
        self.check(vault_id)
        return result

    # -- the record a status view reads --------------------------------------------------

    def register(self, pid: int | None = None) -> Path:
        return write_server_record(self.home, pid or os.getpid(), list(self.vaults), self.started_at,
                                   self.expires_at)

    def unregister(self, pid: int | None = None) -> None:
        remove_server_record(self.home, pid or os.getpid())


def _stamp(when: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(when))
