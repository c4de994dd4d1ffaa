"""Rebuilding this device's snapshot from what its vault knows, when the one in the target is damaged.

A device reads its previous snapshot back to make the next one. If the target altered,
truncated or lost it (a disk fault, a tool that rewrote the file), the bundles it replaced are
gone: without a repair the device could never compact again, and no new device could join.
Every revision this device wrote (and those of the forgotten devices its snapshot carried)
is still in its revision trees, and the content a reader may need is still in the vault: the
record as it stands, a kept conflict, or the older revision kept as a merge base. The rebuilt
snapshot holds those, reaches this device's last bundle, and replaces the damaged one as any
new snapshot does. A revision that another one replaces keeps its place without its content,
as in any snapshot; where the replacing revision is another device's and the vault no longer
has the text, a reader that gets this snapshot before that device's bundle is told to sync
again (nothing is written until it can settle the record).

A device rebuilds at its next compaction, and also when its sync is refused for a damaged
object (`restore_own`): a device that carries a forgotten one, or that needs another device's
snapshot, can be refused before it ever reaches its own compaction, and two such devices
would otherwise wait on each other for good. That repair writes only to the target (a new
snapshot, then the head naming it), never to the vault, which a refused sync leaves as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import MemoriesError, SyncTamperedError
from ..vault.keys import VaultKeys
from ..vault.sync_rows import LocalRef
from . import snapshots
from .policy import Change
from .push import Uploader, now
from .revtree import Rev
from .sealing import Head, head_name
from .snapshots import Adopted, Entry
from .state import Doc, SyncState
from .targets import Target
from .threeway import MERGE_DEVICE

StoredTexts = Callable[[list[LocalRef]], dict[tuple[str, int], str]]  # (record, vault revision) -> as stored


@dataclass(frozen=True)
class Local:
    """What the vault gives a snapshot: its records as stored (for a rebuild), and the policy
    changes it knows as the last of their keys (a snapshot holds those of its devices, so one
    made before snapshots carried policy gains it; a change of this device that another
    device's replaced is not needed: the later one wins everywhere)."""

    texts: StoredTexts
    policy: Callable[[], list[Change]]


def rebuilt(state: SyncState, carried: dict[str, int], local: Local, heads: dict[str, Head]
            ) -> tuple[list[Entry], Adopted] | None:
    """The entries of a snapshot of this device's whole chain (and of the chains of `carried`,
    the forgotten devices its head says it carries, up to the bundle given), and the positions
    it carries; None when the vault cannot give all of it (the damage is then reported). Its
    policy changes are added as to any snapshot (compaction.py). A carried device that came
    back and whose own snapshot (in `heads`) now reaches as far is carried no more."""
    adopted: Adopted = {}
    for device, upto in carried.items():
        seen = state.seen.get(device)
        if seen is not None and seen[0] == upto:
            adopted[device] = seen
        elif device not in heads or heads[device].snap < upto:
            return None  # it wrote again since, and only this snapshot held its chain up to `upto`
    if state.loader is None or state.legacy:
        return None
    writers = {state.device, *adopted}
    entries: list[tuple[Rev, Entry]] = []
    wanted: dict[tuple[str, int], list[tuple[Entry, bool]]] = {}  # pair -> (entry, may go without its text)
    for record_id, doc in sorted(state.loader(None).items()):  # fresh entries: the state's own stay as they are
        made = _entries(record_id, doc, writers, state.kept.get(record_id, {}), wanted)
        if made is None:
            return None
        entries += made
    texts = local.texts([LocalRef(record_id, number, 0) for record_id, number in wanted])
    for pair, items in wanted.items():
        for item, replaced in items:
            if pair in texts:
                item["x"] = texts[pair]
            elif replaced:  # a merge base the vault dropped (deleted here, then brought back by an edit)
                item["s"] = 1
            else:
                return None
    entries.sort(key=lambda pair: (pair[0].stamp, pair[0].rev_id))  # chain order: this device's clock only grows
    return [item for _rev, item in entries], adopted


def _entries(record_id: str, doc: Doc, writers: set[str], kept: dict[str, str | None],
             wanted: dict[tuple[str, int], list[tuple[Entry, bool]]]) -> list[tuple[Rev, Entry]] | None:
    """This record's revisions written by `writers` (and merged ones), each with its content,
    left out, or waiting in `wanted` for the vault revision that holds it."""
    revs = doc.tree.revs
    ours = [rev for rev in revs.values() if rev.device in writers
            or (rev.device == MERGE_DEVICE and len(rev.parents) == 2 and not rev.deleted)]
    in_snapshot = {p for rev in ours for p in rev.parents}
    anywhere = {p for rev in revs.values() for p in rev.parents}
    out = []
    for rev in ours:
        item: Entry = {"id": record_id, "rev": rev.rev_id, "e": rev.to_list(), "x": None}
        number = doc.local if rev.rev_id == doc.cur else doc.bases.get(rev.rev_id)
        if rev.deleted:
            pass
        elif rev.rev_id in in_snapshot:
            item["s"] = 1  # its child comes along in this snapshot
        elif kept.get(rev.rev_id) is not None:
            item["x"] = kept[rev.rev_id]
        elif number is not None:
            wanted.setdefault((record_id, number), []).append((item, rev.rev_id in anywhere))
        elif rev.rev_id in anywhere:
            item["s"] = 1  # another device's revision replaced it, and the vault no longer has its text
        else:
            return None  # a leaf whose text is nowhere here
        out.append((rev, item))
    return out


def restore_own(target: Target, keys: VaultKeys, state: SyncState, local: Local, uploader: Uploader) -> bool:
    """After a refused sync: if this device's current snapshot no longer opens, put a rebuilt
    one and a head naming it (nothing else changes: same bundles, same read positions). Only
    when every bundle committed here is uploaded. Whether it did; never raises (the refusal
    that led here is what the user is told)."""
    try:
        blob = target.get(head_name(state.device))
        if blob is None or state.outbox:
            return False
        head = Head.opened(keys.sync_aead("head"), keys.vault_id, state.device, blob)
        if not head.snap or (head.seq, head.digest) != (state.own_seq, state.own_digest):
            return False
        try:
            snapshots.read(keys.sync_aead("snapshot"), keys.vault_id, head, target.get)
            return False
        except SyncTamperedError:
            pass
        heads = {}
        for device in head.adopted:
            theirs = target.get(head_name(device))
            if theirs is not None:
                heads[device] = Head.opened(keys.sync_aead("head"), keys.vault_id, device, theirs)
        fixed = rebuilt(state, head.adopted, local, heads)
        if fixed is None:
            return False
        entries, carried = fixed
        policy = [change for change in local.policy() if change.device in {state.device, *carried}]
        parts = snapshots.seal_parts(keys.sync_aead("snapshot"), keys.vault_id, state.device, state.own_seq,
                                     state.own_digest, snapshots.fold(entries), carried, policy)
        fresh = Head(state.device, head.seq, head.digest, now(), state.own_seq, snapshots.parts_digest(parts),
                     head.read, {d: n for d, (n, _digest) in sorted(carried.items())}, head.name)
        sealed = fresh.sealed(keys.sync_aead("head"), keys.vault_id)
        uploader.announce(len(parts) + 1, sum(map(len, parts)) + len(sealed))
        for k, part in enumerate(parts):
            target.put(snapshots.snapshot_name(state.device, state.own_seq, k), part)
        target.put(head_name(state.device), sealed)
        uploader.done()
        return True
    except MemoriesError:
        return False
