"""What installing the pinned model files has in common, wherever the bytes come from.

A download (install.py) and a copy from a folder (install_local.py) follow the same rules per
file: a final file that exists already is only hashed (a match is reused, a mismatch fails that
file and leaves it untouched); new bytes go to `<file>.part`, are SHA-256-checked, and are
moved into place without ever replacing a file that appeared meanwhile. `FileInstaller` holds
those rules; a source is one subclass with `fetch` (fill the `.part`, return its digest).
`run_install` writes the terms notice and model card, then installs every file and reports.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path

from ..errors import CancelledError, MemoriesError, ModelError
from ..files import sync_folder
from ..i18n import msg
from .install_files import (
    FileProgress,
    FileResult,
    InstallProgress,
    InstallReport,
    ProgressTracker,
    cancelled_error,
    check_manifest_path,
    mismatch_message,
    sha256_file,
    write_text_atomic,
)
from .manifest import MODEL_CARD_FILENAME, NOTICE_FILENAME, ModelFile, ModelManifest, model_card_text, notice_text


class FileFailed(Exception):
    """This file cannot be installed in this run; the message is for the user."""


class FileInstaller(ABC):
    """Installs one manifest file at a time into `target` (see the module docstring)."""

    placed: str = "installed"  # the status of a file this source placed ("downloaded", "copied")
    verb: str = "write"  # what failed when the disk refuses ("cannot write …")

    def __init__(self, target: Path, cancel: threading.Event | None, tracker: ProgressTracker) -> None:
        self.target = target
        self.cancel = cancel
        self.tracker = tracker

    @abstractmethod
    def fetch(self, mf: ModelFile, fp: FileProgress, part: Path) -> str:
        """Fill `part` with the file's bytes (resuming what is there if the source can) and
        return their SHA-256, checked against the manifest; FileFailed when it cannot."""

    def close(self) -> None:
        """Release what the source holds open (connections)."""
        return None

    def install_one(self, mf: ModelFile, fp: FileProgress) -> FileResult:
        final = self.target / mf.path
        part = final.with_name(final.name + ".part")
        self.tracker.current = mf.path
        try:
            if final.exists() or final.is_symlink():
                return self._verify_existing(mf, fp, final)
            final.parent.mkdir(parents=True, exist_ok=True)
            digest = self.fetch(mf, fp, part)
            return self._place(mf, fp, part, final, digest)
        except FileFailed as exc:
            return self._failed(mf, fp, str(exc))
        except CancelledError:
            raise
        except MemoriesError as exc:
            return self._failed(mf, fp, exc.message)
        except OSError as exc:
            self.after_os_error(part)
            return self._failed(mf, fp, f"cannot {self.verb} {exc.filename or final}: "
                                        f"{exc.strerror or exc}.")

    def after_os_error(self, part: Path) -> None:
        """What to do with a `.part` when the disk failed: a download keeps it to resume."""
        return None

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise cancelled_error()

    def _failed(self, mf: ModelFile, fp: FileProgress, message: str, sha: str = "") -> FileResult:
        fp.state = "failed"
        self.tracker.emit(force=True)
        return FileResult(mf.path, fp.bytes_done, sha, "failed", message)

    def _verify_existing(self, mf: ModelFile, fp: FileProgress, final: Path) -> FileResult:
        fp.state = "verifying"
        self.tracker.emit(force=True)
        if not final.is_file():
            raise FileFailed(
                f"{final} exists but is not a regular file; it was left untouched. Move it away "
                "and run model-install again, or point [rag] local_model_dir at another folder."
            )
        size = final.stat().st_size
        digest = sha256_file(final, self.cancel)
        if size != mf.bytes or digest != mf.sha256:
            fp.state = "failed"
            self.tracker.emit(force=True)
            return FileResult(mf.path, size, digest, "failed", mismatch_message(mf, final, digest))
        fp.bytes_done = mf.bytes
        fp.state = "reused"
        self.tracker.emit(force=True)
        return FileResult(mf.path, mf.bytes, digest, "reused")

    def _place(self, mf: ModelFile, fp: FileProgress, part: Path, final: Path, digest: str) -> FileResult:
        try:
            os.link(part, final)
        except FileExistsError:
            return self._appeared(mf, fp, part, final)
        except OSError:
            if final.exists() or final.is_symlink():
                return self._appeared(mf, fp, part, final)
            os.replace(part, final)  # no hard links here; the name was free a moment ago
        else:
            part.unlink()
        sync_folder(final.parent)
        fp.bytes_done = mf.bytes
        fp.state = self.placed
        self.tracker.emit(force=True)
        return FileResult(mf.path, mf.bytes, digest, self.placed)

    def _appeared(self, mf: ModelFile, fp: FileProgress, part: Path, final: Path) -> FileResult:
        """Someone created the final file while we fetched ours: never replace it."""
        result = self._verify_existing(mf, fp, final)
        if result.status == "reused":
            part.unlink(missing_ok=True)
        return result


def run_install(target: Path, manifest: ModelManifest, make: Callable[[ProgressTracker], FileInstaller], *,
                progress: Callable[[InstallProgress], None] | None,
                cancel: threading.Event | None) -> InstallReport:
    """Write the terms notice and model card into `target`, then install every manifest file
    with the installer `make` builds; per-file problems are in the report, never raised.
    Raises ModelError when `target` cannot be written, CancelledError when `cancel` is set."""
    for mf in manifest.files:
        check_manifest_path(mf.path)
    try:
        target.mkdir(parents=True, exist_ok=True)
        write_text_atomic(target / NOTICE_FILENAME, notice_text(manifest))
        write_text_atomic(target / MODEL_CARD_FILENAME, model_card_text(manifest))
    except OSError as exc:
        raise ModelError(msg("Cannot write into the model folder {target}: {problem}.",
                             target=target, problem=exc.strerror or exc)) from None
    files = [FileProgress(mf.path, 0, mf.bytes, "pending") for mf in manifest.files]
    tracker = ProgressTracker(files, progress)
    installer = make(tracker)
    results: list[FileResult] = []
    try:
        tracker.emit(force=True)
        for mf, fp in zip(manifest.files, files, strict=True):
            installer.check_cancel()
            results.append(installer.install_one(mf, fp))
    finally:
        installer.close()
    tracker.current = None
    tracker.emit(force=True)
    ok = all(r.status in (installer.placed, "reused") for r in results)
    return InstallReport(directory=target, files=results, ok=ok)
