"""Running a call in a thread of its own, to see how it ends while the test goes on (a call
that may hang: the test then joins it with a bound of its own)."""

from __future__ import annotations

import threading
from collections.abc import Callable


def in_a_thread(call: Callable[[], object]) -> tuple[threading.Thread, list[BaseException | None]]:
    """(the started daemon thread, a list that gets None when `call` returns, or what it raised)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome
