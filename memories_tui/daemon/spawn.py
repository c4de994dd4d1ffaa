"""Starting a detached daemon and waiting for one to stop: what a client needs to (re)start the
home's resident engine, without loading the serving side (lifecycle.py)."""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import ErrorCode, MemoriesError
from ..i18n import N_, msg
from .paths import DaemonPaths, DaemonUnavailableError, unix_sockets_supported
from .protocol import read_error

START_TIMEOUT_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 30.0
WINDOWS_SENTENCE = N_("The Memories daemon needs Unix domain sockets, which this platform does not offer to "
                    "Python reliably (Windows); every command and the MCP server work per process instead, "
                    "unlocking the vault themselves.")


# How `start_detached` runs the CLI. A test-only module attribute (like the vault's cheap-KDF
# hook) lets the tests' CLI start a daemon that shares its cheap key derivation; no TOML key,
# variable or flag reaches it.
_TEST_DAEMON_COMMAND: list[str] | None = None


class DaemonRunningError(MemoriesError):
    code = ErrorCode.DAEMON_RUNNING


def start_detached(home: Path, config: Path) -> int:
    """Start `memories daemon` in its own session and wait until it listens; returns its pid.

    The child gets the caller's environment minus every passphrase variable (a passphrase
    only ever reaches the daemon inside an unlock request), and `/` as its folder."""
    if not unix_sockets_supported():
        raise DaemonUnavailableError(msg(WINDOWS_SENTENCE))
    read_end, write_end = os.pipe()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIES_PASSPHRASE")}
    program = _TEST_DAEMON_COMMAND or [sys.executable, "-m", "memories_tui"]
    # A config file that is not there means the defaults; named on the command line it would be an error.
    named = ["--config", str(config)] if config.exists() or config.is_symlink() else []
    command = [*program, "daemon", "--home", str(home), *named, "--ready-fd", str(write_end)]
    try:
        subprocess.Popen(command, pass_fds=(write_end,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, env=env, cwd="/", close_fds=True)
    finally:
        os.close(write_end)
    try:
        data = _read_ready(read_end)
    finally:
        os.close(read_end)
    if "pid" in data:
        return int(data["pid"])
    if isinstance(data.get("error"), dict):
        raise read_error(data)  # the same error the foreground start would print
    raise DaemonUnavailableError(msg("The daemon did not start and said nothing; run `memories daemon` in a "
                                     "terminal to see why."))


def _read_ready(fd: int) -> dict[str, Any]:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    chunks: list[bytes] = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    try:
        data = json.loads(b"".join(chunks) or b"{}")
    except ValueError:
        data = {}
    return data if isinstance(data, dict) else {}


def stop_daemon(paths: DaemonPaths, pid: int) -> bool:
    """Wait until the daemon holding the home's lock has let it go (it exits right after)."""
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        fd = os.open(paths.lock_file, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return True
        except OSError:
            pass
        finally:
            os.close(fd)
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        pass
    return False
