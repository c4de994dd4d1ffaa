"""Opening a relayed MCP session with the standard library only (sockets, JSON).

The relay's start-up is what an AI client waits for, so this path loads none of the package's
own machinery: the home from `--home`/$MEMORIES_HOME, the daemon's socket, the kernel's word
on who serves it, one request. Anything short of a session opened (no daemon, another user's
socket, another build, an error of any kind) answers None, and `memories mcp` goes the
ordinary way, which has the full handshake (restarting a daemon of another build) and says
what is wrong as every command does.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import IO, Any

from ..frontend.daemon_socket import CONNECT_SECONDS, VERSION_HEADER, open_own, supported, this_version

OPEN_SECONDS = 30.0  # the daemon's first session loads the MCP SDK
Opened = tuple[dict[str, Any], socket.socket, IO[bytes]]
__all__ = ["Opened", "quick_open", "this_version"]


def quick_open(home: str | None, config: str | None, args: dict[str, Any]) -> tuple[Path, Opened] | None:
    """The home and its daemon's relayed session for `args`, or None."""
    path = _home(home, config)
    if path is None or os.environ.get("MEMORIES_NO_DAEMON", "").strip() not in ("", "0"):
        return None
    if not supported():
        return None
    try:
        raw = open_own(path)
    except OSError:
        return None
    if raw is None:
        return None
    sock = socket.socket(fileno=raw.detach())  # the socket module's, for the relay's file reads
    try:
        sock.settimeout(CONNECT_SECONDS)
        body = json.dumps({**args, "version": this_version()}, separators=(",", ":")).encode("utf-8")
        sock.sendall(f"POST /v1/mcp_relay HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
                     f"\r\nX-Memories-Client: mcp\r\n{VERSION_HEADER}: {this_version()}\r\n\r\n".encode() + body)
        sock.settimeout(OPEN_SECONDS)
        reader = sock.makefile("rb")
        status = reader.readline(1024).split(b" ", 2)
        headers = []
        while (line := reader.readline(8192)).strip():
            headers.append(line.lower())
        opened = json.loads(reader.readline(1024 * 1024)) if status[1:2] == [b"200"] else None
        if not isinstance(opened, dict) or not isinstance(opened.get("result"), dict) \
                or not any(h.startswith(VERSION_HEADER.lower().encode() + b":") for h in headers):
            raise OSError("no session")
    except (OSError, ValueError):
        sock.close()
        return None
    sock.settimeout(None)
    return path, (opened["result"], sock, reader)


def _home(home: str | None, config: str | None) -> Path | None:
    """The home as home.resolve_home finds it, when that needs nothing but the arguments."""
    text = home or os.environ.get("MEMORIES_HOME")
    if not text or (config and not Path(config).expanduser().exists()):
        return None
    path = Path(text).expanduser().resolve()
    return path if path.is_dir() else None
