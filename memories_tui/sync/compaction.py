"""Compaction: the number of objects in a target stays bounded however often devices sync.

After a push that leaves at least `compact_after` of this device's bundles past its snapshot,
the device writes a new snapshot (snapshots.py) of its whole chain: the previous snapshot and
the bundles after it, fetched back and checked link by link (bundles still waiting in the
outbox are taken from there). Its head then names the snapshot, so a new device reads the
snapshot and the few bundles after it.

Every head also says how far its device has read each other device. A device deletes its own
bundles up to its snapshot only once every device it knows of has read past them; a device
that was forgotten (`sync forget`) no longer counts, and if it comes back it reads the
snapshot. A device that only reads publishes how far it got every PUBLISH_EVERY bundles.
Snapshots other than the current one and the one before (kept for a reader that fetched the
previous head a moment ago) are deleted too. Deleting is the last step: a sync killed at any
point leaves a target every device can still read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SyncTamperedError
from ..i18n import msg
from ..testhooks import pause_point
from ..vault.keys import VaultKeys
from . import snapshots
from .chains import Pulled, _bundle, entry
from .sealing import Head, bundle_name, forget_ad, forgotten_name, unseal
from .state import SyncState
from .targets import Target

COMPACT_AFTER = 64  # the default of `[sync] compact_after`
PUBLISH_EVERY = 8  # a reading device rewrites its head when it has read this many bundles of one device more


@dataclass
class Extra:
    """What this sync's upload carries besides its bundles, and what its head says."""

    snap: int = 0
    snap_digest: str = ""
    before: int = 0  # the snapshot the head named when this sync began (kept one more sync)
    parts: list[bytes] = field(default_factory=list)  # a new snapshot to put before the head
    read: dict[str, int] = field(default_factory=dict)
    publish: bool = False  # write the head even if there is no bundle to push
    failed: SyncTamperedError | None = None  # the snapshot could not be made: reported after the push

    def head(self, state: SyncState, time: str) -> Head:
        return Head(state.device, state.own_seq, state.own_digest, time, self.snap, self.snap_digest, self.read)


def prepare(target: Target, keys: VaultKeys, state: SyncState, pulled: Pulled, compact_after: int) -> Extra:
    own = pulled.heads.get(state.device)
    extra = Extra(own.snap, own.snap_digest, own.snap) if own is not None else Extra()
    extra.read = {d: seq for d, (seq, _digest) in sorted(state.seen.items()) if d != state.device and seq > 0}
    if compact_after > 0 and (state.outbox or state.pushed) and state.own_seq - extra.snap >= compact_after:
        try:
            extra.parts = _snapshot(target, keys, state, extra)
            extra.snap, extra.snap_digest = state.own_seq, snapshots.parts_digest(extra.parts)
        except SyncTamperedError as exc:  # this device's own objects were damaged: push all the same
            extra.failed = exc
    published = own.read if own is not None else {}
    extra.publish = bool(extra.read) and (own is None or any(
        n - published.get(d, 0) >= PUBLISH_EVERY for d, n in extra.read.items()))
    return extra


def _snapshot(target: Target, keys: VaultKeys, state: SyncState, extra: Extra) -> list[bytes]:
    """The sealed parts of a snapshot of this device's chain up to its newest bundle."""
    entries: list[snapshots.Entry] = []
    prev = ""
    if extra.snap:
        named = Head(state.device, extra.snap, "", "", extra.snap, extra.snap_digest)
        before = snapshots.read(keys.sync_aead("snapshot"), keys.vault_id, named, target.get)
        entries, prev = list(before.entries), before.digest
    scratch = Pulled()
    source = _WithOutbox(target, state)
    for number in range(extra.snap + 1, state.own_seq + 1):
        prev = _bundle(source, keys, state.device, number, prev, scratch)  # type: ignore[arg-type]
    if prev != state.own_digest:
        raise SyncTamperedError(msg("The head of device {device} does not match its last bundle: the chain was "
                                    "truncated or replaced. Nothing was changed here.", device=state.device))
    for bundle in scratch.bundles:
        entries += [entry(*item) for item in bundle.revs]
    return snapshots.seal_parts(keys.sync_aead("snapshot"), keys.vault_id, state.device, state.own_seq,
                                state.own_digest, snapshots.fold(entries))


class _WithOutbox:
    """The target as `chains` reads it, with this device's bundles not uploaded yet from the outbox."""

    def __init__(self, target: Target, state: SyncState) -> None:
        self._target, self._state = target, state

    def get(self, name: str) -> bytes | None:
        for seq, blob in self._state.outbox.items():
            if name == bundle_name(self._state.device, seq):
                return blob
        return self._target.get(name)


def prune(target: Target, keys: VaultKeys, state: SyncState, pulled: Pulled, extra: Extra, sent: list[int]) -> int:
    """Delete this device's bundles that every known device has read and a snapshot holds, and
    the snapshots no head names any more; how many objects were deleted. A snapshot that could
    not be made is raised here, once the push is done."""
    mine = snapshots.OwnObjects.listed(pulled.listing, state.device)
    stale = sorted((upto, k) for upto, k in mine.parts if upto not in (extra.snap, extra.before)
                   or (extra.parts and upto == extra.snap and k >= len(extra.parts)))
    candidates = sorted(n for n in mine.bundles | set(sent) if n <= extra.snap)
    doomed = [n for n in candidates if n <= _read_by_all(target, keys, state, pulled, candidates[-1])] \
        if candidates else []
    for n in doomed:
        target.delete(bundle_name(state.device, n))
        pause_point("sync-mid-prune")  # crash tests kill -9 here: one object deleted, the rest not yet
    for upto, k in stale:
        target.delete(snapshots.snapshot_name(state.device, upto, k))
    if extra.failed is not None:
        raise extra.failed
    return len(doomed) + len(stale)


def _read_by_all(target: Target, keys: VaultKeys, state: SyncState, pulled: Pulled, need: int) -> int:
    """The bundle of this device up to which every known, not forgotten device has read (at most `need`)."""
    limit = need
    for device, head in sorted(pulled.heads.items()):
        got = head.read.get(state.device, 0)
        if device == state.device or got >= limit or _forgotten(target, keys, head):
            continue
        limit = got
    return limit


def _forgotten(target: Target, keys: VaultKeys, head: Head) -> bool:
    """Whether a `sync forget` mark covers the device as its head shows it (it has not written since)."""
    mark = target.get(forgotten_name(head.device))
    if mark is None:
        return False
    value = unseal(keys.sync_aead("head"), mark, forget_ad(keys.vault_id, head.device),
                   f"The forget mark of device {head.device}")
    return isinstance(value, dict) and type(value.get("seq")) is int and value["seq"] >= head.seq
