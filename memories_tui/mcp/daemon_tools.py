"""The MCP tools when the resident engine serves them: the methods of the tools' table
(`ToolsAPI`, made here from it, none written by hand), each one request to the daemon, which holds the keys, the index, the model and the grant. The
results come back as the same typed values (`from_json` of their wire form), so the server
publishes exactly what it would publish in-process.

This process never unlocks anything, so it starts without a passphrase and without key
derivation. A vault the daemon does not hold unlocked (or no daemon at all) is the tool
error `vault_locked`, which says how to unlock it; after `memories unlock` the next call
works without restarting the AI client. A daemon that runs but cannot be reached is said to
be so (`daemon_unreachable`, `daemon_not_answering`), never called a locked vault. When the daemon restarts, the session (this server's
grant: its vaults, start and expiry) is opened again as it was.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..access.grants import GrantedVault
from ..access.tools import TOOLS, Tool, ToolsAPI
from ..daemon import MCP_CALL, MCP_CLOSE, MCP_OPEN, DaemonClient, connect
from ..daemon.client import understood
from ..engine import Jsonable, current_origin
from ..errors import ErrorCode, LockedError, MemoriesError
from ..i18n import msg

M = TypeVar("M", bound=Jsonable)
GONE = (ErrorCode.DAEMON_UNREACHABLE, ErrorCode.DAEMON_SESSION_UNKNOWN)


class DaemonTools(ToolsAPI):  # declared for mypy: the methods are made below, at import
    can_ask = True  # the daemon's engine always answers questions

    def __init__(self, home: Path, vaults: list[GrantedVault], *, expires_in: float | None) -> None:
        self.home = home
        self.vaults = vaults
        self.expires_in = expires_in
        self._client: DaemonClient | None = None
        self._session: dict[str, Any] | None = None  # token, started_at, expires_at (kept across restarts)
        self._lock = threading.Lock()

    # -- one call ---------------------------------------------------------------------------
    def _call(self, model: type[M], tool: str, **arguments: Any) -> M:
        for attempt in (1, 2):
            client, token = self._ready(arguments["vault_id"])
            try:
                data = client.call(MCP_CALL, {"session": token, "tool": tool, "arguments": arguments,
                                                "origin": current_origin()})
            except MemoriesError as exc:
                if exc.code in GONE and attempt == 1:  # restarted or gone: find it again, once
                    self._forget(token)
                    continue
                raise
            return understood(tool, model.from_json, data)  # the wire form: the same object as in the daemon
        raise self._locked(arguments["vault_id"])

    def _ready(self, vault_ref: str) -> tuple[DaemonClient, str]:
        with self._lock:
            client = self._client or connect(self.home, kind="mcp")
            if client is None:
                raise self._locked(vault_ref)
            if self._session is None or self._session.get("token") is None:
                args: dict[str, Any] = {"vaults": [v.vault_id for v in self.vaults], "expires_in": self.expires_in}
                if self._session is not None:  # the same grant as before the daemon restarted
                    args.update(started_at=self._session["started_at"], expires_at=self._session["expires_at"])
                self._session = client.call_as(MCP_OPEN, args, lambda opened: {
                    "token": str(opened["session"]), "started_at": opened["started_at"],
                    "expires_at": opened["expires_at"]})
            self._client = client
            return client, str(self._session["token"])

    def _forget(self, token: str) -> None:
        with self._lock:
            self._client = None
            if self._session is not None and self._session.get("token") == token:
                self._session["token"] = None

    def _locked(self, vault_ref: str) -> LockedError:
        names = {v.vault_id: v.name for v in self.vaults}
        name = names.get(vault_ref, vault_ref)
        return LockedError(msg("Vault {name} is locked: no Memories daemon holds it unlocked. Unlock it with "
                               "`memories unlock {name}` (or in the Memories TUI), then call again.", name=name))

    def close(self) -> None:
        with self._lock:
            client, session = self._client, self._session
        if client is not None and session is not None and session.get("token"):
            try:
                client.call(MCP_CLOSE, {"session": session["token"]})
            except MemoriesError:
                pass


def _forwarded(tool: Tool) -> Callable[..., Jsonable]:
    """The method of `tool`: its arguments, by name, in one request to the daemon."""
    signature = inspect.signature(getattr(ToolsAPI, tool.method))

    def call(self: DaemonTools, *args: Any, **kwargs: Any) -> Jsonable:
        arguments = signature.bind(self, *args, **kwargs)
        arguments.apply_defaults()
        return self._call(tool.result, tool.method, **{k: v for k, v in arguments.arguments.items() if k != "self"})

    call.__name__ = call.__qualname__ = tool.method
    call.__signature__ = signature  # type: ignore[attr-defined]
    return call


for _tool in TOOLS:
    setattr(DaemonTools, _tool.method, _forwarded(_tool))
