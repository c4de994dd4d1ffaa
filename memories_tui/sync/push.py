"""Uploading a sync's bundles while the next ones are made.

A first push of a large vault is many bundles. Each is committed to the vault's outbox, then
handed to one worker thread that puts it in the target while the sync reads, seals and commits
the next: the upload overlaps the vault work, and at most a bundle waiting and one uploading
are held besides the one being made (not the whole vault). The worker puts bundles in the
order given; the head goes last, after the worker is done (run.upload). The egress log entry
of the push is written before the first object may leave and grown before each further one,
so it never shows less than what left.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import replace
from datetime import UTC, datetime

from ..egress import SentChunk
from ..vault.egress_log import EgressEntry
from ..vault.store import UnlockedVault
from .sealing import bundle_name
from .targets import Target

_WAITING = 1  # bundles sealed and waiting for the worker (besides the one it uploads)


class Uploader:
    def __init__(self, vault: UnlockedVault, target: Target, device: str) -> None:
        self._vault, self._target, self._device = vault, target, device
        self._queue: queue.Queue[tuple[int, bytes] | None] = queue.Queue(maxsize=_WAITING)
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._logged: EgressEntry | None = None
        self.sent: list[int] = []  # bundles put, in order
        self.objects = self.bytes = 0  # what the egress entry announces

    def announce(self, objects: int, size: int) -> None:
        """Log `objects` more objects of `size` bytes in this push's egress entry, before they leave."""
        self.objects += objects
        self.bytes += size
        entry = EgressEntry(seq=0, time=now(), host=self._target.description, purpose="sync",
                            loopback=self._target.on_this_machine, chunks=tuple[SentChunk, ...](),
                            bytes_sent=self.bytes, objects=self.objects)
        if self._logged is None:
            self._logged = self._vault.egress.append(entry)
        else:
            self._logged = replace(entry, seq=self._logged.seq)
            self._vault.egress.rewrite(self._logged)

    def done(self) -> None:
        """Everything announced has left: the entry says so."""
        if self._logged is not None:
            self._vault.egress.rewrite(replace(self._logged, outcome="ok", attempts=1))

    def send(self, seq: int, blob: bytes) -> None:
        """Put bundle `seq` in the target soon (waits while another one is waiting)."""
        self.check()
        self.announce(1, len(blob))
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="sync-upload", daemon=True)
            self._thread.start()
        self._queue.put((seq, blob))

    @property
    def failed(self) -> bool:
        return self._error is not None

    def check(self) -> None:
        """Raise what made an upload fail, if one did (the bundles stay in the outbox for the next sync)."""
        if self._error is not None:
            raise self._error

    def finish(self) -> None:
        """Wait until every bundle sent is in the target; raise an upload's failure."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None
        self.check()

    def close(self) -> None:
        """Stop the worker whatever happened (after a failure elsewhere)."""
        if self._thread is not None:
            self._error = self._error or _Stopped()
            self.finish_quietly()

    def finish_quietly(self) -> None:
        try:
            self.finish()
        except BaseException:  # noqa: BLE001 - the failure that made the caller stop is the one raised
            pass

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if self._error is not None:
                continue  # an upload failed: the rest stay in the outbox for the next sync
            seq, blob = item
            try:
                self._target.put(bundle_name(self._device, seq), blob)
                self.sent.append(seq)
            except BaseException as exc:  # noqa: BLE001 - raised in the sync's own thread (check, finish)
                self._error = exc


class _Stopped(Exception):
    """The sync stopped for another reason: the worker drops what is still waiting."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
