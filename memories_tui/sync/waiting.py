"""Waiting for a target without being held by it.

A read from a folder on a hung network mount, an S3 store or a WebDAV server that stopped
answering blocks its thread until the client's own timeouts end (a minute a read, retries
included several), and a server that sends a byte just inside each read timeout would hold it
for days; no client here can cut such a read from outside. So each read and listing runs in a
daemon thread of its own, and the sync waits for it a tenth of a second at a time: ctrl+c (the
cancel event) or a lock of the vault (`check` raises) ends the wait at once, and so does
bounds.MAX_WAIT_SECONDS. The read left behind ends with its client's timeouts, and its answer
is dropped; it holds no key and writes nothing, and a daemon thread does not keep the process
from exiting. Uploads and deletions are not left behind this way: one that landed after the
next sync's could put an older head back (push.py waits for them).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

from ..errors import CancelledError
from ..i18n import msg
from . import bounds

T = TypeVar("T")
POLL_SECONDS = 0.1


def in_background(call: Callable[[], T], name: str = "memories-sync-read") -> Future[T]:
    """`call()` in a daemon thread; its outcome in the future (which nothing has to wait for)."""
    future: Future[T] = Future()
    future.set_running_or_notify_cancel()

    def run() -> None:
        try:
            future.set_result(call())
        except BaseException as exc:  # noqa: BLE001 - handed to whoever takes the future
            future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


def wait_for(call: Callable[[], T], *, where: str, name: str | None, cancel: threading.Event | None = None,
             check: Callable[[], object] | None = None) -> T:
    """`call()`'s result, waited for until it comes, the cancel event is set (CancelledError),
    `check()` raises (the vault was locked) or MAX_WAIT_SECONDS pass (`name`: the object read;
    None: a listing)."""
    future = in_background(call)
    deadline = time.monotonic() + bounds.MAX_WAIT_SECONDS
    while True:
        try:
            return future.result(timeout=min(POLL_SECONDS, max(deadline - time.monotonic(), 0.0)))
        except TimeoutError:
            pass
        if cancel is not None and cancel.is_set():
            raise CancelledError(msg("Sync cancelled; nothing was changed here."))
        if check is not None:
            check()
        if time.monotonic() >= deadline:
            raise bounds.too_slow(where, name)
