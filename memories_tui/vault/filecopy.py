"""Copying a vault file with SQLite's online backup API, and putting a copy in place durably.

A raw byte copy of a database another process is writing can catch it half-way (and misses
what still sits in its WAL); the backup API reads one consistent snapshot and starts again
by itself when a writer commits meanwhile. Copies are written under a hidden temporary name
in the target folder, made self-contained (rollback journal, no -wal/-shm beside them),
synced to disk and only then renamed, so a crash or `kill -9` never leaves a partial file
under a final name; `remove_stale_partials` clears what a killed run left behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import CancelledError, ErrorCode, MemoriesError, VaultError
from ..files import sync_folder
from ..i18n import msg
from .header import BUSY_TIMEOUT_S, connect_readonly, vault_error_from

PARTIAL_SUFFIX = ".partial"
STEP_PAGES = 256  # pages per backup step: progress and cancel are checked between steps
MAX_RESTARTS = 3  # a writer committing during every step: after this many restarts, copy in one step
_FULL_ERRNOS = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}

CopyProgress = Callable[[int, int], None]  # (pages done, pages in all)


class _Restarted(Exception):
    """The source changed between steps and SQLite began the copy again."""


def partial_path(folder: Path, final_name: str) -> Path:
    """The hidden temporary name a copy is written under (the pid tells whose it is)."""
    return folder / f".{final_name}.{os.getpid()}{PARTIAL_SUFFIX}"


def remove_stale_partials(folder: Path) -> list[Path]:
    """Delete `.…<pid>.partial` files (and their journals) whose process is gone."""
    removed: list[Path] = []
    try:
        names = [p for p in folder.iterdir() if p.name.startswith(".") and p.name.endswith(PARTIAL_SUFFIX)]
    except OSError:
        return removed
    for path in names:
        pid_text = path.name[: -len(PARTIAL_SUFFIX)].rsplit(".", 1)[-1]
        if pid_text.isdigit() and _alive(int(pid_text)):
            continue
        for extra in ("", "-journal", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                Path(str(path) + extra).unlink()
        removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists but not ours to signal
    return True


def copy_database(source: Path, target: Path, *, progress: CopyProgress | None = None,
                  cancel: threading.Event | None = None, immutable: bool = False) -> None:
    """Copy the database at `source` (opened read-only) into the new file `target` with the
    online backup API; the copy uses a rollback journal so it is one self-contained file.
    `immutable` opens a file nobody else may be writing (a backup being restored) even when
    it sits in a read-only folder. Raises VaultError (disk full, unwritable, damaged source)."""
    src = _open_source(source, immutable)
    try:
        dst = _open_target(target)
        try:
            _run_backup(src, dst, source, target, progress, cancel)
            with _write_errors(target):
                dst.execute("PRAGMA journal_mode=DELETE")
        finally:
            dst.close()
    finally:
        src.close()
    for extra in ("-journal", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            Path(str(target) + extra).unlink()
    with _write_errors(target):
        os.chmod(target, 0o600)
        sync_file(target)


def copy_into(source: Path, live: sqlite3.Connection, live_path: Path, *, progress: CopyProgress | None = None,
              cancel: threading.Event | None = None) -> None:
    """Replace the whole content of the open database `live` with `source`'s in one
    transaction: other connections see the old content or the new, never a mix, and a crash
    part-way leaves the old content (its journal rolls the copy back)."""
    src = _open_source(source, immutable=True)
    try:
        _run_backup(src, live, source, live_path, progress, cancel, restart_ok=False)
    finally:
        src.close()


def _open_source(path: Path, immutable: bool) -> sqlite3.Connection:
    if not immutable:
        return connect_readonly(path)
    import urllib.parse

    connect_readonly(path).close()  # the same file checks (regular file, SQLite magic) first
    uri = "file:" + urllib.parse.quote(os.fsencode(path.resolve())) + "?mode=ro&immutable=1"
    try:
        return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise vault_error_from(exc, path) from None


def _open_target(path: Path) -> sqlite3.Connection:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        os.close(fd)
    except OSError as exc:
        raise write_error(path, exc) from None
    try:
        return sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise write_error(path, exc) from None


def _run_backup(src: sqlite3.Connection, dst: sqlite3.Connection, source: Path, target: Path,
                progress: CopyProgress | None, cancel: threading.Event | None, restart_ok: bool = True) -> None:
    """Stepped copy with progress and cancel; a source that keeps changing under it is copied
    in one step instead (one read snapshot, no restarts)."""
    remaining_before: list[int] = []

    def step(_status: int, remaining: int, total: int) -> None:
        if cancel is not None and cancel.is_set():
            raise CancelledError(msg("Cancelled; the partial copy was removed."))
        if remaining_before and remaining > remaining_before[-1] and restart_ok:
            raise _Restarted
        remaining_before.append(remaining)
        if progress is not None:
            progress(total - remaining, total)

    for attempt in range(MAX_RESTARTS + 1):
        remaining_before.clear()
        pages = STEP_PAGES if attempt < MAX_RESTARTS else -1
        try:
            with _write_errors(target, source):
                src.backup(dst, pages=pages, progress=step)
            return
        except _Restarted:
            continue
    raise VaultError(msg("{name} kept changing while it was copied; try again.", name=source.name), code=ErrorCode.VAULT_BUSY)


@contextlib.contextmanager
def _write_errors(path: Path, source: Path | None = None) -> Iterator[None]:
    """Failed writes into `path` get write codes; a damaged `source` gets the vault codes."""
    try:
        yield
    except sqlite3.Error as exc:
        name = str(getattr(exc, "sqlite_errorname", ""))
        if source is not None and name in ("SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_BUSY", "SQLITE_LOCKED"):
            raise vault_error_from(exc, source) from None
        if getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL" or "full" in str(exc):
            raise write_error(path, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))) from None
        if str(getattr(exc, "sqlite_errorname", "")).startswith("SQLITE_IOERR"):
            room = _probe_write(path, _size(source) if source is not None else 0)
            raise write_error(path, room or OSError(errno.EIO, os.strerror(errno.EIO))) from None
        if isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc):
            raise write_error(path, OSError(errno.EACCES, os.strerror(errno.EACCES))) from None
        raise vault_error_from(exc, path) from None
    except OSError as exc:
        raise write_error(path, exc) from None


def _probe_write(path: Path, size: int) -> OSError | None:
    """SQLite reports any failed write as an I/O error; ask the file system for room for the
    whole copy (`size` bytes) to learn whether it refuses to grow the file (full disk, quota,
    file size limit). Only ever done to our own temporary copies, never to a live vault."""
    if not path.name.endswith(PARTIAL_SUFFIX) or not hasattr(os, "posix_fallocate"):
        return None
    try:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return exc
    try:
        os.posix_fallocate(fd, 0, max(size, 1))
    except OSError as exc:
        return None if exc.errno in (errno.EINVAL, errno.EOPNOTSUPP) else exc
    finally:
        os.close(fd)
    return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def write_error(path: Path, exc: OSError | sqlite3.Error) -> MemoriesError:
    """A stable code for a failed write into `path`'s folder."""
    number = exc.errno if isinstance(exc, OSError) else None
    folder = path.parent
    if number in _FULL_ERRNOS:
        return VaultError(msg("Not enough space to write into {folder}: the disk (or its quota or a file size "
                              "limit) is full. Nothing was left behind; free some space and try again.",
                              folder=folder), code=ErrorCode.DISK_FULL)
    if number in (errno.EACCES, errno.EPERM, errno.EROFS):
        return VaultError(msg("Cannot write into {folder}: permission denied or read-only. Choose a folder you can "
                              "write to.", folder=folder), code=ErrorCode.FOLDER_UNWRITABLE)
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return VaultError(msg("Writing into {folder} failed ({reason}). Nothing was left behind.",
                          folder=folder, reason=reason), code=ErrorCode.WRITE_FAILED)


def sync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def install(partial: Path, final: Path) -> None:
    """Move a finished, synced copy to its final name without replacing anything there."""
    try:
        os.link(partial, final)  # fails if `final` exists: never overwrites
    except FileExistsError:
        raise VaultError(msg("{final} appeared while the copy was written; refusing to replace it.", final=final),
                         code=ErrorCode.FILE_EXISTS) from None
    except OSError:
        if final.exists():
            raise VaultError(msg("{final} already exists; refusing to replace it.", final=final), code=ErrorCode.FILE_EXISTS) from None
        os.replace(partial, final)  # file systems without hard links
    else:
        partial.unlink()
    sync_folder(final.parent)
