"""`vault export`: one Markdown file per current record, to leave with your data.

Each file is the record's front matter (id, revision, kind, title, tags, created, updated and
the source file name when there is one; frontmatter.py) followed by its body, byte for byte,
so `rag ingest` of the folder gives the same searchable text. Names come from titles, made
safe on every OS and unique even on case-insensitive file systems (filenames.py). Excluded
kinds are written only when asked (`private/`, `credential/`, and `assets/` holding each asset
as its own file), never by default. A folder that is not empty is refused unless `force`, and
even then no existing file is ever replaced: a name that is already taken is an error before
anything is written. Files are written under hidden temporary names and linked into place.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import CancelledError, ErrorCode, InputRefusedError, VaultError
from ..filenames import name_key, safe_stem, unique_name
from ..files import make_private_folder
from ..frontmatter import Value, render
from ..i18n import msg
from ..serial import Jsonable, json_meta

if TYPE_CHECKING:
    from ..vault.records import Record
    from .context import VaultContext

ExportProgressFn = Callable[[int, int], None]  # (files written, files in all)
EXCLUDED_FOLDERS = {"private": "private", "credential": "credential", "asset": "assets"}


@dataclass(frozen=True)
class ExportedFile(Jsonable):
    path: str = field(metadata=json_meta(name="file"))  # relative to the export folder, "/" separators
    id: str
    revision: int
    kind: str


@dataclass(frozen=True)
class ExportReport(Jsonable):
    vault_id: str
    name: str
    folder: Path
    files: list[ExportedFile]
    excluded_skipped: int  # private/credential/asset records left out (no --include-excluded)
    seconds: float = field(default=0.0, metadata=json_meta(round=3))
    counts: dict[str, int] = field(default_factory=dict)


def export_vault(context: VaultContext, folder: Path, *, include_excluded: bool = False, force: bool = False,
                 progress: ExportProgressFn | None = None, cancel: threading.Event | None = None) -> ExportReport:
    started = time.perf_counter()
    vault_id = context.vault_id
    records = sorted(context.records().values(), key=lambda r: (r.created, r.id))
    wanted = [r for r in records if include_excluded or r.kind not in EXCLUDED_FOLDERS]
    folder = Path(folder).expanduser()
    made = not folder.exists()
    existing = _prepare(folder, force)
    plan = _plan(wanted)
    clashes = sorted(rel for rel, _ in plan if name_key(rel) in existing)
    if clashes:
        shown = ", ".join(clashes[:5]) + (f" and {len(clashes) - 5} more" if len(clashes) > 5 else "")
        raise InputRefusedError(msg("{folder} already holds files with the names this export needs ({shown}); "
                                    "nothing was written. Export into an empty folder, or move those files.",
                                    folder=folder, shown=shown),
                                code=ErrorCode.EXPORT_NAME_COLLISION)
    files: list[ExportedFile] = []
    try:
        for n, (rel, record) in enumerate(plan, 1):
            if cancel is not None and cancel.is_set():
                raise CancelledError(msg("Export cancelled after {done} of {total} files; the files it wrote were "
                                         "removed.", done=n - 1, total=len(plan)))
            _write_new(folder / rel, _content(record))
            files.append(ExportedFile(rel, record.id, record.revision, record.kind))
            if progress is not None:
                progress(n, len(plan))
    except BaseException:
        _take_back(folder, [f.path for f in files], made)
        raise
    counts: dict[str, int] = {}
    for item in files:
        counts[item.kind] = counts.get(item.kind, 0) + 1
    return ExportReport(vault_id, context.vault.name, folder, files, len(records) - len(wanted),
                        time.perf_counter() - started, counts)


def _take_back(folder: Path, written: list[str], made: bool) -> None:
    """A failed or cancelled export leaves the folder as it found it: no half an export of
    plain-text notes. Only files this export created go (it never replaced one), then the
    subfolders it made and the folder itself when it made it, if they are empty."""
    for rel in written:
        with contextlib.suppress(OSError):
            (folder / rel).unlink()
    for sub in sorted({str(Path(rel).parent) for rel in written if "/" in rel}, reverse=True):
        with contextlib.suppress(OSError):
            (folder / sub).rmdir()
    if made:
        with contextlib.suppress(OSError):
            folder.rmdir()


def _prepare(folder: Path, force: bool) -> set[str]:
    """Create the folder (0700) or check an existing one; the name keys of what it holds."""
    try:
        if make_private_folder(
                folder, is_a_file=msg("{folder} is a file, not a folder; choose a folder for the export.", folder=folder),
                inside_a_file=msg("{folder} lies inside a file; choose a folder for the export.", folder=folder)):
            return set()
    except OSError as exc:
        raise VaultError(msg("Cannot create {folder}: {strerror}.", folder=folder, strerror=exc.strerror), code=ErrorCode.FOLDER_UNWRITABLE) from None
    try:
        present = [p for p in folder.rglob("*") if p.is_file() or p.is_symlink()]
        anything = any(folder.iterdir())
    except OSError as exc:
        raise VaultError(msg("Cannot read {folder}: {strerror}.", folder=folder, strerror=exc.strerror), code=ErrorCode.FOLDER_UNWRITABLE) from None
    if anything and not force:
        raise InputRefusedError(msg("{folder} is not empty; export into an empty folder, or add --force to write "
                                    "beside what is there (no existing file is ever replaced).", folder=folder), code=ErrorCode.FOLDER_NOT_EMPTY)
    return {name_key(p.relative_to(folder).as_posix()) for p in present}


def _plan(records: list[Record]) -> list[tuple[str, Record]]:
    """(relative path, record) for every file, names unique per folder (case-insensitively)."""
    taken: dict[str, set[str]] = {}
    plan: list[tuple[str, Record]] = []
    for record in records:
        sub = EXCLUDED_FOLDERS.get(record.kind, "")
        used = taken.setdefault(sub, set())
        if record.kind == "asset":  # the file under its own name (an extension only if it is a plain one)
            source = record.metadata.get("source")
            stem, ext = os.path.splitext(source if isinstance(source, str) and source else record.title)
            ext = ext if re.fullmatch(r"\.[A-Za-z0-9]{1,12}", ext) else ""
            name = unique_name(safe_stem(stem, fallback="asset"), ext, used)
        else:
            name = unique_name(safe_stem(record.title), ".md", used)
        plan.append((f"{sub}/{name}" if sub else name, record))
    return plan


def _content(record: Record) -> bytes:
    if record.kind == "asset":
        return record.data or b""
    fields: dict[str, Value] = {"id": record.id, "revision": record.revision, "kind": record.kind,
                                 "title": record.title, "tags": list(record.tags), "created": record.created,
                                 "updated": record.updated}
    source = record.metadata.get("source") if isinstance(record.metadata, dict) else None
    if isinstance(source, str) and source:
        fields["source"] = source
    return (render(fields) + record.body).encode("utf-8")


def _write_new(path: Path, data: bytes) -> None:
    """Write a new 0600 file at `path`; never replaces one (it is linked into place)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, path)
    except FileExistsError:
        raise InputRefusedError(msg("{path} appeared while exporting; it was left as it is.", path=path),
                                code=ErrorCode.EXPORT_NAME_COLLISION) from None
    except OSError as exc:
        from ..vault.filecopy import write_error

        raise write_error(path, exc) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
