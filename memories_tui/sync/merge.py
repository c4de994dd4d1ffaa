"""Turning local edits into revisions and merging pulled revisions into the revision trees,
deciding what the vault must now hold (the winner of every touched record) and what is kept
aside (the losing revisions: conflicts, and deletions an edit beat)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..errors import ErrorCode, NotFoundError, SyncError, SyncTamperedError, TamperError
from ..i18n import msg
from ..vault.integrity import decode_payload, encode_payload
from ..vault.records import PulledRecord, Record
from ..vault.sync_rows import LocalChange
from .chains import Incoming
from .hlc import Clock
from .revtree import Rev, rev_id_for
from .state import Doc, SyncState
from .threeway import common_ancestor, merge_payloads, merged_rev


@dataclass
class Plan:
    outgoing: list[tuple[str, Rev, str | None]] = field(default_factory=list)
    puts: list[PulledRecord] = field(default_factory=list)  # winners to store, checked, as pulled
    deletes: list[str] = field(default_factory=list)
    expected: dict[str, int | None] = field(default_factory=dict)
    pulled: int = 0
    texts: dict[str, str] = field(default_factory=dict)  # with `merge` off: the texts pulled of records left
    # with two live leaves (their losing leaves are in the state's kept conflicts)


def record_local(state: SyncState, clock: Clock, deleted: list[str], changed: list[LocalChange], plan: Plan,
                 counter: int = 0) -> None:
    """Every record added or edited here since the last sync becomes a revision whose parent is
    the one the vault held (every leaf, for a record being resolved: the conflicts end there);
    every record deleted here becomes a deletion revision (of every leaf, for a record resolved
    by keeping a deletion). `counter` is the vault's change counter: a deleted record may have
    had edits here that no sync saw, under numbers above the one its entry names, and none of
    them is above the counter (every revision is a write of its own); a record brought back
    later is numbered above it, never under a number the vault gave other content (caches take
    an unchanged number for unchanged content)."""
    state.prefetch([record.record_id for record in changed] + deleted)
    for record in changed:
        doc = state.doc(record.record_id)
        if record.record_id in state.resolving:
            parents = tuple(sorted(rev.rev_id for rev in doc.tree.leaves()))
        else:
            parents = (doc.cur,) if doc.cur else ()
        stamp = clock.tick()
        rev = Rev(rev_id_for(record.record_id, parents, stamp, state.device, False, record.payload.encode()), parents,
                  stamp, state.device, False, record.kind)
        doc.tree.add(rev)
        doc.cur, doc.local, doc.high = rev.rev_id, record.revision, max(doc.high, record.revision)
        plan.outgoing.append((record.record_id, rev, record.payload))
    for record_id in deleted:
        doc = state.doc(record_id)
        if doc.local is not None and doc.cur is not None:
            stamp = clock.tick()
            kind = doc.tree.revs[doc.cur].kind
            parents = (tuple(sorted(rev.rev_id for rev in doc.tree.leaves())) if record_id in state.resolving
                       else (doc.cur,))  # a deletion kept to resolve a conflict closes every leaf too
            rev = Rev(rev_id_for(record_id, parents, stamp, state.device, True, b""), parents, stamp,
                      state.device, True, kind)
            doc.tree.add(rev)
            doc.high = max(doc.high, doc.local, counter)
            doc.cur, doc.local = rev.rev_id, None
            plan.outgoing.append((record_id, rev, None))


def merge_pulled(state: SyncState, clock: Clock, bundles: list[Incoming], local: Callable[[str], Record],
                 plan: Plan, history: Callable[[str, int], Record] | None = None, *, merge: bool = True,
                 also: Iterable[str] = (), texts: dict[str, str] | None = None) -> None:
    """Add the pulled revisions, then settle every record they or a local change touched (a
    local deletion of a winner with a kept conflict brings that conflict back, as on every
    other device). `local` reads the record the vault holds now (its content is kept when it loses),
    `history` an older revision of it (the ancestor of a three-way merge).

    A streamed pull commits with `merge` off: two live leaves seen on part of the target's view
    may be an edit that a later bundle shows deleted or built on, and merging them would write
    a revision no device that read the whole target writes. Such records are left as kept
    conflicts, with the texts this commit pulled for them in `plan.texts`; the pull's last
    commit settles them again (`also`, `texts`) with everything read."""
    payloads: dict[str, str | None] = dict(texts or {})
    sent: dict[str, dict[str, str]] = {}  # record -> revision -> content, of what this sync sends
    for record_id, rev, body in plan.outgoing:
        if body is not None:
            sent.setdefault(record_id, {})[rev.rev_id] = body
    touched = dict.fromkeys(record_id for record_id, _rev, _payload in plan.outgoing)  # ordered, O(1) lookups
    touched.update(dict.fromkeys(also))
    state.prefetch([*touched, *(record_id for bundle in bundles for record_id, _rev, _payload in bundle.revs)])
    for bundle in bundles:
        for record_id, rev, payload in bundle.revs:
            clock.receive(rev.stamp)
            if state.doc(record_id).tree.add(rev):
                payloads[rev.rev_id] = payload
                plan.pulled += 1
                touched.setdefault(record_id)
    for record_id in touched:
        _settle(state, record_id, payloads, sent.get(record_id, {}), local, plan, history, merge)


def _settle(state: SyncState, record_id: str, payloads: dict[str, str | None], sent: dict[str, str],
            local: Callable[[str], Record], plan: Plan, history: Callable[[str, int], Record] | None,
            merge: bool) -> None:
    doc = state.docs[record_id]
    held = doc.cur if doc.local is not None else None

    def text_of(rev_id: str) -> str | None:
        for known in (payloads, sent, state.kept.get(record_id, {})):
            if known.get(rev_id) is not None:
                return known[rev_id]
        if rev_id == held:
            return encode_payload(local(record_id)).decode("utf-8")
        number = doc.bases.get(rev_id)
        if number is None or history is None:
            return None
        try:
            return encode_payload(history(record_id, number)).decode("utf-8")
        except NotFoundError:  # deleted here since: no merge, a conflict
            return None

    if merge:
        _merge_leaves(record_id, doc, text_of, payloads, plan)
    elif sum(1 for rev in doc.tree.leaves() if not rev.deleted) > 1:
        plan.texts.update({rev_id: text for rev_id in doc.tree.revs if (text := payloads.get(rev_id)) is not None})
    _choose(state, record_id, doc, payloads, local, plan)
    _keep_bases(doc)


def _choose(state: SyncState, record_id: str, doc: Doc, payloads: dict[str, str | None],
            local: Callable[[str], Record], plan: Plan) -> None:
    """Make the winner what the vault holds; keep the revisions that lost."""
    winner = doc.tree.winner()
    if winner is None:
        return
    leaves = {rev.rev_id for rev in doc.tree.leaves()}
    known = state.kept.get(record_id, {})
    kept = dict(known) if len(leaves) > 1 else {}  # one leaf (most records): nothing lost, nothing kept
    if winner.rev_id != doc.cur:
        if doc.cur in leaves:  # what this vault held lost: keep it
            kept[doc.cur] = encode_payload(local(record_id)).decode("utf-8") if doc.local is not None else None
        content = payloads[winner.rev_id] if winner.rev_id in payloads else known.get(winner.rev_id)
        if winner.deleted:
            if doc.local is not None:
                plan.deletes.append(record_id)
                plan.expected[record_id] = doc.local
            doc.local = None
        else:
            if content is None and winner.rev_id in payloads:  # pulled without its text
                raise SyncError(msg("A revision from device {device} arrived without its text (that device rebuilt "
                                    "its snapshot after damage in the sync target, when it no longer held the note). "
                                    "Sync again once {device} has synced; `memories sync devices` shows when it last "
                                    "did.", device=winner.device), code=ErrorCode.SYNC_STATE_INCOMPLETE)
            if content is None:
                raise SyncError(msg("The content of a winning revision is missing from the sync state; sync "
                                    "again."), code=ErrorCode.SYNC_STATE_INCOMPLETE)
            expected = doc.local
            revision = doc.next_revision()
            _decoded(content, record_id, revision, winner.kind)  # checked, then let go: stored as pulled
            plan.puts.append(PulledRecord(record_id, revision, winner.kind, content))  # type: ignore[arg-type]
            plan.expected[record_id] = expected
            doc.local = revision
        doc.cur = winner.rev_id
    if len(leaves) > 1:
        for rev in doc.tree.losers():
            if rev.rev_id in payloads:
                kept[rev.rev_id] = payloads[rev.rev_id]
            elif rev.deleted:  # a deletion needs no text: known from the tree, whenever it came
                kept.setdefault(rev.rev_id, None)  # (one that lost to a deletion first is dropped below, then)
        kept = {rev_id: body for rev_id, body in kept.items()
                if rev_id in leaves and rev_id != winner.rev_id and (body is not None or not winner.deleted)}
    if kept:
        state.kept[record_id] = kept
    else:
        state.kept.pop(record_id, None)


def _merge_leaves(record_id: str, doc: Doc, content: Callable[[str], str | None],
                  payloads: dict[str, str | None], plan: Plan) -> None:
    """While the two best live leaves merge cleanly with their common ancestor, add the merged
    revision (the same one on every device that can merge them) and send it."""
    while True:
        if len(doc.tree.leaves()) < 2:
            return  # one leaf (nearly every record of a join or first push): nothing to merge
        live = sorted((rev for rev in doc.tree.leaves() if not rev.deleted), key=Rev.order, reverse=True)
        if len(live) < 2:
            return
        a, b = live[0], live[1]
        base = common_ancestor(doc.tree, a, b)
        texts = (content(base.rev_id) if base else None, content(a.rev_id), content(b.rev_id))
        if texts[0] is None or texts[1] is None or texts[2] is None:
            return
        merged = merge_payloads(texts[0], texts[1], texts[2])
        if merged is None:
            return
        rev = merged_rev(record_id, a, b, merged)
        if doc.tree.add(rev):
            plan.outgoing.append((record_id, rev, merged))
        payloads[rev.rev_id] = merged


def _keep_bases(doc: Doc) -> None:
    """Remember which vault revision holds the winner, and keep that for every leaf's parent: the
    common ancestor a later concurrent edit merges with (a local edit replaces what the vault
    shows, its history keeps the rest). Numbers only: the vault keeps the text."""
    leaves = doc.tree.leaves()
    wanted = {p for leaf in leaves if not leaf.deleted for p in leaf.parents}
    bases = {rev_id: n for rev_id, n in doc.bases.items() if rev_id in wanted}
    winner = doc.tree.winner()
    if (winner is not None and not winner.deleted and winner.kind != "asset" and doc.cur == winner.rev_id
            and doc.local is not None):  # a file's bytes are never merged
        bases[winner.rev_id] = doc.local
    doc.bases = bases


def _decoded(payload: str, record_id: str, revision: int, kind: str) -> Record:
    try:
        return decode_payload(payload, record_id, revision, kind,  # type: ignore[arg-type]
                              f"A pulled revision of record {record_id}")  # as pulled: no copy to parse
    except TamperError as exc:
        raise SyncTamperedError(exc.localizable or exc.message) from None
