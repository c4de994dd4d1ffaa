"""Committing what a pull brings while it reads, when the vault has nothing to send: a join,
or a device that only read since its last sync.

A sync verifies everything it pulls before the vault is touched, so a target that fails a
check leaves the vault as it was. That means holding what it pulls: for a join, the whole
vault; for a device far behind, all the others wrote since (a folder of notes imported on
another device). A vault with no change of its own to send (no record added, edited or
deleted since its last sync, no bundle waiting, no conflict being resolved) has nothing a
refusal could protect, so its sync commits the pulled revisions a few megabytes at a time as
they are verified (each bundle and snapshot part is authenticated before it is used; the
chain's end and a snapshot's digest are checked when reached). If a check fails part-way, the
vault holds a verified prefix of the other devices' chains, as if it had synced while the
target held only that, and the next sync goes on from there (as after a sync stopped with
ctrl+c). A record edited here while such a pull commits is caught by the commit that would
overwrite it (the write's expected revision): that sync starts over, with a change to send.

A device's position advances only with a whole bundle, or at the end of a snapshot. A snapshot
leaves out the text of a revision whose child it holds; a record whose revision has no text
yet (its child is in a later part) waits, with the rest of its device's chain behind it, until
the child arrives: no record is settled on a revision without text.

These commits do not merge two edits made apart: the pull's last commit does, with everything
read (merge.merge_pulled, run.py).
"""

from __future__ import annotations

from collections.abc import Callable

from .chains import Incoming, Pulled
from .state import SyncState

STREAM_BYTES = 4 << 20  # content held before a commit (about a bundle)


class Stream:
    """Hands `commit` the verified bundles of a pull once they hold STREAM_BYTES of content."""

    def __init__(self, state: SyncState, commit: Callable[[list[Incoming]], None], limit: int | None = None) -> None:
        self._state, self._commit, self._limit = state, commit, limit or STREAM_BYTES
        self._seen: list[Incoming] | None = None  # the list weighed (a pull that starts over has a new one)
        self._counted = self._weight = 0  # how many of it are weighed, and their weight

    def __call__(self, out: Pulled) -> None:
        """`out.bundles` grew: commit what can be committed, keep the rest there."""
        if out.bundles is not self._seen:
            self._seen, self._counted, self._weight = out.bundles, 0, 0
        self._weight += sum(_weight(bundle) for bundle in out.bundles[self._counted:])
        self._counted = len(out.bundles)
        if self._weight < self._limit:
            return
        ready, held = split(out.bundles, self._state)
        if ready:
            self._commit(ready)
        out.bundles[:] = held
        self._counted, self._weight = len(held), sum(_weight(bundle) for bundle in held)


def split(bundles: list[Incoming], state: SyncState) -> tuple[list[Incoming], list[Incoming]]:
    """(what can be committed now, what must wait). A record waits while one of its revisions
    has no text and no child yet (only a snapshot part, never positioned, carries such a
    revision); a device's whole bundle or snapshot end waits while part of its chain does, so
    its position never passes revisions not committed."""
    waiting = _open_records(bundles, state)
    ready: list[Incoming] = []
    held: list[Incoming] = []
    behind: set[str] = set()  # devices with revisions waiting
    for bundle in bundles:
        if bundle.position:
            (held if bundle.device in behind else ready).append(bundle)
            continue
        now = [item for item in bundle.revs if item[0] not in waiting]
        later = [item for item in bundle.revs if item[0] in waiting]
        if now:
            ready.append(Incoming(bundle.device, 0, "", now, position=False))
        if later:
            behind.add(bundle.device)
            held.append(Incoming(bundle.device, 0, "", later, position=False))
    return ready, held


def _open_records(bundles: list[Incoming], state: SyncState) -> set[str]:
    """Records with a revision carried without its text whose child is neither pulled yet nor known here."""
    blank: dict[str, set[str]] = {}
    for bundle in bundles:
        for record_id, rev, payload in bundle.revs:
            if payload is None and not rev.deleted:
                blank.setdefault(record_id, set()).add(rev.rev_id)
    if not blank:
        return set()
    named: dict[str, set[str]] = {record_id: set() for record_id in blank}
    for bundle in bundles:
        for record_id, rev, _payload in bundle.revs:
            if record_id in named:
                named[record_id].update(rev.parents)
    state.prefetch(list(blank))
    for record_id, parents in named.items():
        for rev in state.doc(record_id).tree.revs.values():
            parents.update(rev.parents)
    return {record_id for record_id, revs in blank.items() if revs - named[record_id]}


def _weight(bundle: Incoming) -> int:
    return sum(len(payload or "") + 128 for _record_id, _rev, payload in bundle.revs)
