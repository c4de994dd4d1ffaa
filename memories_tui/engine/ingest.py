"""`rag ingest`: read and check every file first, then write all accepted files at once.

A file already imported from the same path with the same bytes and title is `unchanged`;
the same bytes and title from another path is the same card (found by hash); a changed
file at a known path gets a new revision. All writes go in one transaction, so a batch is
imported whole or not at all (see sources.py for what is refused and why). With `recursive`,
a folder stands for the text and Markdown files in its tree (folders.py); files there that
cannot be ingested are reported `skipped` with their reason instead of refusing the batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import CancelledError, ErrorCode, InputRefusedError, LimitError, UsageError
from ..i18n import msg
from ..vault.records import NewRecord, Record, RecordUpdate
from ..vocabulary import IngestStatus
from .fits import FitCheck, count_chunks, fitting
from .folders import refusal_reason, scan_folder, shown
from .sources import SourceFile, read_source
from .types import IngestProgress, IngestResult

if TYPE_CHECKING:
    from ..vault.store import UnlockedVault

IngestProgressFn = Callable[[IngestProgress], None]
_Add = tuple[int, SourceFile, dict[str, object]]  # (index in the sources, file, its metadata)
_Update = tuple[int, SourceFile, Record, dict[str, object]]  # … and the card it gives a new revision
MAX_BATCH_CHARS = 64 * 1024 * 1024  # read before anything is written: bounds the memory one batch holds


def ingest_files(vault: UnlockedVault, current: dict[str, Record], paths: Sequence[Path], *,
                 title: str | None = None, recursive: bool = False, progress: IngestProgressFn | None = None,
                 cancel: threading.Event | None = None, check_fits: FitCheck | None = None,
                 base: Path | None = None) -> list[IngestResult]:
    """Import text files as knowledge cards into `vault`, whose latest records are `current`.
    With `recursive`, a folder in `paths` stands for the text and Markdown files in its tree: a
    file found there that cannot be ingested is `skipped` with its reason (a file named directly
    is still refused). `check_fits` runs before anything is written (a batch over the limits
    would leave a vault no search can load). Relative paths are found in `base` when given (the
    caller's working folder)."""
    if not paths:
        raise UsageError(msg("Name at least one file to ingest."))
    if recursive and title is not None:
        raise UsageError(msg("--title names one card; with --recursive each file is titled by its first heading "
                             "or its file name."))
    wanted, skipped = _expand(paths, recursive, base)
    sources: list[SourceFile] = []
    optional: set[int] = set()  # sources found by walking a folder: left out (skipped) when the vault is full
    read_chars = 0
    for n, (path, found_in_folder) in enumerate(wanted, 1):
        _check_cancel(cancel)
        try:
            sources.append(read_source(path, title, base=base))
            if found_in_folder:
                optional.add(len(sources) - 1)
        except InputRefusedError as exc:
            if not found_in_folder:
                raise
            skipped.append((path, refusal_reason(exc, path, base)))
        else:
            read_chars += len(sources[-1].body)
            if read_chars > MAX_BATCH_CHARS:
                raise LimitError(msg("These files hold more than {limit:,} characters of text, more than a vault's "
                                     "index takes; ingest fewer files. Nothing was written.", limit=MAX_BATCH_CHARS))
        if progress:
            progress(IngestProgress("read", n, len(wanted), shown(path)))
    results = _write(vault, current, sources, check_fits, cancel, optional)
    if progress:
        progress(IngestProgress("written", len(wanted), len(wanted)))
    return results + [IngestResult(shown(p), None, None, "skipped", 0, "", reason)
                      for p, reason in sorted(skipped, key=lambda item: str(item[0]))]


def _expand(paths: Sequence[Path], recursive: bool,
            base: Path | None) -> tuple[list[tuple[Path, bool]], list[tuple[Path, str]]]:
    """(file, found by walking a folder) to read, and the files skipped by name."""
    wanted: list[tuple[Path, bool]] = []
    skipped: list[tuple[Path, str]] = []
    for path in map(Path, paths):
        if not (path if base is None else base / path).is_dir():
            wanted.append((path, False))
        elif recursive:
            scan = scan_folder(path, base)
            wanted += [(p, True) for p in scan.readable]
            skipped += scan.skipped
        else:
            raise InputRefusedError(msg("{path} is a folder; add --recursive to ingest the text and Markdown files in "
                                        "it.", path=shown(path)), code=ErrorCode.UNSUPPORTED_FILE)
    return wanted, skipped


def _write(vault: UnlockedVault, current: dict[str, Record], sources: list[SourceFile],
           check_fits: FitCheck | None, cancel: threading.Event | None, optional: set[int]) -> list[IngestResult]:
    """Write every accepted file in one transaction; results in the order of `sources`. When
    the vault's limits do not take them all, files named on their own must fit (else nothing is
    written); of the `optional` files found in folders, as many as fit are written and the rest
    skipped with the reason."""
    existing = [r for r in current.values() if r.kind == "card"]
    by_path = {r.metadata.get("source_path"): r for r in existing if r.metadata.get("source_path")}
    by_hash = {r.metadata.get("sha256"): r for r in existing if r.metadata.get("sha256")}
    to_add: list[_Add] = []
    to_update: list[_Update] = []
    results: dict[int, IngestResult] = {}
    seen: set[tuple[str, str]] = set()
    for i, src in enumerate(sources):
        source_path = str(src.resolved)
        meta: dict[str, object] = {"source_path": source_path, "sha256": src.sha256}
        name = src.source if src.exported else src.path.name  # an export keeps the original's (or none)
        if name:
            meta = {"source": name, **meta}
        old = by_path.get(source_path)
        if old is None and src.sha256 in by_hash and by_hash[src.sha256].title == src.title:
            old = by_hash[src.sha256]
            meta = dict(old.metadata)
        if old is not None and old.metadata.get("sha256") == src.sha256 and old.title == src.title:
            results[i] = IngestResult(str(src.path), old.id, old.revision, "unchanged", count_chunks(old.body),
                                      old.title)
        elif (src.sha256, source_path) in seen:
            results[i] = IngestResult(str(src.path), None, None, "unchanged", 0, src.title)
        elif old is not None:
            to_update.append((i, src, old, meta))
        else:
            to_add.append((i, src, meta))
        seen.add((src.sha256, source_path))
    _check_cancel(cancel)
    if check_fits is not None and (to_add or to_update):
        to_add, to_update = _fitting(check_fits, sources, to_add, to_update, optional, results)
    added = (vault.add_many([NewRecord("card", s.title, s.body, tags=s.tags, metadata=m) for _, s, m in to_add])
             if to_add else [])
    updated = (vault.update_many([RecordUpdate(old.id, title=s.title, body=s.body, metadata=m,
                                               tags=s.tags if s.tags else None)
                                  for _, s, old, m in to_update]) if to_update else [])
    created: IngestStatus = "created"
    written = [(a[0], a[1], r, created) for a, r in zip(to_add, added, strict=True)]
    written += [(u[0], u[1], r, "updated") for u, r in zip(to_update, updated, strict=True)]
    for i, src, record, status in written:
        results[i] = IngestResult(str(src.path), record.id, record.revision, status, count_chunks(record.body),
                                  record.title)
    return [results[i] for i in range(len(sources))]


def _fitting(check_fits: FitCheck, sources: list[SourceFile], to_add: list[_Add], to_update: list[_Update],
             optional: set[int], results: dict[int, IngestResult]) -> tuple[list[_Add], list[_Update]]:
    """What of the batch is written: see `_write`."""
    replaces: list[tuple[int, Record | None]] = [(u[0], u[2]) for u in to_update] + [(a[0], None) for a in to_add]
    order = sorted(replaces, key=lambda x: (x[0] in optional, x[1] is None))  # named, then changed, then new
    room, why = fitting(check_fits, [(sources[i].title, sources[i].body, old) for i, old in order])
    if any(i not in optional for i, _ in order[room:]):  # a file named on its own: refused whole, as before
        check_fits([(s.title, s.body) for _, s, _ in to_add] + [(s.title, s.body) for _, s, _, _ in to_update],
                   [old for _, _, old, _ in to_update])
    for i, _ in order[room:]:
        results[i] = IngestResult(shown(sources[i].path), None, None, "skipped", 0, "", why)
    kept = {i for i, _ in order[:room]}
    return [a for a in to_add if a[0] in kept], [u for u in to_update if u[0] in kept]


def _check_cancel(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise CancelledError(msg("Ingest cancelled; nothing was written."))


def read_text_file(path: Path) -> str:
    """A record body from a file, with the same checks and refusals as ingest."""
    return read_source(path).body
