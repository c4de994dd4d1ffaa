"""A folder whose notes another source of the vault keeps in step already.

The sources are each home's own (the list of folders never syncs), but the cards they make
sync like any record. The same folder on two devices (an Obsidian vault that Syncthing or
iCloud Drive carries to both) added as a source on each would make every note twice, as each
source knows only the cards it made; so would adding a folder again after `source remove`,
whose cards stay. So `source add` looks for cards of a source this home does not have whose
files are in the new folder with the same bytes: by default it refuses to add the folder
(its notes reach this device through `memories sync`); with `--take-over` the new source takes
that source's id and keeps the same cards in step.

Two devices keeping one folder both take in a new file before either syncs: two cards of one
file, one from each, meet at the next sync. Each source sync keeps the card with the lowest id
(the same one on every device) and deletes the others that hold the same text; one with another
text (edited in the vault) is left and reported, never deleted.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..vault.records import Record
from .sources import MAX_FILE_BYTES

MAX_CHECKED = 20  # cards of one source whose files are hashed: at least half must match for the same folder


def own_cards(current: dict[str, Record], source_id: str) -> tuple[dict[str, Record], list[Record], list[Record]]:
    """(the source's card of each file, the other cards of a file holding the same text, those
    holding another text): the card kept is the one with the lowest id, on every device alike."""
    by_file: dict[str, list[Record]] = {}
    for record in current.values():
        if record.kind == "card" and record.metadata.get("source_id") == source_id:
            by_file.setdefault(str(record.metadata.get("source_rel")), []).append(record)
    kept: dict[str, Record] = {}
    same: list[Record] = []
    other: list[Record] = []
    for rel, cards in by_file.items():
        first, *rest = sorted(cards, key=lambda card: card.id)
        kept[rel] = first
        for twin in rest:
            (same if (twin.title, twin.body, twin.tags) == (first.title, first.body, first.tags) else other).append(twin)
    return kept, same, other


def kept_elsewhere(current: dict[str, Record], own_ids: set[str], folder: Path) -> tuple[str, int] | None:
    """(the id of a source this home does not have whose cards' files are in `folder` with the
    same bytes, how many cards it has) or None. The same folder, not one that holds a copy of a
    few of its notes: at least half of up to MAX_CHECKED of its cards (by file name) match."""
    by_source: dict[str, list[Record]] = {}
    for record in current.values():
        source_id = record.metadata.get("source_id")
        if record.kind == "card" and isinstance(source_id, str) and source_id not in own_ids \
                and "source_gone" not in record.metadata:
            by_source.setdefault(source_id, []).append(record)
    for source_id, cards in sorted(by_source.items(), key=lambda item: (-len(item[1]), item[0])):
        checked = sorted(cards, key=lambda card: str(card.metadata.get("source_rel")))[:MAX_CHECKED]
        if 2 * sum(_same_bytes(folder, card) for card in checked) >= len(checked):
            return source_id, len(cards)
    return None


def _same_bytes(folder: Path, card: Record) -> bool:
    """Whether the card's file is under `folder` (not through a link) with the bytes it recorded."""
    rel, recorded = card.metadata.get("source_rel"), card.metadata.get("sha256")
    if not isinstance(rel, str) or not isinstance(recorded, str) or not rel:
        return False
    path = folder / rel
    try:
        if folder.resolve() not in path.resolve().parents or path.is_symlink() or not path.is_file() \
                or path.stat().st_size > MAX_FILE_BYTES:
            return False
        return hashlib.sha256(path.read_bytes()).hexdigest() == recorded
    except (OSError, RuntimeError, ValueError):
        return False
