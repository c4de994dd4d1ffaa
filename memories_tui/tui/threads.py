"""The executor behind the TUI's thread workers: quitting never waits for ever.

Textual runs `@work(thread=True)` workers on the event loop's default executor, and when the
app ends, asyncio joins every thread of that executor and Python joins them again at exit:
one task that does not return (a key derivation starved of memory, a stuck service) kept
`ctrl+q` from ever ending the process. Here each task runs in its own daemon thread, and
shutting down waits a short grace for running tasks (a vault write finishing) and then
lets the process end without them; SQLite rolls back whatever transaction they left open.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
GRACE_SECONDS = 5.0  # how long quitting waits for running tasks


class DaemonThreadExecutor(ThreadPoolExecutor):
    """A ThreadPoolExecutor in name (asyncio accepts nothing else as the default executor) that
    starts one daemon thread per task and never blocks shutdown for more than `grace_seconds`."""

    def __init__(self, grace_seconds: float | None = None) -> None:
        super().__init__(max_workers=1, thread_name_prefix="memories-worker")  # its pool is never used
        self.grace_seconds = GRACE_SECONDS if grace_seconds is None else grace_seconds
        self._running: set[threading.Thread] = set()
        self._guard = threading.Lock()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()

        def run() -> None:
            try:
                if future.set_running_or_notify_cancel():
                    try:
                        result = fn(*args, **kwargs)
                    except BaseException as exc:  # noqa: BLE001 - handed to the waiting coroutine
                        future.set_exception(exc)
                    else:
                        future.set_result(result)
            finally:
                with self._guard:
                    self._running.discard(threading.current_thread())

        thread = threading.Thread(target=run, name="memories-worker", daemon=True)
        with self._guard:
            self._running.add(thread)
        thread.start()
        return future

    def running(self) -> int:
        with self._guard:
            return len(self._running)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if not wait:
            return
        deadline = time.monotonic() + self.grace_seconds
        with self._guard:
            threads = list(self._running)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
