"""`rag model-install --from DIR`: install the pinned model files from a local folder.

For machines that cannot reach the download host: fetch the files elsewhere, carry the folder
over, install from it. The same rules as a download apply: each file's size and SHA-256 must
match the pinned manifest (checked while copying), a final file that exists already is only
verified (reused, or reported and left untouched), and nothing half-copied is ever placed.
A file may sit at its manifest path inside DIR (`onnx/model_q4.onnx`) or directly in DIR.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

from ..config import HttpSettings
from ..errors import CancelledError, MemoriesError, ModelError
from .install import _FileFailed, _Installer
from .install_files import (
    FileProgress,
    FileResult,
    InstallProgress,
    InstallReport,
    ProgressTracker,
    cancelled_error,
    check_manifest_path,
    write_text_atomic,
)
from .manifest import (
    MODEL_CARD_FILENAME,
    NOTICE_FILENAME,
    PINNED,
    ModelFile,
    ModelManifest,
    model_card_text,
    notice_text,
)

_BLOCK = 1 << 20


class _FolderInstaller(_Installer):
    def __init__(self, target: Path, source: Path, cancel: threading.Event | None, tracker: ProgressTracker) -> None:
        super().__init__(target, "", HttpSettings(), cancel, tracker)
        self.source = source

    def find(self, mf: ModelFile) -> Path:
        for candidate in (self.source / mf.path, self.source / Path(mf.path).name):
            if candidate.is_file():
                return candidate
        raise _FileFailed(f"{mf.path}: not found in {self.source} (looked for {mf.path} and {Path(mf.path).name}).")

    def install_one(self, mf: ModelFile, fp: FileProgress) -> FileResult:
        final = self.target / mf.path
        part = final.with_name(final.name + ".part")
        self.tracker.current = mf.path
        try:
            if final.exists() or final.is_symlink():
                return self._verify_existing(mf, fp, final)
            final.parent.mkdir(parents=True, exist_ok=True)
            digest = self._copy(mf, fp, self.find(mf), part)
            result = self._place(mf, fp, part, final, digest)
            if result.status == "downloaded":
                fp.state = "copied"
                self.tracker.emit(force=True)
                result = dataclasses.replace(result, status="copied")
            return result
        except _FileFailed as exc:
            return self._failed(mf, fp, str(exc))
        except CancelledError:
            raise
        except MemoriesError as exc:
            return self._failed(mf, fp, f"{mf.path}: {exc.message}")
        except OSError as exc:
            part.unlink(missing_ok=True)
            return self._failed(mf, fp, f"{mf.path}: cannot copy {exc.filename or final}: {exc.strerror or exc}.")

    def _copy(self, mf: ModelFile, fp: FileProgress, src: Path, part: Path) -> str:
        size = src.stat().st_size
        if size != mf.bytes:
            raise _FileFailed(f"{mf.path}: {src} has {size:,} bytes but the pinned file has {mf.bytes:,}; "
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
            raise _FileFailed(f"{mf.path}: {src} does not match the pinned SHA-256 (expected {mf.sha256}, found "
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
        raise ModelError(f"{source} is not a folder; give the folder that holds the downloaded model files.")
    for mf in manifest.files:
        check_manifest_path(mf.path)
    try:
        target.mkdir(parents=True, exist_ok=True)
        write_text_atomic(target / NOTICE_FILENAME, notice_text(manifest))
        write_text_atomic(target / MODEL_CARD_FILENAME, model_card_text(manifest))
    except OSError as exc:
        raise ModelError(f"Cannot write into the model folder {target}: {exc.strerror or exc}.") from None
    files = [FileProgress(mf.path, 0, mf.bytes, "pending") for mf in manifest.files]
    tracker = ProgressTracker(files, progress)
    installer = _FolderInstaller(target, source, cancel, tracker)
    results: list[FileResult] = []
    tracker.emit(force=True)
    for mf, fp in zip(manifest.files, files, strict=True):
        if cancel is not None and cancel.is_set():
            raise cancelled_error()
        results.append(installer.install_one(mf, fp))
    tracker.current = None
    tracker.emit(force=True)
    ok = all(r.status in ("copied", "reused") for r in results)
    return InstallReport(directory=target, files=results, ok=ok)
