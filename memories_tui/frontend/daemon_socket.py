"""The home's daemon socket reached with the standard library alone, for the processes whose
start-up is the point (the relayed `memories mcp`, a served verb's command line): no typing,
no http.client, none of the package's machinery, and the socket module's C part only (the
module itself builds enums for a tenth of a served call's start-up). Linux only (the peer's
credentials)."""

from __future__ import annotations

import _socket
import os
import struct
import sys
from pathlib import Path

from .. import __version__, testhooks

# The fingerprint of the API this build's clients speak: lifecycle.served_fingerprint() of this
# build, which a test keeps equal to it (tests/integration/test_daemon_handshake.py prints the
# new value when the served API changed). Here so a served command line can name it cheaply.
API_FINGERPRINT = "c73c61c20bd8e14a"
VERSION_HEADER = "X-Memories-Version"  # the two headers a request names its build in (daemon/handshake.py)
API_HEADER = "X-Memories-Api"
SOCKET = ("daemon", "daemon.sock")
MAX_SOCKET_PATH = 100  # as daemon/paths.py
CONNECT_SECONDS = 5.0


def this_version() -> str:
    """This package's version, or the one the test hook fakes (as daemon/handshake.py does)."""
    fake = os.environ.get(testhooks.BUILD_ENV, "")
    return fake.partition(":")[0] or __version__ if fake else __version__


def this_api() -> str:
    """The API fingerprint this client speaks, or the one the test hook fakes."""
    return os.environ.get(testhooks.BUILD_ENV, "").partition(":")[2] or API_FINGERPRINT


def supported() -> bool:
    """Whether the peer check below can be made here; elsewhere the ordinary way checks it."""
    return sys.platform.startswith("linux")


def open_own(home: Path) -> _socket.socket | None:
    """A connection to `home`'s daemon when one listens and runs as this user, else None;
    OSError when connecting fails otherwise."""
    target = home.joinpath(*SOCKET)
    if not target.exists():
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_SECONDS)
        connect_unix(sock, target)
        _pid, uid, _gid = _credentials(sock)
        if uid != os.getuid():
            raise OSError("served by another user")
    except BaseException:
        sock.close()
        raise
    return sock


def peer_pid(sock: _socket.socket) -> int:
    """The process serving the socket, as the kernel names it."""
    return _credentials(sock)[0]


def _credentials(sock: _socket.socket) -> tuple[int, int, int]:
    pid, uid, gid = struct.unpack("3i", sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12))
    return pid, uid, gid


def connect_unix(sock: _socket.socket, target: Path) -> None:
    """Connect to the socket at `target`, through the folder's descriptor when the path is too long."""
    if len(os.fsencode(str(target))) <= MAX_SOCKET_PATH:
        sock.connect(str(target))
        return
    fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        sock.connect(f"/proc/self/fd/{fd}/{target.name}")
    finally:
        os.close(fd)


class Lines:
    """Lines read off a connection (what `makefile("rb").readline` does, without the socket module)."""

    def __init__(self, sock: _socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def readline(self, limit: int) -> bytes:
        """One line with its newline, at most `limit` bytes; shorter without one at the end."""
        while b"\n" not in self.buffer and len(self.buffer) < limit:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.buffer += chunk
        cut = self.buffer.find(b"\n", 0, limit) + 1 or min(limit, len(self.buffer))
        line, self.buffer = self.buffer[:cut], self.buffer[cut:]
        return line
