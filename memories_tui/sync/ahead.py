"""Fetching a pull's objects a few at a time, each handed over in the order it is read.

A remote target answers each request after a round trip (tens of milliseconds to a cloud
store), so a pull that asks for every head, then every bundle, one after the other waits for
all of those trips in a row. A pull asks for the next few objects while it opens and checks
(or commits) the current one; what it reads, and in what order, is unchanged: an object is
used only when the pull comes to it, and one it never comes to (it read a snapshot instead)
is let go. Small objects (heads, the bundles of a few edits) are asked for four at a time;
once a large one comes (the bundles of a first push, megabytes each), two are fetched ahead:
over a real link the next bundles download while this one is opened and committed (a join of
10,000 records over a modelled 100 Mbit/s link took the download plus the vault work, 1.8x the
download, and now 1.2x; one ahead gave 1.5x, as a commit of a few megabytes outlasts one
download), and no more, as a large object waiting costs its size in memory (two took a
30,000-record join from 62 to 72 MB at its peak; four, to 91). Each request runs in a daemon
thread of its own (waiting.py), so a pull that stops (ctrl+c, a lock, a failure) never waits for
the reads it let go. A read ahead of its turn stops at bounds.AHEAD_BYTES: a larger object is
read when its turn comes, so a target cannot make a pull hold several of the largest at once.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from concurrent.futures import Future
from typing import Protocol, cast

from .bounds import AHEAD_BYTES, ObjectTooLarge
from .waiting import in_background

AHEAD = 4  # requests in flight at once, for small objects
LARGE = 256 << 10  # an object this large or larger: the next ones are fetched LARGE_AHEAD at a time
LARGE_AHEAD = 2
_IN_TURN = object()  # too large to hold ahead of its turn: read when taken


class Getter(Protocol):
    def __call__(self, name: str, limit: int | None = None) -> bytes | None: ...


class Ahead:
    """Gets objects with `get` in up to AHEAD threads; `take` returns each when its turn comes."""

    def __init__(self, get: Getter) -> None:
        self._get = get
        self._depth = AHEAD
        self._pending: dict[str, Future[object]] = {}
        self._queue: list[str] = []

    def want(self, names: Iterable[str], depth: int | None = AHEAD) -> None:
        """These will be read, in this order (up to `depth` are asked for at once, LARGE_AHEAD
        once a large one comes; None: as many as after the last object taken)."""
        self._queue += [name for name in names if name not in self._pending]
        if depth is not None:
            self._depth = depth
        self._fill()

    def take(self, name: str) -> bytes | None:
        """The object (None: not in the target); a failure to get it is raised here."""
        future = self._pending.pop(name, None)
        if name in self._queue:
            self._queue.remove(name)
        got = future.result() if future is not None else _IN_TURN
        blob = cast("bytes | None", self._get(name) if got is _IN_TURN else got)
        self._depth = LARGE_AHEAD if blob is not None and len(blob) >= LARGE else AHEAD
        self._fill()
        return blob

    def drop(self, names: Iterable[str]) -> None:
        """These will not be read after all (a snapshot stood in for them)."""
        for name in names:
            if name in self._queue:
                self._queue.remove(name)
            self._pending.pop(name, None)  # its answer is dropped when it comes
        self._fill()

    def close(self) -> None:
        """Let go of what was asked for and not taken (not waiting for it)."""
        self._queue.clear()
        self._pending.clear()

    def __enter__(self) -> Ahead:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _fill(self) -> None:
        while self._queue and len(self._pending) < self._depth:
            name = self._queue.pop(0)
            self._pending[name] = in_background(functools.partial(self._ahead, name), "sync-fetch")

    def _ahead(self, name: str) -> object:
        try:
            return self._get(name, AHEAD_BYTES)
        except ObjectTooLarge:
            return _IN_TURN  # its own bound is checked when it is read in turn
