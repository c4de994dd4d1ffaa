"""`rag model-install --from DIR`: install the pinned model files from a local folder.

For machines that cannot reach the download host: fetch the files elsewhere, carry the folder
over, install from it. The same rules as a download apply: each file's size and SHA-256 must
match the pinned manifest (checked while copying), a final file that exists already is only
verified (reused, or reported and left untouched), and nothing half-copied is ever placed.
A file may sit at its manifest path inside DIR (`onnx/model_q4.onnx`) or directly in DIR.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

from ..errors import ModelError
from ..i18n import msg
from .install_base import FileFailed, FileInstaller, run_install
from .install_files import FileProgress, InstallProgress, InstallReport, ProgressTracker, cancelled_error
from .manifest import PINNED, ModelFile, ModelManifest

_BLOCK = 1 << 20


class FolderInstaller(FileInstaller):
    """Copies each file from a folder of already-downloaded files."""

    placed = "copied"
    verb = "copy"

    def __init__(self, target: Path, source: Path, cancel: threading.Event | None, tracker: ProgressTracker) -> None:
        super().__init__(target, cancel, tracker)
        self.source = source

    def find(self, mf: ModelFile) -> Path:
        for candidate in (self.source / mf.path, self.source / Path(mf.path).name):
            if candidate.is_file():
                return candidate
        folder = Path(mf.path).parent.as_posix()
        where = f": neither under {folder}/ nor at its top level" if folder != "." else ""
        raise FileFailed(f"not found in {self.source}{where}.")

    def after_os_error(self, part: Path) -> None:
        part.unlink(missing_ok=True)  # a copy starts over anyway: leave nothing half-copied

    def fetch(self, mf: ModelFile, fp: FileProgress, part: Path) -> str:
        src = self.find(mf)
        size = src.stat().st_size
        if size != mf.bytes:
            raise FileFailed(f"{src} has {size:,} bytes but the pinned file has {mf.bytes:,}; "
                             "it is not the pinned file. Nothing was installed for this file.")
        fp.state = "copying"
        fp.bytes_done = 0
        self.tracker.emit(force=True)
        digest = hashlib.sha256()
        with src.open("rb") as reader, part.open("wb") as writer:
            while block := reader.read(_BLOCK):
                if self.cancel is not None and self.cancel.is_set():
                    writer.close()
                    part.unlink(missing_ok=True)
                    raise cancelled_error()
                digest.update(block)
                writer.write(block)
                fp.bytes_done += len(block)
                self.tracker.session_bytes += len(block)
                self.tracker.emit()
            writer.flush()
            os.fsync(writer.fileno())
        got = digest.hexdigest()
        if got != mf.sha256:
            part.unlink(missing_ok=True)
            raise FileFailed(f"{src} does not match the pinned SHA-256 (expected {mf.sha256}, found "
                             f"{got}); nothing was installed for this file.")
        return got


def install_from_folder(
    target: Path,
    source: Path,
    *,
    progress: Callable[[InstallProgress], None] | None = None,
    cancel: threading.Event | None = None,
    manifest: ModelManifest = PINNED,
) -> InstallReport:
    """Install `manifest`'s files from `source` into `target`; per-file problems are in the report.

    Raises ModelError when `source` is not a folder or `target` cannot be written, and
    CancelledError when `cancel` is set (a half-copied file is removed, placed files stay)."""
    source, target = Path(source).expanduser(), Path(target)
    if not source.is_dir():
        raise ModelError(msg("{source} is not a folder; give the folder that holds the downloaded model files.",
                             source=source))
    return run_install(target, manifest, lambda tracker: FolderInstaller(target, source, cancel, tracker),
                       progress=progress, cancel=cancel)
