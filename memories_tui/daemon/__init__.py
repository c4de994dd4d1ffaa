"""The resident engine (`memories daemon`, or the TUI while it runs): one process per home that
holds the unlocked vaults, their indexes and the loaded model, and serves the CLI and MCP
servers of the same user over a Unix socket in the home.

A front end of the engine that serves other front ends: it uses only the engine's public API.
What loads with this package is the client side (paths, peer check, protocol, client), which
every front end asks on each call; the serving side (server.py, service.py, lifecycle.py)
loads only in the process that serves.
"""

from __future__ import annotations

from .client import NO_DAEMON_ENV, DaemonClient, connect, daemon_disabled
from .paths import DaemonPaths, DaemonUnavailableError, unix_sockets_supported
from .protocol import (
    HELLO,
    LOCK,
    MCP_CALL,
    MCP_CLOSE,
    MCP_OPEN,
    STATUS,
    STOP,
    UNLOCK,
    VAULT_STATE,
    VERSION,
    DaemonConnectionError,
    DaemonProtocolError,
    PeerRefusedError,
)

__all__ = [
    "HELLO", "LOCK", "MCP_CALL", "MCP_CLOSE", "MCP_OPEN", "STATUS", "STOP", "UNLOCK", "VAULT_STATE",
    "NO_DAEMON_ENV", "VERSION", "DaemonClient", "DaemonConnectionError", "DaemonPaths", "DaemonProtocolError",
    "DaemonUnavailableError", "PeerRefusedError", "connect", "daemon_disabled", "unix_sockets_supported",
]
