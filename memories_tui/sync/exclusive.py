"""One sync of a vault at a time on this machine (the daemon, the TUI and a CLI call may each
start one): an advisory lock on a hidden file beside the vault file, held for the whole sync.
Two at once would each upload a head, and the slower one could put an older head back."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from ..errors import CancelledError, ErrorCode, SyncError
from ..i18n import msg

WAIT_SECONDS = 300.0


@contextlib.contextmanager
def one_sync_at_a_time(vault_path: Path, cancel: threading.Event | None = None) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; the state check in the vault still refuses a race
        yield
        return
    lock = vault_path.with_name(f".{vault_path.stem}.sync.lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as exc:
        raise SyncError(msg("Cannot lock {path} for the sync: {strerror}.", path=lock, strerror=exc.strerror),
                        code=ErrorCode.SYNC_BUSY) from None
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if cancel is not None and cancel.is_set():
                    raise CancelledError(msg("Sync cancelled; nothing was changed here.")) from None
                if time.monotonic() > deadline:
                    raise SyncError(msg("Another sync of this vault has been running for minutes; try again "
                                        "later."), code=ErrorCode.SYNC_BUSY) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)
