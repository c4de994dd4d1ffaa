"""Progress of long CLI work (ingest, rag index, model-install, batch search) on stderr.

On a terminal: a `rich.progress` bar with counts or bytes, rate and ETA. Otherwise (a pipe, a
log file, CI): plain lines, at most two a second plus the last one. Never on stdout, so
`--json` output and piped results stay clean; nothing at all with `--json`.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

from .output import clean

if TYPE_CHECKING:  # rich loads only when a bar is drawn on a terminal (~0.1-0.3 s of every CLI start otherwise)
    from rich.progress import Progress, TaskID

PLAIN_INTERVAL_SECONDS = 0.5
BYTES = "bytes"  # the unit that shows MiB and MiB/s; any other unit is the word shown beside a count


class ProgressReport:
    """`with ProgressReport(_("Embedding"), unit=_("chunks"), enabled=not json) as bar: bar.update(done, total)`."""

    def __init__(self, label: str, *, unit: str = "items", enabled: bool = True, stream: TextIO | None = None) -> None:
        self.label = label
        self.unit = unit  # BYTES shows MiB and MiB/s; anything else counts items
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.rich = enabled and self.stream.isatty()
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._last_plain = float("-inf")
        self._last: tuple[int, int, str] | None = None
        self._printed: tuple[int, int, str] | None = None  # the state the last plain line showed
        self._started = time.monotonic()

    def __enter__(self) -> ProgressReport:
        if self.rich:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )

            columns = [TextColumn("{task.description}"), BarColumn(),
                       DownloadColumn(binary_units=True) if self.unit == BYTES else MofNCompleteColumn(),
                       TransferSpeedColumn() if self.unit == BYTES else TextColumn(f"{self.unit}"),
                       TimeRemainingColumn(), TextColumn("{task.fields[detail]}", style="dim")]
            self._progress = Progress(*columns, console=Console(file=self.stream), transient=False,
                                      redirect_stdout=False, redirect_stderr=False)  # results stay on stdout
            self._progress.start()
            self._task = self._progress.add_task(self.label, total=None, detail="")
        return self

    def update(self, done: int, total: int | None, detail: str = "") -> None:
        if not self.enabled:
            return
        detail = clean(detail)
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=done, total=total, detail=detail)
            return
        self._last = (done, total or 0, detail)
        now = time.monotonic()
        if now - self._last_plain >= PLAIN_INTERVAL_SECONDS:
            self._last_plain = now
            self._print_plain()

    def _print_plain(self) -> None:
        if self._last is None:
            return
        done, total, detail = self._printed = self._last
        if self.unit == BYTES:
            elapsed = max(time.monotonic() - self._started, 1e-6)
            amount = f"{done / 2**20:,.1f}/{total / 2**20:,.1f} MiB, {done / elapsed / 2**20:,.2f} MiB/s"
        else:
            amount = f"{done:,}/{total:,} {self.unit}" if total else f"{done:,} {self.unit}"
        print(f"{self.label}: {amount}" + (f" {detail}" if detail else ""), file=self.stream, flush=True)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.stop()
        elif self.enabled and self._last is not None and self._last != self._printed:
            self._print_plain()  # the final state, unless the last line already showed it
