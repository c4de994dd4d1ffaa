"""MCP sessions hosted whole in the resident engine: `memories mcp` only relays its stdio.

The process an AI client starts then imports neither the MCP SDK nor the engine: it opens one
connection (`mcp_relay`, naming its vaults and expiry) and copies frames both ways. Here the
connection gets a session (the grant checked at every call, as for `mcp_call`) and the same
MCP server `memories mcp` runs in-process (access/mcp_server.py's `build_server` over the guarded
frame reader), on the daemon's engine. The SDK loads once, on the first session.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import IO, TYPE_CHECKING, Any

from .handshake import Build, mismatch
from .protocol import encode_line
from .server import Call, StreamMethod
from .upgrade import CHANGED_API

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from ..access.grants import GrantedVault
    from ..engine import Jsonable
    from .mcp_sessions import McpSessions, Session

log = logging.getLogger("memories.daemon")
MAX_SERVERS = 64  # sets of granted vaults with a server built


class HostedTools:
    """The tools of one relayed session, each run through the session's grant checks. The MCP
    server calls a tool's method with every argument by name, as its table declares them
    (access/tools.py `ToolsAPI`), so they pass on as they are."""

    can_ask = True

    def __init__(self, sessions: McpSessions, session: Session) -> None:
        self._sessions = sessions
        self._session = session

    def __getattr__(self, tool: str) -> Callable[..., Jsonable]:
        if tool.startswith("_"):
            raise AttributeError(tool)

        def run(**arguments: Any) -> Jsonable:
            return self._sessions.run(self._session, tool, arguments)

        return run


class SessionTools:
    """The tools of whichever session is being served in this context: one MCP server (built
    once per set of granted vaults: ~0.1 s) serves every session of those vaults."""

    can_ask = True

    def __getattr__(self, name: str) -> Any:
        return getattr(_CURRENT.get(), name)


_CURRENT: ContextVar[HostedTools] = ContextVar("memories_relayed_session")


class McpRelayHost:
    def __init__(self, sessions: McpSessions) -> None:
        self.sessions = sessions
        self._servers: dict[tuple[GrantedVault, ...], MCPServer] = {}
        self._lock = threading.Lock()

    def _server(self, vaults: tuple[GrantedVault, ...]) -> MCPServer:
        from ..access.mcp_server import build_server

        with self._lock:
            server = self._servers.get(vaults)
            if server is None:
                if len(self._servers) >= MAX_SERVERS:
                    self._servers.clear()
                server = self._servers[vaults] = build_server(SessionTools(), list(vaults))
            return server

    def streams(self) -> dict[str, StreamMethod]:
        return {"mcp_relay": self.serve}

    def serve(self, args: dict[str, Any], call: Call, reader: IO[bytes], writer: IO[bytes]) -> None:
        """Open the session, say so in one line, then serve MCP frames until the relay hangs up.
        A relay that vanished mid-call only loses the answer; nothing here raises for it."""
        from ..access.stdio_guard import serve_frames

        ours = self.sessions.service.build()
        if ours and (ours["api"] == CHANGED_API or args.get("version") != ours["version"]):
            raise mismatch(str(ours["version"]), Build(str(args.get("version")), ""))  # its server is of this build
        session = self.sessions.open(args, call.peer.pid)
        try:
            server = self._server(tuple(sorted(session.grants.vaults.values(), key=lambda v: v.name.casefold())))
            _CURRENT.set(HostedTools(self.sessions, session))  # the SDK's tasks and worker threads copy it
            writer.write(encode_line({"result": {
                "session": session.token, "vaults": list(session.grants.vaults),
                "started_at": session.grants.started_at, "expires_at": session.grants.expires_at}}))
            try:
                serve_frames(server, reader, writer)
            except OSError:
                pass  # the relay left while an answer was on its way
            except BaseException as exc:  # noqa: BLE001 - an exception group from the SDK's task group
                if not _only_hangups(exc):
                    raise
        finally:
            self.sessions.close(session.token)


def _only_hangups(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return all(_only_hangups(e) for e in exc.exceptions)
    return isinstance(exc, OSError)
