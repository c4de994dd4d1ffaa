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
again (nothing is written until it can settle the record), as is one that gets a revision
whose text the vault lost before it was synced (a record deleted here during a refused sync),
until this device's next sync sends the deletion.

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
from .sealing import DEVICES, Head, device_ids, head_name
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
    back and whose own snapshot (in `heads`) now reaches as far is carried no more; one that
    wrote again without such a snapshot is carried as far as this device read it (its trees
    hold every revision up to there)."""
    adopted: Adopted = {}
    for device, upto in carried.items():
        seen = state.seen.get(device)
        if seen is not None and seen[0] == upto:
            adopted[device] = seen
        elif device in heads and heads[device].snap >= upto:
            continue  # it came back, and its own snapshot reaches as far: carried no more
        elif seen is not None and seen[0] > upto:
            adopted[device] = seen  # it wrote again since and this device read that too: carried that far
        else:
            return None  # never read here as far as this snapshot carried it: its chain is nowhere else
    if state.loader is None or state.legacy:
        return None
    writers = {state.device, *adopted}
    entries: list[tuple[Rev, Entry]] = []
    wanted: dict[tuple[str, int], list[Entry]] = {}  # (record, vault revision) -> the entries that take its text
    for record_id, doc in sorted(state.loader(None).items()):  # fresh entries: the state's own stay as they are
        made = _entries(record_id, doc, writers, state.kept.get(record_id, {}), wanted)
        if made is None:
            return None
        entries += made
    texts = local.texts([LocalRef(record_id, number, 0) for record_id, number in wanted])
    for pair, items in wanted.items():
        for item in items:
            if pair in texts:
                item["x"] = texts[pair]
            else:  # deleted here since (a refused sync has not recorded it yet), or a merge base deleted
                item["s"] = 1  # here and brought back by another device's edit: its place, not its text
    entries.sort(key=lambda pair: (pair[0].stamp, pair[0].rev_id))  # chain order: this device's clock only grows
    return [item for _rev, item in entries], adopted


def _entries(record_id: str, doc: Doc, writers: set[str], kept: dict[str, str | None],
             wanted: dict[tuple[str, int], list[Entry]]) -> list[tuple[Rev, Entry]] | None:
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
            wanted.setdefault((record_id, number), []).append(item)
        elif rev.rev_id in anywhere:
            item["s"] = 1  # another device's revision replaced it, and the vault no longer has its text
        else:
            return None  # a leaf whose text is nowhere here
        out.append((rev, item))
    return out


def own_snapshot(keys: VaultKeys, state: SyncState, entries: list[Entry], carried: Adopted, policy: list[Change],
                 local: Local | None) -> list[bytes]:
    """The sealed parts of this device's snapshot reaching its newest bundle. The policy changes
    the vault knows of the devices in it join those its chain carried (a chain from before
    snapshots carried policy gains them)."""
    if local is not None:
        policy = policy + [change for change in local.policy() if change.device in {state.device, *carried}]
    return snapshots.seal_parts(keys.sync_aead("snapshot"), keys.vault_id, state.device, state.own_seq,
                                state.own_digest, snapshots.fold(entries), carried, policy)


def restore_own(target: Target, keys: VaultKeys, state: SyncState, local: Local, uploader: Uploader) -> bool:
    """After a refused sync: if this device's current snapshot no longer opens, or another
    device carries this one's chain further than its own snapshot reaches (it was forgotten and
    came back, and the carrier may be the one refused for its damage), put a rebuilt snapshot
    and a head naming it (nothing else changes: same bundles, same read positions). Only when
    every bundle committed here is uploaded. Whether it did; never raises (the refusal that led
    here is what the user is told)."""
    try:
        heads = _heads(target, keys)
        head = heads.get(state.device)
        if head is None or not head.seq or state.outbox or (head.seq, head.digest) != (state.own_seq, state.own_digest):
            return False
        carried_to = max((h.adopted.get(state.device, 0) for d, h in heads.items() if d != state.device), default=0)
        if carried_to <= head.snap:
            if not head.snap:
                return False
            try:
                snapshots.read(keys.sync_aead("snapshot"), keys.vault_id, head, target.get)
                return False
            except SyncTamperedError:
                pass
        fixed = rebuilt(state, head.adopted, local, heads)
        if fixed is None:
            return False
        entries, carried = fixed
        parts = own_snapshot(keys, state, entries, carried, [], local)
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


def _heads(target: Target, keys: VaultKeys) -> dict[str, Head]:
    """Every device's head that opens (one that does not is left out: this is a repair, the
    sync that was refused says what is wrong)."""
    out = {}
    for device in device_ids(target.list(DEVICES)):
        blob = target.get(head_name(device))
        try:
            if blob is not None:
                out[device] = Head.opened(keys.sync_aead("head"), keys.vault_id, device, blob)
        except SyncTamperedError:
            continue
    return out
