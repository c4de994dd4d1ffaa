"""The conflicts a vault keeps, as front ends show them: the winner's title, each revision that
lost, and the body of the revision both sides came from when this vault still holds it, so a
merge by hand starts from the three-way result instead of two whole texts."""

from __future__ import annotations

import json

from ..errors import MemoriesError, NotFoundError
from ..vault.store import UnlockedVault
from .state import Doc, SyncState
from .threeway import common_ancestor
from .types import Conflict, ConflictRevision


def listed(vault: UnlockedVault, state: SyncState) -> list[Conflict]:
    """Records with kept conflicting revisions (and deletions an edit beat), from the last sync;
    a record resolved here since is no longer one (the next sync ends it everywhere)."""
    out = []
    for record_id, kept in sorted(state.kept.items()):
        if record_id in state.resolving:
            continue
        doc = _doc(state, record_id)
        winner_title = None
        if doc is not None and doc.local is not None:
            try:
                winner_title = vault.read(record_id).title
            except NotFoundError:
                winner_title = None  # deleted here since the last sync
        revisions = []
        for rev_id, payload in kept.items():
            value = json.loads(payload) if payload is not None else {}
            base = _base_body(vault, state, record_id, doc, rev_id) if payload is not None else None
            here = doc is not None and rev_id in doc.tree.revs and doc.tree.revs[rev_id].device == state.device
            revisions.append(ConflictRevision(rev_id, payload is None, value.get("title"), value.get("body"), base,
                                              here))
        out.append(Conflict(record_id, winner_title, revisions))
    return out


def _base_body(vault: UnlockedVault, state: SyncState, record_id: str, doc: Doc | None, rev_id: str) -> str | None:
    """The body of the nearest revision the winner and `rev_id` both descend from, read from the
    vault's history; None when there is none or this vault no longer has it."""
    if doc is None:
        return None
    tree, winner = doc.tree, doc.tree.winner()
    if winner is None or rev_id not in tree.revs:
        return None
    ancestor = common_ancestor(tree, winner, tree.revs[rev_id])
    number = _bases(state, record_id, doc).get(ancestor.rev_id) if ancestor is not None else None
    if number is None:
        return None
    try:
        return vault.read(record_id, number).body
    except MemoriesError:
        return None


def _doc(state: SyncState, record_id: str) -> Doc | None:
    return state.find(record_id)


def _bases(state: SyncState, record_id: str, doc: Doc) -> dict[str, int]:
    return doc.bases
