"""A sync's quick look: is every file of a source as the last sync left it?

Most syncs find nothing changed (the watcher's rescan, a `source sync` out of habit), so this
pass only lists the folder and compares each file's size and modification time with what its
card recorded: no file is read, no `Path` is built, nothing is written. At the first sign of
anything else (a new, changed or vanished file, a link, a name that is not UTF-8, a card marked
gone) it gives up and the full sync decides. A file rewritten with the same size and the same
modification time looks unchanged here, as it does to every sync tool that trusts `stat`;
`source sync --full` reads and hashes every file.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Mapping

from ..vault.records import Record
from .folders import MAX_FOLDER_FILES, TEXT_SUFFIXES, not_text_reason, suffix_of
from .source_list import NOISE_FOLDERS, SourceSpec

Unchanged = tuple[list[tuple[str, Record]], list[tuple[str, str]]]  # (file, its card), (file, skip reason)
SameFn = Callable[[str, Record, os.stat_result], bool]


def all_unchanged(root: str, mine: Mapping[str, Record], is_same: SameFn, spec: SourceSpec) -> Unchanged | None:
    """Every wanted file with its card, and the files skipped by name, when nothing changed; else None."""
    walk = _Walk(spec, mine, is_same)
    if not _walk(walk, root, "", False) or len(walk.same) != len(mine):
        return None
    return walk.same, walk.skipped


class _Walk:
    def __init__(self, spec: SourceSpec, mine: Mapping[str, Record], is_same: SameFn) -> None:
        self.spec, self.mine, self.is_same = spec, mine, is_same
        self.same: list[tuple[str, Record]] = []
        self.skipped: list[tuple[str, str]] = []
        self.files = 0
        self.patterns = bool(spec.globs or spec.excludes)


def _walk(w: _Walk, where: str, prefix: str, noise: bool) -> bool:
    """`noise`: under a folder every source leaves out (its files are only counted)."""
    try:
        with os.scandir(where) as listing:
            entries = [e for e in listing if not e.name.startswith(".")]
    except OSError:
        return False
    for entry in entries:
        if entry.is_symlink():
            return False
        rel = prefix + entry.name
        if not rel.isascii():
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:
                return False
            rel = unicodedata.normalize("NFC", rel)
        if entry.is_dir():
            if not _walk(w, entry.path, rel + "/", noise or entry.name in NOISE_FOLDERS):
                return False
            continue
        w.files += 1
        if w.files > MAX_FOLDER_FILES:
            return False
        if noise or (w.patterns and not w.spec.wants(rel)):
            continue
        suffix = suffix_of(entry.name)
        if suffix not in TEXT_SUFFIXES:
            w.skipped.append((rel, not_text_reason(suffix)))
            continue
        card = w.mine.get(rel)
        if card is None or "source_gone" in card.metadata:
            return False
        try:
            st = entry.stat()
        except OSError:
            return False
        if not w.is_same(rel, card, st):
            return False
        w.same.append((rel, card))
    return True


def count_pending(root: str, mine: Mapping[str, Record], is_same: SameFn,
                  skipped_as_is: Callable[[str, os.stat_result], bool], spec: SourceSpec) -> int:
    """How many files a sync would take in now, by size and time only (nothing is read): text
    files with no card or a card they no longer match, files back after their card was marked
    gone, and cards whose file went away and is not marked gone yet. A file the last sync
    skipped for good (not UTF-8 text, too large) and that has not changed since is not counted."""
    seen: set[str] = set()
    pending = _count(root, "", mine, is_same, skipped_as_is, spec, seen, [0])
    return pending + sum(1 for rel, card in mine.items() if rel not in seen and "source_gone" not in card.metadata)


def _count(where: str, prefix: str, mine: Mapping[str, Record], is_same: SameFn,
           skipped_as_is: Callable[[str, os.stat_result], bool], spec: SourceSpec, seen: set[str],
           files: list[int]) -> int:
    try:
        with os.scandir(where) as listing:
            entries = [e for e in listing if not e.name.startswith(".") and not e.is_symlink()]
    except OSError:
        return 0
    pending = 0
    for entry in entries:
        rel = unicodedata.normalize("NFC", prefix + entry.name)
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:
            continue  # a name no card can have: the sync lists it as skipped
        if entry.is_dir():
            if entry.name not in NOISE_FOLDERS:
                pending += _count(entry.path, rel + "/", mine, is_same, skipped_as_is, spec, seen, files)
            continue
        files[0] += 1
        if files[0] > MAX_FOLDER_FILES or suffix_of(entry.name) not in TEXT_SUFFIXES or not spec.wants(rel):
            continue
        seen.add(rel)
        try:
            st = entry.stat()
        except OSError:
            continue
        card = mine.get(rel)
        if card is None:
            pending += not skipped_as_is(rel, st)
        elif "source_gone" in card.metadata or not is_same(rel, card, st):
            pending += 1
    return pending
