"""`memories import FORMAT VAULT PATH`: other apps' exports as cards (see common.py for how
importing twice stays idempotent, and each module for its app's format)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import UsageError
from ...i18n import msg
from .common import ImportedAsset, ImportedNote, ImportReport, Skipped, Writer, shown_name

if TYPE_CHECKING:
    from ...vault.records import Record
    from ...vault.store import UnlockedVault
    from ..fits import FitCheck
    from ..types import IngestProgress

FORMATS = ("obsidian", "notion", "evernote", "joplin", "bear")


def read_export(app: str, path: Path, assets: bool = False) -> Iterable[ImportedNote | ImportedAsset | Skipped]:
    """The notes of an export, streamed where the format allows (Evernote), else read whole."""
    if app == "obsidian":
        from .obsidian import read_obsidian

        return list(read_obsidian(path, assets))  # whole: a [[link]] may name a note read later
    if app == "notion":
        from .notion import read_notion

        return list(read_notion(path))
    if app == "joplin":
        from .joplin import read_joplin

        return list(read_joplin(path))
    if app == "bear":
        from .bear import read_bear

        return list(read_bear(path))
    if app == "evernote":
        from .enex import read_enex

        return read_enex(path)
    raise UsageError(msg("Unknown import format {name}; use one of {names}.", name=app, names=", ".join(FORMATS)))


def run_import(vault: UnlockedVault, records: Callable[[], dict[str, Record]], app: str, path: Path, *,
               dry_run: bool = False, progress: Callable[[IngestProgress], None] | None = None,
               cancel: threading.Event | None = None, check_fits: FitCheck | None = None,
               assets: bool = False) -> ImportReport:
    """`assets`: keep attachments as encrypted asset records (Obsidian), else list them as skipped."""
    notes = read_export(app, path, assets)
    origin = str(path.expanduser().resolve()) if path.is_dir() else ""
    writer = Writer(vault, records(), app, dry_run=dry_run, check_fits=check_fits, origin=origin)
    if isinstance(notes, list):
        writer.reserve(notes)
    writer.run(notes, progress, cancel)
    return ImportReport(app, shown_name(path), dry_run, writer.items)


__all__ = ["FORMATS", "ImportReport", "read_export", "run_import"]
