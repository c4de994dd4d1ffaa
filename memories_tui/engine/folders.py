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
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputRefusedError, LimitError
from ..i18n import msg

TEXT_SUFFIXES = frozenset({".md", ".markdown", ".mdown", ".mkd", ".txt", ".text", ""})
MAX_FOLDER_FILES = 10_000  # a vault's index holds 10,000 chunks by default: more files cannot fit anyway


@dataclass(frozen=True)
class FolderScan:
    readable: list[Path]  # text and Markdown files, in a stable order, named under the folder as given
    skipped: list[tuple[Path, str]]  # (file, why it is not ingested)


def scan_folder(folder: Path, base: Path | None = None) -> FolderScan:
    """The files under `folder` to read, and those skipped by name, each with its reason. A
    relative `folder` is found in `base` when given; the paths returned start with `folder`
    as given, so results name files as the user's shell would."""
    where = folder if base is None else base / folder
    tree = Path(os.path.realpath(where))
    readable: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    for root, dirs, files in os.walk(where, followlinks=False):
        given = folder / Path(root).relative_to(where)
        kept = []
        for name in sorted(dirs):
            if name.startswith("."):
                continue
            if Path(root, name).is_symlink():
                skipped.append((given / name, "a link to a folder; links are not followed"))
            else:
                kept.append(name)
        dirs[:] = kept  # os.walk descends only into these, in this order
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = given / name
            suffix = path.suffix.lower()
            outside = _link_leaves(Path(root, name), tree)
            if outside:
                skipped.append((path, outside))
            elif suffix in TEXT_SUFFIXES:
                readable.append(path)
            else:
                skipped.append((path, f"not a text or Markdown file ({shown(Path(suffix))} files are not ingested)"))
            if len(readable) + len(skipped) > MAX_FOLDER_FILES:
                raise LimitError(msg("{folder} holds more than {limit:,} files; ingest a smaller folder. Nothing was "
                                     "written.", folder=shown(folder), limit=MAX_FOLDER_FILES))
    return FolderScan(readable, skipped)


def _link_leaves(path: Path, tree: Path) -> str | None:
    """Why the link at `path` is not followed (its target is outside `tree` or hidden in it),
    or None when `path` is no link or one that stays in the tree."""
    if not path.is_symlink():
        return None
    target = Path(os.path.realpath(path))
    try:
        inside = target.relative_to(tree)
    except ValueError:
        return "a link to a file outside the folder; links that leave the folder are not followed"
    if any(part.startswith(".") for part in inside.parts):
        return "a link into a dot-folder or dot-file of the folder; those are left out"
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
