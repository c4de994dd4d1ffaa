"""Progress and report values of a model install, and the file helpers the installer uses
(hashing with cancel, atomic writes, directory fsync, safe manifest paths)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..errors import CancelledError, ModelError
from ..i18n import msg
from ..serial import Jsonable, json_meta
from .manifest import ModelFile

PROGRESS_INTERVAL_SECONDS = 0.1  # at most ~10 progress callbacks per second


@dataclass
class FileProgress(Jsonable):
    path: str
    bytes_done: int
    bytes_total: int
    state: str  # pending | downloading | verifying | downloaded | reused | failed


@dataclass
class InstallProgress(Jsonable):
    files: list[FileProgress]
    bytes_done: int
    bytes_total: int
    rate_bps: float
    eta_seconds: float | None
    current: str | None


@dataclass
class FileResult(Jsonable):
    path: str
    bytes: int
    sha256: str
    status: str  # downloaded | reused | failed
    error: str | None = field(default=None, metadata=json_meta(omit=lambda f: f.error is None))


@dataclass
class InstallReport(Jsonable):
    directory: Path
    files: list[FileResult]
    ok: bool


# --------------------------------------------------------------------------- progress


class ProgressTracker:
    def __init__(self, files: list[FileProgress], callback: Callable[[InstallProgress], None] | None) -> None:
        self.files = files
        self.callback = callback
        self.current: str | None = None
        self.session_bytes = 0  # bytes received over the network in this run
        self._last_emit = float("-inf")
        now = time.monotonic()
        self._samples: deque[tuple[float, int]] = deque([(now, 0)])

    def emit(self, force: bool = False) -> None:
        if self.callback is None:
            return
        now = time.monotonic()
        if not force and now - self._last_emit < PROGRESS_INTERVAL_SECONDS:
            return
        self._last_emit = now
        self._samples.append((now, self.session_bytes))
        while len(self._samples) > 2 and now - self._samples[0][0] > 5.0:
            self._samples.popleft()
        t0, b0 = self._samples[0]
        rate = (self.session_bytes - b0) / (now - t0) if now - t0 > 0 else 0.0
        done = sum(f.bytes_done for f in self.files)
        total = sum(f.bytes_total for f in self.files)
        remaining = max(total - done, 0)
        eta = 0.0 if remaining == 0 else (remaining / rate if rate > 0 else None)
        self.callback(InstallProgress(
            files=[dataclasses.replace(f) for f in self.files],
            bytes_done=done, bytes_total=total, rate_bps=rate, eta_seconds=eta, current=self.current,
        ))


# --------------------------------------------------------------------------- helpers


def check_manifest_path(path: str) -> None:
    p = PurePosixPath(path)
    if not path or "\\" in path or p.is_absolute() or any(part in ("..", ".", "") for part in path.split("/")):
        raise ModelError(msg("Manifest path {path!r} is not a safe relative path.", path=path))


def sha256_file(path: Path, cancel: threading.Event | None) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while True:
            block = f.read(1 << 20)
            if not block:
                break
            h.update(block)
            if cancel is not None and cancel.is_set():
                raise CancelledError(msg("Model install cancelled; run it again to resume (partial files are "
                                         "kept)."))
    return h.hexdigest()


def write_text_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def mismatch_message(mf: ModelFile, final: Path, got: str) -> str:
    return (
        f"the existing file {final} does not match the pinned SHA-256 (expected {mf.sha256}, "
        f"found {got}); it was left untouched. Move it away (or delete it) and run model-install again, "
        "or point [rag] local_model_dir at another folder."
    )


def cancelled_error() -> CancelledError:
    return CancelledError(msg("Model install cancelled; run it again to resume (partial files are kept)."))
