"""`rag ingest DIR --recursive`: which files of a folder tree are read, and which are skipped.

Text and Markdown files (by name: .md, .markdown, .txt, … or no extension) are read and
checked like any ingested file; one that turns out not to be UTF-8 text (or has a name that
is not UTF-8) is skipped with its reason, not a reason to refuse the batch. Every other file
(images, PDFs, archives, programs) is skipped by name without being read. Dot-folders and
dot-files (`.git`, `.obsidian`, `.DS_Store`) are left out entirely; links to folders are not
followed (no loops). A link to a file is followed only when its target is inside the tree and
not in a dot-folder: `notes.md -> ~/.ssh/id_ed25519` is skipped with its reason, never read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputRefusedError
from ..i18n import N_

TEXT_SUFFIXES = frozenset({".md", ".markdown", ".mdown", ".mkd", ".txt", ".text", ""})
NOT_TEXT = N_("not a text or Markdown file ({suffix} files are not ingested)")  # front ends show it translated
# Past this many files the walk stops (the list alone would take hundreds of MB): what it found
# is taken, and the folder where it stopped is listed as skipped with TRUNCATED.
MAX_FOLDER_FILES = 500_000
TRUNCATED = N_("the folder holds more than 500,000 files; the walk stopped here and the files after this point "
               "were not looked at")


@dataclass(frozen=True)
class FolderScan:
    readable: list[Path]  # text and Markdown files, in a stable order, named under the folder as given
    skipped: list[tuple[Path, str]]  # (file, why it is not ingested)
    stats: dict[Path, os.stat_result] = field(default_factory=dict)  # readable files' stats, when asked
    truncated: bool = False  # the walk stopped at MAX_FOLDER_FILES: files it did not reach are not in here


class _Stop(Exception):
    """The walk reached MAX_FOLDER_FILES."""


def scan_folder(folder: Path, base: Path | None = None, *, with_stats: bool = False) -> FolderScan:
    """The files under `folder` to read, and those skipped by name, each with its reason. A
    relative `folder` is found in `base` when given; the paths returned start with `folder`
    as given, so results name files as the user's shell would. `with_stats` also keeps each
    readable file's stat from the walk (a sync that only compares size and time reads nothing else)."""
    where = folder if base is None else base / folder
    scan = FolderScan([], [], {})
    try:
        _walk(os.fspath(where), folder, Path(os.path.realpath(where)), scan, with_stats)
    except _Stop:
        return FolderScan(scan.readable, scan.skipped, scan.stats, truncated=True)
    return scan


def _walk(where: str, given: Path, tree: Path, scan: FolderScan, with_stats: bool) -> None:
    """One folder, then its sub-folders, each in name order (`os.scandir`: the kind of each
    entry comes with the listing, so a plain file costs no extra system call)."""
    try:
        with os.scandir(where) as listing:
            entries = sorted((e for e in listing if not e.name.startswith(".")), key=lambda e: e.name)
    except OSError:
        return  # a folder that cannot be listed (or vanished) adds nothing, as with `os.walk`
    folders = []
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            folders.append(entry)
            continue
        if entry.is_symlink() and _is_dir(entry.path):
            scan.skipped.append((given / entry.name, N_("a link to a folder; links are not followed")))
            continue
        path = given / entry.name
        suffix = suffix_of(entry.name)
        outside = _link_leaves(Path(entry.path), tree) if entry.is_symlink() else None
        if outside:
            scan.skipped.append((path, outside))
        elif suffix in TEXT_SUFFIXES:
            scan.readable.append(path)
            if with_stats:
                try:
                    scan.stats[path] = entry.stat()
                except OSError:
                    pass  # gone since the listing: the reader says so
        else:
            scan.skipped.append((path, not_text_reason(suffix)))
        if len(scan.readable) + len(scan.skipped) >= MAX_FOLDER_FILES:
            scan.skipped.append((given, TRUNCATED))
            raise _Stop
    for entry in folders:
        _walk(entry.path, given / entry.name, tree, scan, with_stats)


def suffix_of(name: str) -> str:
    """The name's suffix as `Path.suffix` gives it (`notes.` has none), lower case."""
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


def not_text_reason(suffix: str) -> str:
    return NOT_TEXT.format(suffix=shown(Path(suffix)))


def _is_dir(path: str) -> bool:
    try:
        return os.path.isdir(path)
    except OSError:
        return False


def _link_leaves(path: Path, tree: Path) -> str | None:
    """Why the link at `path` is not followed (its target is outside `tree` or hidden in it),
    or None when `path` is no link or one that stays in the tree."""
    if not path.is_symlink():
        return None
    target = Path(os.path.realpath(path))
    try:
        inside = target.relative_to(tree)
    except ValueError:
        return N_("a link to a file outside the folder; links that leave the folder are not followed")
    if any(part.startswith(".") for part in inside.parts):
        return N_("a link into a dot-folder or dot-file of the folder; those are left out")
    return None


def shown(path: Path) -> str:
    """A path as printable text: bytes of a name that is not UTF-8 appear as `\\xNN`."""
    return os.fsencode(str(path)).decode("utf-8", "backslashreplace")


def refusal_reason(exc: InputRefusedError, path: Path, base: Path | None = None) -> str:
    """A refusal's message without the file's name and the general advice (the row names the file)."""
    reason = exc.message
    full = path if base is None else base / path
    for prefix in (f"{path} ", f"Cannot read {path}: ", f"{shown(path)}: ", f"{shown(full)}: "):
        reason = reason.removeprefix(prefix)
    reason = reason.removeprefix("is ")
    for advice in (". Memories ingests", " If it is text in another encoding", ". Rename it"):
        reason = reason.split(advice)[0]
    return reason.rstrip(".")
