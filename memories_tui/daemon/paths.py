"""Where one home's resident engine lives: `<home>/daemon/` (0700) holds the socket (0600),
the lock file whose holder is the one daemon of the home, and the log.

A Unix socket path may hold at most ~107 bytes. A deep home (a test's temporary folder, a
long user name) can be longer, so on Linux such a socket is reached through the folder's
open descriptor (`/proc/self/fd/N/daemon.sock`), which names the same file in a few bytes.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import ErrorCode, HomeError, MemoriesError
from ..i18n import msg

SOCKET_NAME = "daemon.sock"
MAX_SOCKET_PATH = 100  # sun_path is 108 bytes on Linux, 104 on macOS; keep a margin


class DaemonUnavailableError(MemoriesError):
    """This platform or this home cannot run a resident engine; every front end works per process."""

    code = ErrorCode.DAEMON_UNAVAILABLE


def unix_sockets_supported() -> bool:
    import socket

    return hasattr(socket, "AF_UNIX") and sys.platform != "win32"


@dataclass(frozen=True)
class DaemonPaths:
    home: Path

    @property
    def folder(self) -> Path:
        return self.home / "daemon"

    @property
    def socket(self) -> Path:
        return self.folder / SOCKET_NAME

    @property
    def lock_file(self) -> Path:
        """Held (flock) by the running daemon for its whole life; holds its pid as text."""
        return self.folder / "daemon.lock"

    @property
    def log_file(self) -> Path:
        return self.folder / "daemon.log"

    def ensure_folder(self) -> None:
        """Create `<home>/daemon` as 0700 (the home too, and the folders above it, if missing: a
        fresh account has no ~/.local/share), or check that an existing one is ours and private."""
        for folder in (self.home, self.folder):
            try:
                folder.mkdir(mode=0o700, parents=folder == self.home)
                os.chmod(folder, 0o700)  # mkdir's mode is filtered by the umask
            except FileExistsError:
                pass
            except OSError as exc:
                raise HomeError(msg("Cannot create {folder}: {strerror}.", folder=folder, strerror=exc.strerror)) from None
        check_private_folder(self.folder)


def check_private_folder(folder: Path) -> None:
    """Refuse a daemon folder another user owns or others may enter: its socket would be reachable."""
    try:
        info = os.lstat(folder)
    except OSError as exc:
        raise HomeError(msg("Cannot use {folder}: {strerror}.", folder=folder, strerror=exc.strerror)) from None
    if not stat.S_ISDIR(info.st_mode):
        raise HomeError(msg("{folder} is not a folder; move it away so the daemon can create its own.",
                            folder=folder))
    if info.st_uid != os.getuid():
        raise HomeError(msg("{folder} belongs to another user (uid {uid}); the daemon will not use it.",
                            folder=folder, uid=info.st_uid))
    if info.st_mode & 0o077:
        raise HomeError(msg("{folder} can be entered by other users (mode {mode:o}); run `chmod 700 "
                            "{folder}` and start again.", folder=folder, mode=stat.S_IMODE(info.st_mode)))


def open_private_file(path: Path, flags: int) -> int:
    """Open (creating it 0600) one of the daemon's own files: never through a symbolic link, and
    only a regular file, so a link planted in the folder cannot make the daemon truncate or
    write to a file elsewhere."""
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as exc:
        if os.path.lexists(path) and not (os.path.isfile(path) and not os.path.islink(path)):
            raise _not_ours(path) from None
        raise HomeError(msg("Cannot open {path}: {strerror}.", path=path, strerror=exc.strerror)) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:  # a hard link would name another file too
        os.close(fd)
        raise _not_ours(path)
    os.set_blocking(fd, True)
    return fd


def read_holder_text(path: Path, limit: int = 4096) -> bytes:
    """The start of the lock file's text (who holds the home), never read through a link or
    from anything but a regular file; b"" when there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return b""
    try:
        return os.read(fd, limit) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    finally:
        os.close(fd)


def remove_stale_socket(path: Path) -> None:
    """Remove a socket left by a daemon that died; anything else at its name is refused."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise HomeError(msg("Cannot use {path}: {strerror}.", path=path, strerror=exc.strerror)) from None
    if not stat.S_ISSOCK(info.st_mode):
        raise _not_ours(path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _not_ours(path: Path) -> HomeError:
    return HomeError(msg("{path} is not the daemon's own file (a link, a folder or something else is there); the "
                         "daemon will not use it. Move it away and start again.", path=path))


class SocketAddress:
    """The path to bind or connect to, short enough for sun_path; `close()` when done."""

    def __init__(self, socket_path: Path) -> None:
        self._dir_fd: int | None = None
        text = str(socket_path)
        if len(os.fsencode(text)) <= MAX_SOCKET_PATH:
            self.path = text
            return
        if not Path("/proc/self/fd").is_dir():
            raise DaemonUnavailableError(
                msg("The daemon socket path {path} is too long for this system ({count} bytes; the limit is "
                    "about {limit}); use a home with a shorter path.",
                    path=text, count=len(text), limit=MAX_SOCKET_PATH))
        try:
            self._dir_fd = os.open(socket_path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                                   | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise DaemonUnavailableError(msg("Cannot open {parent}: {strerror}.",
                                             parent=socket_path.parent, strerror=exc.strerror)) from None
        self.path = f"/proc/self/fd/{self._dir_fd}/{socket_path.name}"

    def close(self) -> None:
        if self._dir_fd is not None:
            os.close(self._dir_fd)
            self._dir_fd = None

    def __enter__(self) -> SocketAddress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
