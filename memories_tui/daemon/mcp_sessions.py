"""MCP servers served by the resident engine: their grants live and are checked here.

A `memories mcp` process that finds the daemon opens a session naming its vaults and expiry;
each tool call then runs here, on the daemon's one engine (one index and one model per vault
for every client), under that session's grant, with the vault's lock state checked before
and after: a grant that ended (expiry, `memories mcp revoke`) or a lock anywhere during the
call drops the late result. API keys and endpoints are the daemon's own (its environment and
config); a call carries neither.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import testhooks
from ..access.grants import GrantedVault, Grants
from ..access.tools import TOOL_METHODS
from ..engine import on_behalf_of
from ..errors import CancelledError, ErrorCode, LockedError, MemoriesError, UsageError
from ..frontend.grant_records import revoked_at
from ..i18n import msg
from .protocol import MCP_CALL, MCP_CLOSE, MCP_OPEN
from .server import Call, Method
from .service import DaemonService, how_to_unlock
from .status import GrantInfo, process_alive

if TYPE_CHECKING:
    from ..access.tools import MemoryTools
    from ..engine import Jsonable

MAX_SESSIONS = 256


class SessionUnknownError(MemoriesError):
    """The daemon does not know this session (it restarted): the MCP server opens it again."""

    code = ErrorCode.DAEMON_SESSION_UNKNOWN


@dataclass
class Session:
    token: str
    pid: int | None
    grants: Grants
    tools: MemoryTools


class McpSessions:
    def __init__(self, service: DaemonService) -> None:
        self.service = service
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def methods(self) -> dict[str, Method]:
        return {MCP_OPEN: self._open, MCP_CALL: self._call, MCP_CLOSE: self._close}

    def _open(self, args: dict[str, Any], call: Call) -> dict[str, Any]:
        session = self.open(args, call.peer.pid)
        return {"session": session.token, "started_at": session.grants.started_at,
                "expires_at": session.grants.expires_at}

    def open(self, args: dict[str, Any], pid: int | None) -> Session:
        """A session for the vaults `args` names (ids or names), with its expiry; `started_at` and
        `expires_at` keep a grant's times when it is opened again after a restart."""
        from ..access.tools import MemoryTools

        refs = args.get("vaults")
        if not isinstance(refs, list) or not refs or not all(isinstance(r, str) for r in refs):
            raise UsageError(msg("mcp_open needs the list of granted vault ids."), code=ErrorCode.DAEMON_BAD_REQUEST)
        engine = self.service.engine
        named = {vid: name for vid, name, _ in (self.service.resolve(ref) for ref in refs)}
        grants = Grants(engine.home, [GrantedVault(vid, name) for vid, name in named.items()],
                        expires_in=_seconds(args.get("expires_in")), clock=testhooks.now)
        started_at, expires_at = args.get("started_at"), args.get("expires_at")
        if isinstance(started_at, int | float) and not isinstance(started_at, bool):  # reopened after a restart
            grants.started_at = float(started_at)
            grants.expires_at = float(expires_at) if isinstance(expires_at, int | float) else None
        session = Session(secrets.token_hex(16), pid, grants, MemoryTools(engine, grants))
        with self._lock:
            if len(self._sessions) >= MAX_SESSIONS:
                oldest = min(self._sessions.values(), key=lambda s: s.grants.started_at)
                del self._sessions[oldest.token]
            self._sessions[session.token] = session
        return session

    def _close(self, args: dict[str, Any], call: Call) -> dict[str, Any]:
        self.close(str(args.get("session")))
        return {"closed": True}

    def close(self, token: str) -> None:
        with self._lock:
            self._sessions.pop(token, None)

    def _session(self, token: object) -> Session:
        with self._lock:
            session = self._sessions.get(str(token))
        if session is None:
            raise SessionUnknownError(msg("The daemon does not know this MCP session (it was restarted)."))
        return session

    def _call(self, args: dict[str, Any], call: Call) -> dict[str, Any]:
        session = self._session(args.get("session"))
        tool, arguments = args.get("tool"), args.get("arguments")
        if tool not in TOOL_METHODS or not isinstance(arguments, dict) or not isinstance(arguments.get("vault_id"), str):
            raise UsageError(msg("mcp_call needs a known tool and its arguments with a vault_id."), code=ErrorCode.DAEMON_BAD_REQUEST)
        origin = args.get("origin")  # the AI client's name, for the egress log of model requests
        with on_behalf_of(origin if isinstance(origin, str) else None):
            data: dict[str, Any] = self.run(session, str(tool), arguments).to_wire()
        return data

    def run(self, session: Session, tool: str, arguments: dict[str, Any]) -> Jsonable:
        """One tool call under the session's grant, on the daemon's engine; a lock anywhere during
        the call drops the late result."""
        engine = self.service.engine
        vault_id = session.grants.check(arguments["vault_id"])  # not granted: say so, locked or not
        name = session.grants.vaults[vault_id].name
        self.service.require(vault_id)
        epoch = engine.lock_epoch
        try:
            result: Jsonable = getattr(session.tools, tool)(**arguments)
        except CancelledError:
            locked = self.service.cut_by_lock(vault_id, epoch)
            if locked is not None:
                raise locked from None
            raise
        testhooks.hold_point("mcp-call-answered")
        if engine.lock_epoch != epoch or not engine.is_unlocked(vault_id):
            raise LockedError(msg("Vault {name} was locked during the call; the late result was dropped. To "
                                  "go on, {how}.", name=name, how=how_to_unlock(name)))
        return result

    def status(self) -> list[GrantInfo]:
        """The grants of the MCP servers served here (for `daemon status` and the TUI)."""
        now = testhooks.now()
        with self._lock:
            sessions = list(self._sessions.values())
        rows = []
        for s in sessions:
            if s.pid is not None and not process_alive(s.pid):
                continue  # an MCP server that exited without closing its session
            held = sorted(s.grants.vaults.values(), key=lambda v: v.name.casefold())
            revoked = [v.vault_id for v in held if (at := revoked_at(s.grants.home, v.vault_id)) is not None
                       and at >= s.grants.started_at]
            rows.append(GrantInfo(s.pid, [v.vault_id for v in held], [v.name for v in held], s.grants.started_at,
                                  s.grants.expires_at, s.grants.expires_at is not None and now >= s.grants.expires_at,
                                  revoked))
        return rows


def _seconds(value: object) -> float | None:
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise UsageError(msg("expires_in must be a positive number of seconds."), code=ErrorCode.DAEMON_BAD_REQUEST)
    return float(value)
