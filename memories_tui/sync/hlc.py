"""A hybrid logical clock: wall-clock milliseconds plus a counter, moved forward by every stamp
seen from another device, so a revision made after seeing another always orders after it even
when the two devices' clocks disagree."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Stamp:
    ms: int
    counter: int


class Clock:
    def __init__(self, last: Stamp, now_ms: int | None = None) -> None:
        self.last = last
        self._now = now_ms  # tests pin the wall clock; None reads it

    def _wall(self) -> int:
        return self._now if self._now is not None else time.time_ns() // 1_000_000

    def tick(self) -> Stamp:
        """A stamp for a local change: later than every stamp made or seen here."""
        wall = self._wall()
        self.last = Stamp(wall, 0) if wall > self.last.ms else Stamp(self.last.ms, self.last.counter + 1)
        return self.last

    def receive(self, seen: Stamp) -> None:
        if seen > self.last:
            self.last = seen
