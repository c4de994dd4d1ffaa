"""A folder target: what Syncthing, Dropbox, iCloud Drive, a NAS mount or a USB disk replicate.

Every object is written under a temporary name, fsynced, then renamed into place, so a reader
never sees half an object of ours. Files a replication tool is still copying (its own
temporary names, anything starting with '.' or ending in '.tmp') are "not there yet": `list`
leaves them out, they are never taken for damage.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from ..errors import ErrorCode, SyncError, SyncTamperedError
from ..files import read_up_to
from ..i18n import msg
from . import bounds

_NOFOLLOW_CLOEXEC = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_OPEN_FLAGS = os.O_RDONLY | _NOFOLLOW_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
_DIR_FLAGS = getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def _is_temporary(name: str) -> bool:
    return name.startswith(".") or name.startswith("~") or name.endswith((".tmp", ".partial", ".part"))


class FolderTarget:
    on_this_machine = True

    def __init__(self, root: Path) -> None:
        self.root = root
        self.description = str(root)
        if not root.is_dir():
            raise SyncError(msg("The sync folder {path} does not exist (or is not a folder). Create it, or mount "
                                "the disk it is on.", path=root), code=ErrorCode.SYNC_TARGET_MISSING)

    def _parts(self, name: str) -> list[str]:
        parts = name.split("/")
        if not name or any(p in ("", ".", "..") or _is_temporary(p) for p in parts):
            raise SyncError(msg("Refusing the object name {name!r}.", name=name), code=ErrorCode.SYNC_BAD_TARGET)
        return parts

    def _path(self, name: str) -> Path:
        return self.root.joinpath(*self._parts(name))

    @contextlib.contextmanager
    def _folder_of(self, name: str, create: bool = False) -> Iterator[tuple[int, str]]:
        """(a descriptor of the folder that holds `name`, its last part), the folders on the way
        opened one inside the other without following a link (made when `create`): a folder that
        is a link, checked by path and then used by path, could be swapped for a link between
        the two by a replication peer and put, read or delete outside the target."""
        parts = self._parts(name)
        fd = os.open(self.root, os.O_RDONLY | _DIR_FLAGS)
        try:
            for depth, part in enumerate(parts[:-1], 1):
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, dir_fd=fd)
                try:
                    inner = os.open(part, os.O_RDONLY | _DIR_FLAGS | getattr(os, "O_NOFOLLOW", 0), dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR):  # a link, or not a folder
                        raise self._not_a_file("/".join(parts[:depth])) from None
                    raise
                os.close(fd)
                fd = inner
            yield fd, parts[-1]
        finally:
            os.close(fd)

    def _failed(self, exc: OSError) -> SyncError:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return SyncError(msg("The sync folder {path} is read-only or not writable by you ({strerror}). Nothing "
                                 "was lost; make it writable and sync again.", path=self.root, strerror=exc.strerror),
                             code=ErrorCode.SYNC_TARGET_READONLY)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):  # the disk, or this user's quota on it (a NAS share)
            return SyncError(msg("The sync folder {path} is full. Nothing was lost; free some space and sync "
                                 "again.", path=self.root), code=ErrorCode.SYNC_TARGET_FULL)
        return SyncError(msg("Cannot use the sync folder {path}: {strerror}.", path=self.root,
                             strerror=exc.strerror), code=ErrorCode.SYNC_TARGET_UNREACHABLE)

    def put(self, name: str, data: bytes) -> None:
        try:
            with self._folder_of(name, create=True) as (folder, leaf):
                tmp = f".{leaf}.{secrets.token_hex(4)}.tmp"
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW_CLOEXEC, 0o600, dir_fd=folder)
                try:
                    try:
                        view = memoryview(data)
                        while view:
                            view = view[os.write(fd, view):]
                        os.fsync(fd)
                    finally:
                        os.close(fd)
                    os.replace(tmp, leaf, src_dir_fd=folder, dst_dir_fd=folder)
                except OSError:
                    with contextlib.suppress(OSError):
                        os.unlink(tmp, dir_fd=folder)
                    raise
                os.fsync(folder)
        except OSError as exc:
            raise self._failed(exc) from None

    def get(self, name: str, limit: int | None = None) -> bytes | None:
        """The object's bytes. Only a regular file is read, and only up to its bound: a
        link (to a private key, to /dev/zero), a pipe that would block forever or a device is
        refused, whoever else writes to the folder (a replication peer, another user)."""
        try:
            with self._folder_of(name) as (folder, leaf):
                fd = os.open(leaf, _OPEN_FLAGS, dir_fd=folder)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a link
                raise self._not_a_file(name) from None
            raise self._failed(exc) from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise self._not_a_file(name)
            bound = bounds.limit_for(name, limit)
            if info.st_size > bound:
                raise bounds.too_large(name, self.description, bound)
            data = read_up_to(fd, bound, info.st_size)  # it may grow while read
        except OSError as exc:
            raise self._failed(exc) from None
        finally:
            os.close(fd)
        if data is None:
            raise bounds.too_large(name, self.description, bound)
        return data

    def _not_a_file(self, name: str) -> SyncTamperedError:
        return SyncTamperedError(msg("{name} in the sync folder {path} is not a regular file or folder (a link, a "
                                     "pipe or a device); Memories writes only those there, so it refuses it. Nothing "
                                     "was changed here; remove it and sync again.", name=name, path=self.root))

    def list(self, prefix: str) -> list[str]:
        """The objects under `prefix`, as `d/DEVICE/NAME` at most: no object of ours lies deeper, so
        deeper folders are not entered (a replication peer could nest them past any recursion
        limit), and every entry met counts towards the listing's bound, empty folders included.
        A folder that is gone (a peer removing it meanwhile) holds nothing."""
        start = prefix.strip("/")
        pending = [(self._path(start) if start else self.root, start)]
        out: list[str] = []
        seen = 0
        while pending:
            folder, rel = pending.pop()
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        seen += 1
                        if seen > bounds.MAX_LISTED_NAMES:  # a replication peer can fill the folder too
                            raise bounds.too_many(self.description)
                        if _is_temporary(entry.name):
                            continue
                        name = f"{rel}/{entry.name}" if rel else entry.name
                        if not entry.is_dir():
                            out.append(name)
                        elif not entry.is_symlink() and name.count("/") < 2:  # a linked folder is not entered
                            pending.append((Path(entry.path), name))
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as exc:
                raise self._failed(exc) from None
        return sorted(out)

    def delete(self, name: str) -> None:
        try:
            with self._folder_of(name) as (folder, leaf):
                os.unlink(leaf, dir_fd=folder)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise self._failed(exc) from None
