"""Which build of Memories talks to which: every request names the client's package version and
the fingerprint of the API it speaks; the daemon refuses a request of another build before it
runs anything, with what the client needs to decide (its version, whether it holds an
unlocked vault, its config). A detached daemon that holds no unlocked vault is restarted for
the newer client, transparently; otherwise the user is told to run `memories daemon restart`.

The client's fingerprint is a constant (frontend/daemon_socket.py, where a served command line
reads it too), so asking needs no import of the engine; the daemon computes its own from what it
dispatches (lifecycle.served_fingerprint), and a test keeps the two equal (it prints the new
value when the served API changed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .. import __version__, testhooks
from ..errors import ErrorCode
from ..frontend.daemon_socket import API_FINGERPRINT
from ..i18n import msg
from .protocol import HELLO, STOP, DaemonConnectionError

MISMATCH_CODE = ErrorCode.DAEMON_VERSION_MISMATCH
RESTARTABLE = frozenset({HELLO, STOP})  # answered whatever the client's build: how a restart begins


@dataclass(frozen=True)
class Build:
    version: str
    api: str


def this_build(api: str = API_FINGERPRINT) -> Build:
    """This process's build (`api`: the daemon passes the fingerprint it computed); the test hook
    ``MEMORIES_TEST_BUILD=<version>[:<api>]`` fakes it, in a client and in a daemon it starts."""
    fake = os.environ.get(testhooks.BUILD_ENV, "")
    if fake:
        version, _sep, fake_api = fake.partition(":")
        return Build(version or __version__, fake_api or api)
    return Build(__version__, api)


@dataclass(frozen=True)
class DaemonBuild:
    """What a refusing daemon says about itself."""

    version: str
    kind: str  # daemon | tui
    unlocked: bool
    config: str | None

    @classmethod
    def from_wire(cls, data: object) -> DaemonBuild | None:
        if not isinstance(data, dict) or not isinstance(data.get("version"), str):
            return None
        config = data.get("config")
        return cls(data["version"], str(data.get("kind", "daemon")), data.get("unlocked") is not False,
                   config if isinstance(config, str) else None)


class DaemonVersionError(DaemonConnectionError):
    code = MISMATCH_CODE

    def __init__(self, message: Any, daemon: DaemonBuild | None = None) -> None:
        super().__init__(message)
        self.daemon = daemon


def mismatch(daemon_version: str, client: Build) -> DaemonVersionError:
    if daemon_version != client.version:
        return DaemonVersionError(msg("The running daemon is {daemon}, this is {client}: run `memories daemon "
                                      "restart`.", daemon=daemon_version, client=client.version))
    return DaemonVersionError(msg("The running daemon is another build of {client} than this one: run `memories "
                                  "daemon restart`.", client=client.version))


def older_daemon(client: Build) -> DaemonConnectionError:
    """A daemon that names no version: one from before the handshake."""
    return DaemonConnectionError(msg("The running daemon is older than this version ({client}) of Memories: run "
                                     "`memories daemon restart`.", client=client.version),
                                 code=ErrorCode.DAEMON_INCOMPATIBLE)
