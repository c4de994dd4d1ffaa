"""Reading a user-named file safely: regular files only (or a pipe where that is useful),
never more than a limit, never hanging on a FIFO with no writer; making a folder the user named for our files; and
making a rename durable.

`st_size` is 0 for devices and pipes, so the limit is enforced while reading, not only
from `stat`; the file is opened non-blocking so a FIFO cannot stall the open itself.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import ErrorCode, InputRefusedError, VaultError
from .i18n import Message, msg, term

_CHUNK = 1024 * 1024


def read_limited(path: Path, limit: int, *, what: str, advice: str = "", allow_pipe: bool = False,
                 base: Path | None = None) -> bytes:
    """The bytes of `path`, or InputRefusedError naming the file: missing, a folder, a device,
    FIFO or socket (unless `allow_pipe`, for `--passphrase-file <(cmd)`), unreadable, or over
    `limit` bytes (`what` names the limit; `advice` says what to do about it). A relative
    `path` opens in `base` when given (the resident engine reading a file named in another
    process's working folder); messages name `path` as the user typed it."""
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if not allow_pipe:
        flags |= getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path if base is None else base / path, flags)
    except FileNotFoundError:
        raise InputRefusedError(msg("{path} does not exist.", path=path), code=ErrorCode.FILE_NOT_FOUND) from None
    except IsADirectoryError:
        raise InputRefusedError(msg("{path} is a directory; pass the files inside it.", path=path), code=ErrorCode.UNSUPPORTED_FILE) from None
    except OSError as exc:
        raise InputRefusedError(msg("Cannot read {path}: {strerror}.", path=path, strerror=exc.strerror), code=ErrorCode.FILE_UNREADABLE) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputRefusedError(msg("{path} is a directory; pass the files inside it.", path=path), code=ErrorCode.UNSUPPORTED_FILE)
        pipe = stat.S_ISFIFO(info.st_mode)
        if not (stat.S_ISREG(info.st_mode) or (allow_pipe and pipe)):
            raise InputRefusedError(
                msg("{path} is not a regular file (a device, FIFO or socket); only regular files are read.",
                    path=path),
                code=ErrorCode.NOT_REGULAR_FILE)
        if info.st_size > limit:
            raise InputRefusedError(_too_large(path, info.st_size, limit, what, advice), code=ErrorCode.FILE_TOO_LARGE)
        if not pipe and hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        data = read_up_to(fd, limit, info.st_size)
        if data is None:
            raise InputRefusedError(_too_large(path, None, limit, what, advice), code=ErrorCode.FILE_TOO_LARGE)
        return data
    except OSError as exc:
        raise InputRefusedError(msg("Cannot read {path}: {strerror}.", path=path, strerror=exc.strerror), code=ErrorCode.FILE_UNREADABLE) from None
    finally:
        os.close(fd)


def read_up_to(fd: int, limit: int, expected: int = 0) -> bytes | None:
    """Everything `fd` holds, or None once it is past `limit` bytes (a file that grows while it
    is read, a device, a pipe): `expected` bytes (what stat said) in one read, then a chunk at a
    time, so no buffer of `limit` bytes is set aside and a file that kept its size is not copied."""
    parts: list[bytes] = []
    total = 0
    want = min(expected, limit) + 1 if expected > 0 else 0
    while True:
        part = os.read(fd, want or min(_CHUNK, limit + 1 - total))
        want = 0
        if not part:
            return parts[0] if len(parts) == 1 else b"".join(parts)
        parts.append(part)
        total += len(part)
        if total > limit:
            return None


def _too_large(path: Path, size: int | None, limit: int, what: str, advice: str) -> Message:
    """`what` and `advice` are marked with N_() where they are written."""
    if size is None:
        problem = msg("{path} is over {limit:,} bytes; the {what} limit is {limit:,} bytes.",
                      path=path, limit=limit, what=term(what))
    else:
        problem = msg("{path} is {size:,} bytes; the {what} limit is {limit:,} bytes.",
                      path=path, size=size, limit=limit, what=term(what))
    return msg("{problem} {advice}", problem=problem, advice=term(advice)) if advice else problem


def sync_folder(folder: Path) -> None:
    """Make a rename in `folder` durable (POSIX; a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def make_private_folder(folder: Path, *, is_a_file: Message, inside_a_file: Message) -> bool:
    """Create `folder` and its missing parents, private to the user (0700), unless it is a
    folder already; True when this call made it. A file in the way is a VaultError
    `not_a_folder` with the caller's sentence (`is_a_file` at `folder`, `inside_a_file` above
    it); any other failure is the OSError, for the caller to name."""
    if folder.exists() and not folder.is_dir():
        raise VaultError(is_a_file, code=ErrorCode.NOT_A_FOLDER)
    if folder.is_dir():
        return False
    try:
        folder.mkdir(mode=0o700, parents=True)
    except NotADirectoryError:
        raise VaultError(inside_a_file, code=ErrorCode.NOT_A_FOLDER) from None
    except FileExistsError:
        if not folder.is_dir():
            raise
        return False  # made by another process meanwhile
    return True
