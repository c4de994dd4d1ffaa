"""Compaction: the number of objects in a target stays bounded however often devices sync.

After a push that leaves at least `compact_after` of this device's bundles past its snapshot,
the device writes a new snapshot (snapshots.py) of its whole chain: the previous snapshot and
the bundles after it, fetched back and checked link by link (bundles still waiting in the
outbox are taken from there). Its head then names the snapshot, so a new device reads the
snapshot and the few bundles after it.

Every head also says how far its device has read each other device. A device deletes its own
bundles up to its snapshot only once every device it knows of has read past them; a device
that was forgotten (`sync forget`) no longer counts, and if it comes back it reads the
snapshot; nor does one whose head this device has seen unchanged for `hold_days`, timed by this
device's own wall clock from when it first saw that head (never by the other device's clock, so
a device whose clock is off cannot make anyone delete early). A device that only reads
publishes how far it got every PUBLISH_EVERY bundles.

A forgotten device's chain is carried (adopted) by a device that has read all of it: its next
snapshot holds the forgotten device's revisions too, and its head says up to which bundle. One
sync later (a reader may have fetched the previous head a moment ago) that device deletes the
forgotten device's bundles, snapshots, head and mark; a reader that still needs them reads the
carrying snapshot instead (chains.py), and a forgotten device that comes back goes on from there.
Snapshots other than the current one and the one before (kept for a reader that fetched the
previous head a moment ago) are deleted too. Deleting is the last step: a sync killed at any
point leaves a target every device can still read.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import SyncTamperedError
from ..i18n import msg
from ..testhooks import pause_point
from ..vault.keys import VaultKeys
from . import repair, snapshots
from .ahead import Ahead
from .chains import Pulled, _bundle, adopters, entry
from .policy import Change
from .sealing import Head, bundle_name, forget_ad, forgotten_name, head_name, unseal
from .state import SyncState
from .targets import Target
from .threeway import MERGE_DEVICE

COMPACT_AFTER = 64  # the default of `[sync] compact_after`
PUBLISH_EVERY = 8  # a reading device rewrites its head when it has read this many bundles of one device more
HOLD_DAYS = 30.0  # the default of `[sync] hold_days`
DAY_MS = 86_400_000


def wall_ms() -> int:
    """This device's wall clock (tests move it)."""
    return time.time_ns() // 1_000_000


def observe(state: SyncState, heads: dict[str, Head], now_ms: int | None = None) -> None:
    """Note, by this device's own clock, since when each other device's head has been as it is
    now (a head a device rewrites when it syncs and has something to say). A clock that went
    back starts the count again rather than stretching it."""
    now = wall_ms() if now_ms is None else now_ms
    watch: dict[str, tuple[str, int]] = {}
    for device, head in sorted(heads.items()):
        if device == state.device:
            continue
        sign = hashlib.sha256(json.dumps([head.seq, head.digest, head.time, head.snap, head.read, head.adopted],
                                         sort_keys=True).encode()).hexdigest()[:16]
        old = state.watch.get(device)
        watch[device] = old if old is not None and old[0] == sign and old[1] <= now else (sign, now)
    state.watch = watch


def _stale(state: SyncState, device: str, hold_days: float, now: int) -> bool:
    seen = state.watch.get(device)
    return hold_days > 0 and seen is not None and now - seen[1] >= hold_days * DAY_MS


@dataclass
class Extra:
    """What this sync's upload carries besides its bundles, and what its head says."""

    snap: int = 0
    snap_digest: str = ""
    before: int = 0  # the snapshot the head named when this sync began (kept one more sync)
    parts: list[bytes] = field(default_factory=list)  # a new snapshot to put before the head
    read: dict[str, int] = field(default_factory=dict)
    adopted: dict[str, int] = field(default_factory=dict)  # forgotten devices the snapshot carries
    publish: bool = False  # write the head even if there is no bundle to push
    failed: SyncTamperedError | None = None  # the snapshot could not be made: reported after the push
    name: str = ""  # this device's name, for the head

    def head(self, state: SyncState, time: str) -> Head:
        return Head(state.device, state.own_seq, state.own_digest, time, self.snap, self.snap_digest, self.read,
                    self.adopted, self.name)


def prepare(target: Target, keys: VaultKeys, state: SyncState, pulled: Pulled, compact_after: int,
            name: str = "", local: repair.Local | None = None) -> Extra:
    """What this sync's head says and carries; a snapshot when one is due. `local` is what the
    vault knows, to rebuild this device's snapshot if the target damaged it."""
    own = pulled.heads.get(state.device)
    extra = Extra(own.snap, own.snap_digest, own.snap, adopted=dict(own.adopted)) if own is not None else Extra()
    extra.name = name
    extra.read = {d: seq for d, (seq, _digest) in sorted(state.seen.items()) if d != state.device and seq > 0}
    due = bool(state.outbox or state.pushed) and state.own_seq - extra.snap >= compact_after
    adopt = _to_adopt(target, keys, state, pulled) if compact_after > 0 and state.own_seq > extra.snap else {}
    if compact_after > 0 and (due or adopt):
        try:
            made = _snapshot(target, keys, state, pulled, extra, adopt, due, local)
        except SyncTamperedError as exc:  # this device's own objects were damaged: push all the same
            extra.failed = exc
        else:
            if made is not None:
                extra.parts, carried = made
                extra.snap, extra.snap_digest = state.own_seq, snapshots.parts_digest(extra.parts)
                extra.adopted = {d: n for d, (n, _digest) in sorted(carried.items())}
    published = own.read if own is not None else {}
    extra.publish = bool(extra.read) and (own is None or any(
        n - published.get(d, 0) >= PUBLISH_EVERY for d, n in extra.read.items()))
    extra.publish |= own is not None and own.name != name  # renamed: the others see it at its next sync
    return extra


def _to_adopt(target: Target, keys: VaultKeys, state: SyncState, pulled: Pulled) -> dict[str, Head]:
    """The forgotten devices whose whole chain this device has read and nobody carries yet; and
    one this device carries that came back without writing and now carries a chain this
    device's snapshot does not (carrying it again carries that chain too, so its objects can go)."""
    own = pulled.heads.get(state.device)
    mine = own.adopted if own is not None else {}
    out = {}
    for device, head in sorted(pulled.heads.items()):
        if device == state.device or head.seq == 0 or state.seen.get(device) != (head.seq, head.digest):
            continue
        carried = adopters(pulled.heads, device)
        again = device in mine and _carries_beyond(head, mine, state.device)
        if (carried is None or carried[1] < head.seq or again) and _forgotten(target, keys, head, pulled.listing):
            out[device] = head
    return out


def _carries_beyond(head: Head, carried: dict[str, int], device: str) -> bool:
    """Whether `head`'s snapshot carries a chain (other than `device`'s) further than `carried` does."""
    return any(n > carried.get(other, 0) for other, n in head.adopted.items() if other != device)


def _snapshot(target: Target, keys: VaultKeys, state: SyncState, pulled: Pulled, extra: Extra,
              adopt: dict[str, Head], due: bool, local: repair.Local | None = None
              ) -> tuple[list[bytes], snapshots.Adopted] | None:
    """The sealed parts of a snapshot of this device's chain up to its newest bundle, carrying
    the chains it carried before and those of `adopt` that can be read whole now; and what it
    carries. None when it was not due and no chain could be carried. Where the previous
    snapshot (or a bundle after it) is damaged, the chain is rebuilt from the vault (repair.py)."""
    named = Head(state.device, state.own_seq, state.own_digest, "", extra.snap, extra.snap_digest)
    try:
        chain = _chain(target, keys, state.device, named, pulled, state.own_digest, _WithOutbox(target, state))
    except SyncTamperedError:
        fixed = repair.rebuilt(state, extra.adopted, local, pulled.heads) if local is not None else None
        if fixed is None:
            raise
        chain = _Chain(*fixed)
        due = True  # the damaged snapshot is replaced now, not at the next compaction
    taken = 0
    for device, head in sorted(adopt.items()):
        try:
            theirs = _chain(target, keys, device, head, pulled, head.digest, target)
        except SyncTamperedError:  # its objects are damaged or still being copied: not carried, tried again later
            continue
        taken += 1
        chain.entries += theirs.entries
        chain.policy += theirs.policy
        for other, pos in theirs.carried.items():
            chain.carried[other] = max(chain.carried.get(other, pos), pos)
        chain.carried[device] = (head.seq, head.digest)
    chain.carried.pop(state.device, None)
    if not (due or taken):
        return None
    return repair.own_snapshot(keys, state, chain.entries, chain.carried, chain.policy, local), chain.carried


@dataclass
class _Chain:
    """What a snapshot of a device's chain holds: its revisions, the chains it carries, its policy changes."""

    entries: list[snapshots.Entry] = field(default_factory=list)
    carried: snapshots.Adopted = field(default_factory=dict)
    policy: list[Change] = field(default_factory=list)


def _chain(target: Target, keys: VaultKeys, device: str, head: Head, pulled: Pulled, last: str,
           source: Target | _WithOutbox) -> _Chain:
    """Every revision and policy change of `device`'s chain up to its bundle `head.seq` (whose
    digest is `last`), from its snapshot, or where another device's snapshot carries it, and the
    bundles after; and the chains that snapshot carries."""
    aead = keys.sync_aead("snapshot")
    out = _Chain()
    start, prev = 0, ""
    found = adopters(pulled.heads, device)
    if found is not None and found[1] > head.snap and found[0] != device:  # its own may be gone
        base = snapshots.read(aead, keys.vault_id, pulled.heads[found[0]], target.get)
        pos = base.adopted.get(device)
        if pos is None or pos[0] < found[1]:
            raise SyncTamperedError(msg("The snapshot of device {device} is malformed or is not the one its head "
                                        "names: it was altered, replaced by another or an older one. Nothing was "
                                        "changed here.", device=found[0]))
        out.entries = [item for item in base.entries if item["e"][3] in (device, MERGE_DEVICE)]
        out.policy = [change for change in base.policy if change.device == device]
        start, prev = pos
        _still_carried(out, aead, keys, head, target)
    elif head.snap:
        before = snapshots.read(aead, keys.vault_id, head, target.get)
        out = _Chain(list(before.entries), dict(before.adopted), list(before.policy))
        start, prev = before.upto, before.digest
    scratch = Pulled()
    with Ahead(source.get) as ahead:
        ahead.want((bundle_name(device, n) for n in range(start + 1, head.seq + 1)), depth=1)  # may be large
        for number in range(start + 1, head.seq + 1):
            prev = _bundle(ahead.take, keys, device, number, prev, scratch)
    if prev != last:
        raise SyncTamperedError(msg("The head of device {device} does not match its last bundle: the chain was "
                                    "truncated or replaced. Nothing was changed here.", device=device))
    for bundle in scratch.bundles:
        out.entries += [entry(*item) for item in bundle.revs]
        out.policy += bundle.policy
    return out


def _still_carried(out: _Chain, aead: AESGCM, keys: VaultKeys, head: Head, target: Target) -> None:
    """A device read from the snapshot that carries it keeps carrying what its own snapshot
    carried: the devices it adopted are carried by nobody else once it deleted their objects.
    (Its own snapshot is gone when the adopter deleted its objects too: the adopter carries them.)"""
    if not head.snap:
        return
    try:
        own = snapshots.read(aead, keys.vault_id, head, target.get)
    except SyncTamperedError:
        return
    out.carried.update(own.adopted)
    out.entries += [item for item in own.entries if item["e"][3] in own.adopted]
    out.policy += [change for change in own.policy if change.device in own.adopted]


class _WithOutbox:
    """The target as `chains` reads it, with this device's bundles not uploaded yet from the outbox."""

    def __init__(self, target: Target, state: SyncState) -> None:
        self._target, self._state = target, state

    def get(self, name: str, limit: int | None = None) -> bytes | None:
        for seq, blob in self._state.outbox.items():
            if name == bundle_name(self._state.device, seq):
                return blob
        return self._target.get(name, limit)


def prune(target: Target, keys: VaultKeys, state: SyncState, pulled: Pulled, extra: Extra, sent: list[int],
          hold_days: float = HOLD_DAYS) -> int:
    """Delete this device's bundles that every known device has read and a snapshot holds, the
    snapshots no head names any more, and the objects of the forgotten devices this device's
    snapshot carries; how many objects were deleted. A snapshot that could not be made is
    raised here, once the push is done."""
    mine = snapshots.OwnObjects.listed(pulled.listing, state.device)
    stale = sorted((upto, k) for upto, k in mine.parts if upto not in (extra.snap, extra.before)
                   or (extra.parts and upto == extra.snap and k >= len(extra.parts)))
    candidates = sorted(n for n in mine.bundles | set(sent) if n <= extra.snap)
    doomed = [n for n in candidates if n <= _read_by_all(target, keys, state, pulled, candidates[-1], hold_days)] \
        if candidates else []
    for n in doomed:
        target.delete(bundle_name(state.device, n))
        pause_point("sync-mid-prune")  # crash tests kill -9 here: one object deleted, the rest not yet
    for upto, k in stale:
        target.delete(snapshots.snapshot_name(state.device, upto, k))
    gone = _collect(target, keys, state, pulled)
    if extra.failed is not None:
        raise extra.failed
    return len(doomed) + len(stale) + gone


def _collect(target: Target, keys: VaultKeys, state: SyncState, pulled: Pulled) -> int:
    """Delete the objects of each forgotten device that this device's snapshot carried already
    when this sync began, unless it wrote again since; how many."""
    own = pulled.heads.get(state.device)
    count = 0
    for device, idle in sorted(pulled.heads.items()):  # one that never wrote a bundle has nothing to carry
        if device != state.device and idle.seq == 0 and not idle.adopted \
                and _forgotten(target, keys, idle, pulled.listing):
            target.delete(head_name(device))
            target.delete(forgotten_name(device))
            count += 2
    carried = own.adopted if own is not None else {}
    for device, upto in sorted(carried.items()):
        head = pulled.heads.get(device)
        if head is not None and (head.seq > upto or not _forgotten(target, keys, head, pulled.listing)):
            continue  # it came back: its chain is its own again
        if head is not None and _carries_beyond(head, carried, state.device):
            continue  # it came back and carries a chain this device's snapshot does not (yet): its objects hold it
        theirs = snapshots.OwnObjects.listed(pulled.listing, device)
        names = [bundle_name(device, n) for n in sorted(theirs.bundles) if n <= upto]
        names += [snapshots.snapshot_name(device, u, k) for u, k in sorted(theirs.parts) if u <= upto]
        for name in names:
            target.delete(name)
            pause_point("sync-mid-collect")  # crash tests kill -9 here: the head and the rest not deleted yet
        count += len(names)
        if head is not None:
            blob = target.get(head_name(device))  # once more: it may have written a moment ago
            if blob is not None and Head.opened(keys.sync_aead("head"), keys.vault_id, device, blob).seq > upto:
                continue
            target.delete(head_name(device))
            count += 1
        if forgotten_name(device) in pulled.listing and not any(n > upto for n in theirs.bundles):
            target.delete(forgotten_name(device))
            count += 1
    return count


def _read_by_all(target: Target, keys: VaultKeys, state: SyncState, pulled: Pulled, need: int,
                 hold_days: float = HOLD_DAYS) -> int:
    """The bundle of this device up to which every known device has read (at most `need`),
    leaving out the forgotten ones and those not seen to sync for `hold_days`."""
    limit = need
    now = wall_ms()
    for device, head in sorted(pulled.heads.items()):
        got = head.read.get(state.device, 0)
        if device == state.device or got >= limit or _stale(state, device, hold_days, now) \
                or _forgotten(target, keys, head, pulled.listing):
            continue
        limit = got
    return limit


def _forgotten(target: Target, keys: VaultKeys, head: Head, listing: list[str]) -> bool:
    """Whether a `sync forget` mark covers the device as its head shows it (it has not written
    since); a mark the sync's listing does not show is seen at the next sync."""
    mark = target.get(forgotten_name(head.device)) if forgotten_name(head.device) in listing else None
    if mark is None:
        return False
    value = unseal(keys.sync_aead("head"), mark, forget_ad(keys.vault_id, head.device),
                   f"The forget mark of device {head.device}")
    return isinstance(value, dict) and type(value.get("seq")) is int and value["seq"] >= head.seq
