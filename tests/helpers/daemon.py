"""A real resident engine for tests: `memories daemon --detach` on a temp home, a clock file the
test moves (`MEMORIES_TEST_CLOCK`), raw requests on its socket, and a clean stop at the end."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers.cli import Result, run_cli


def wait_until(predicate: Callable[[], bool], timeout: float = 60.0, what: str = "condition") -> None:
    """Poll `predicate` until it holds; fail after `timeout` (a ceiling for slow CI, not a speed claim)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def lock_held(home: Path) -> bool:
    """Is `<home>/daemon/daemon.lock` held by a live process (a daemon or a hosting TUI)?"""
    path = home / "daemon" / "daemon.lock"
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def holder_pid(home: Path) -> int:
    return int(json.loads((home / "daemon" / "daemon.lock").read_text())["pid"])


class Clock:
    """The daemon's clock (`MEMORIES_TEST_CLOCK`): starts at the real time, moves only when told."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.now = time.time()
        self._write()

    def catch_up(self) -> None:
        """Move to the real time (a revocation file is stamped with it)."""
        self.now = max(self.now, time.time() + 1)
        self._write()

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self._write()

    def _write(self) -> None:
        temp = self.path.with_suffix(".tmp")
        temp.write_text(repr(self.now), encoding="ascii")
        os.replace(temp, self.path)  # the daemon reads a whole number or the old one

    @property
    def env(self) -> dict[str, str]:
        return {"MEMORIES_TEST_CLOCK": str(self.path)}


def stop(home: Path, timeout: float = 60.0) -> None:
    """SIGTERM the home's daemon (if any) and wait until it has let go of the home."""
    if not lock_held(home):
        return
    try:
        os.kill(holder_pid(home), signal.SIGTERM)
    except ProcessLookupError:
        return
    wait_until(lambda: not lock_held(home), timeout, "the daemon to stop")


@contextmanager
def daemon(home: Path, env: dict[str, str] | None = None) -> Iterator[int]:
    """A detached daemon on `home` for the block; its pid."""
    started = run_cli(home, "--json", "daemon", "--detach", passphrase=None, env=env)
    assert started.code == 0, started.stderr + started.stdout
    try:
        yield int(started.json["pid"])
    finally:
        stop(home)


def unlock(home: Path, vault: str, *extra: str, env: dict[str, str] | None = None) -> Result:
    return run_cli(home, "--json", "unlock", vault, *extra, env=env)


def raw_request(home: Path, data: bytes, *, read_limit: int = 1 << 20, hang_up: bool = False) -> bytes:
    """Send raw bytes on the daemon's socket and return everything it answers (`hang_up`:
    close our sending side right after, as a client that dies mid-request does)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(60)
        connect_unix(sock, home / "daemon" / "daemon.sock")
        try:
            sock.sendall(data)
        except BrokenPipeError:
            pass
        if hang_up:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        while sum(map(len, chunks)) < read_limit:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def connect_unix(sock: socket.socket, path: Path) -> None:
    """Deep temp paths exceed sun_path; go through /proc/self/fd like the product does."""
    if len(str(path)) <= 100:
        sock.connect(str(path))
        return
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        sock.connect(f"/proc/self/fd/{fd}/{path.name}")
    finally:
        os.close(fd)


def post(method: str, body: bytes, *, version: int = 1, length: int | None = None) -> bytes:
    head = (f"POST /v{version}/{method} HTTP/1.0\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body) if length is None else length}\r\n\r\n").encode()
    return head + body


def answer_json(raw: bytes) -> tuple[int, object]:
    """(HTTP status, the last JSON line of the body)."""
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    lines = [line for line in body.splitlines() if line.strip()]
    return status, json.loads(lines[-1])
