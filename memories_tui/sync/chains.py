"""Reading the devices' chains from a target, checking every link before anything is used.

For each other device: its head (sealed, its sequence never below what this vault already
verified), then every bundle after the last one verified here, each of which must open with
its own place in the chain and name its predecessor's digest; the last must be the one the
head names. This device's own head must show at least what this vault knows it uploaded.
Any failure raises before the local vault is touched.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import CancelledError, ErrorCode, SyncError, SyncObjectGoneError, SyncRolledBackError, SyncTamperedError
from ..i18n import _, msg
from ..vault.keys import VaultKeys
from . import snapshots
from .ahead import LARGE_AHEAD, Ahead
from .policy import Change
from .revtree import Rev
from .sealing import DEVICES, Head, bundle_ad, bundle_name, device_ids, digest, head_name, unseal
from .state import SyncState
from .targets import Target
from .threeway import MERGE_DEVICE


@dataclass(frozen=True)
class Incoming:
    """One verified bundle: (record id, revision, payload or None for a deletion) in order."""

    device: str
    seq: int
    digest: str
    revs: list[tuple[str, Rev, str | None]]
    policy: list[Change] = field(default_factory=list)  # vault policy changes (policy.py)
    position: bool = field(default=True, kw_only=True)  # False: a part of a snapshot (stream.py), not a place in the chain


@dataclass
class Pulled:
    bundles: list[Incoming] = field(default_factory=list)
    devices: set[str] = field(default_factory=set)
    objects: int = 0
    bytes: int = 0
    heads: dict[str, Head] = field(default_factory=dict)  # every device's verified head, this one's too
    listing: list[str] = field(default_factory=list)  # the names under d/ when the pull began
    stream: Callable[[Pulled], None] | None = None  # told each time `bundles` grew (stream.py)

    def took(self, bundle: Incoming) -> None:
        self.bundles.append(bundle)
        if self.stream is not None:
            self.stream(self)


_PULLS = 3  # a pull that finds a named object gone lists the target again, up to this many times in all


def pull(target: Target, keys: VaultKeys, state: SyncState, *, cancel: threading.Event | None = None,
         progress: Callable[[str], None] | None = None, stream: Callable[[Pulled], None] | None = None) -> Pulled:
    """Every other device's verified news. Another device that compacts while this one reads
    deletes what its new head no longer needs (it writes that head first): an object found gone
    makes the pull start over from a fresh listing, so the race is not reported as damage.
    `stream` may commit bundles as they are read (stream.py): a pull that starts over then
    goes on from what was committed."""
    for attempt in range(_PULLS):
        try:
            return _pull_once(target, keys, state, cancel, progress, stream)
        except SyncObjectGoneError:
            if attempt == _PULLS - 1:
                raise
    raise AssertionError("unreachable")


def _pull_once(target: Target, keys: VaultKeys, state: SyncState, cancel: threading.Event | None,
               progress: Callable[[str], None] | None, stream: Callable[[Pulled], None] | None = None) -> Pulled:
    with Ahead(target.get) as ahead:
        return _read(target, ahead, keys, state, cancel, progress, stream)


def _read(target: Target, ahead: Ahead, keys: VaultKeys, state: SyncState, cancel: threading.Event | None,
          progress: Callable[[str], None] | None, stream: Callable[[Pulled], None] | None) -> Pulled:
    out = Pulled(stream=stream)
    names = out.listing = target.list(DEVICES)
    devices = device_ids(names)
    out.devices = set(devices) | {state.device}
    ahead.want(head_name(device) for device in [state.device, *devices] if head_name(device) in names)
    for device in devices:
        if device == state.device:
            continue
        if cancel is not None and cancel.is_set():
            raise CancelledError(msg("Sync cancelled; nothing was changed here."))
        blob = _fetch(ahead.take, head_name(device), out)
        if blob is None:
            continue  # bundles without a head yet: that device is still writing, or a copy is on its way
        head = out.heads[device] = Head.opened(keys.sync_aead("head"), keys.vault_id, device, blob)
        seq = state.seen.get(device, (0, ""))[0]
        if head.seq < seq:
            raise SyncRolledBackError(msg(
                "The sync target shows device {device} at bundle {shown}, but this vault already read up to "
                "bundle {seen}: the target was rolled back or an old copy was put in place. Nothing was changed "
                "here.", device=device, shown=head.seq, seen=seq))
    _check_own(ahead.take, keys, state, out)
    start, snaps = _adoptions(target, keys, state, out)
    for device in devices:
        known = out.heads.get(device)
        if device == state.device or known is None:
            continue
        head = known
        if cancel is not None and cancel.is_set():
            raise CancelledError(msg("Sync cancelled; nothing was changed here."))
        seq, prev = start.get(device) or state.seen.get(device, (0, ""))
        if device in snaps:  # read already for a forgotten device it carries
            snap = snaps[device]
            if snap.upto > seq:
                seq, prev = snap.upto, snap.digest
        elif snapshots.wanted(head, seq, snapshots.OwnObjects.listed(names, device).bundles):
            seq, prev = _from_snapshot(ahead, keys, head, out)
        prev = _bundles(ahead, keys, head, seq, prev, out, progress)
        if prev != head.digest:
            raise SyncTamperedError(msg("The head of device {device} does not match its last bundle: the chain was "
                                        "truncated or replaced. Nothing was changed here.", device=device))
    return out


def _from_snapshot(ahead: Ahead, keys: VaultKeys, head: Head, out: Pulled) -> tuple[int, str]:
    """Read the snapshot the head names, its parts fetched ahead as bundles are; (the bundle it
    reaches, that bundle's digest). A streamed pull takes it a part at a time, the device's
    position with the last."""
    each = None if out.stream is None else (lambda revs: out.took(Incoming(head.device, 0, "", revs, position=False)))
    snap = snapshots.read(keys.sync_aead("snapshot"), keys.vault_id, head, lambda n: _fetch(ahead.take, n, out), each,
                          lambda names: ahead.want(names, depth=None))  # as many as part 0's size allows
    out.took(Incoming(head.device, snap.upto, snap.digest, snap.revs, snap.policy))
    return snap.upto, snap.digest


def _bundles(ahead: Ahead, keys: VaultKeys, head: Head, seq: int, prev: str, out: Pulled,
             progress: Callable[[str], None] | None) -> str:
    """Read bundles seq+1 up to the head's, in order; the last one's digest. A bundle that is
    damaged or gone but that the head's snapshot covers is read from that snapshot instead
    (the sealed head names its digest): a reader behind is not stuck on it."""
    number, first = seq, seq + 1
    ahead.want((bundle_name(head.device, n) for n in range(first, head.seq + 1)), depth=LARGE_AHEAD)  # may be large
    while number < head.seq:
        number += 1
        if progress is not None and (number - first) % 50 == 0:
            progress(_("device {device}: bundle {number}/{total}").format(device=head.device, number=number,
                                                                          total=head.seq))
        try:
            prev = _bundle(ahead.take, keys, head.device, number, prev, out)
        except SyncTamperedError:
            if number > head.snap:
                raise
            ahead.drop(bundle_name(head.device, n) for n in range(number + 1, head.snap + 1))
            number, prev = _from_snapshot(ahead, keys, head, out)
    return prev


def adopters(heads: dict[str, Head], device: str) -> tuple[str, int] | None:
    """The device whose snapshot carries `device`'s chain the furthest, and up to which bundle."""
    best = max(((h.adopted[device], d) for d, h in heads.items() if device in h.adopted and d != device), default=None)
    return (best[1], best[0]) if best is not None else None


def _adoptions(target: Target, keys: VaultKeys, state: SyncState, out: Pulled
               ) -> tuple[dict[str, tuple[int, str]], dict[str, snapshots.Snapshot]]:
    """A forgotten device whose bundles this vault still needs were deleted once another device's
    snapshot carried them: read them there. (Where each such device's chain now starts here, the
    carrying snapshots read.)"""
    start: dict[str, tuple[int, str]] = {}
    snaps: dict[str, snapshots.Snapshot] = {}
    carried = sorted({d for h in out.heads.values() for d in h.adopted} - {state.device})
    for device in carried:
        found = adopters(out.heads, device)
        seq = state.seen.get(device, (0, ""))[0]
        head = out.heads.get(device)
        listed = snapshots.OwnObjects.listed(out.listing, device).bundles
        if found is None or seq >= found[1] or seq + 1 in listed or (
                head is not None and head.snap >= found[1]
                and snapshots.snapshot_name(device, head.snap, 0) in out.listing):
            continue  # read already, its bundles are there, or its own snapshot covers as much
        adopter = found[0]
        if adopter not in snaps:
            snap = snaps[adopter] = snapshots.read(keys.sync_aead("snapshot"), keys.vault_id, out.heads[adopter],
                                                   lambda n: _fetch(target.get, n, out))
            here = state.seen.get(adopter, (0, ""))
            out.bundles.append(Incoming(adopter, *(max((snap.upto, snap.digest), here)), snap.revs, snap.policy))
        pos = snaps[adopter].adopted.get(device)
        if pos is None or pos[0] < found[1]:
            raise SyncTamperedError(msg("The snapshot of device {device} is malformed or is not the one its head "
                                        "names: it was altered, replaced by another or an older one. Nothing was "
                                        "changed here.", device=adopter))
        out.bundles.append(Incoming(device, pos[0], pos[1], []))
        start[device] = pos
    return start, snaps


def _fetch(get: Callable[[str], bytes | None], name: str, out: Pulled) -> bytes | None:
    blob = get(name)
    if blob is not None:
        out.objects += 1
        out.bytes += len(blob)
    return blob


def _check_own(get: Callable[[str], bytes | None], keys: VaultKeys, state: SyncState, out: Pulled) -> None:
    """The target must hold at least what this vault knows it uploaded of its own chain."""
    uploaded = state.own_seq - len(state.outbox)
    blob = _fetch(get, head_name(state.device), out)
    head = Head.opened(keys.sync_aead("head"), keys.vault_id, state.device, blob) if blob is not None else None
    if head is not None:
        out.heads[state.device] = head
    carried = adopters(out.heads, state.device)  # forgotten, and its objects deleted once carried elsewhere
    shown = head.seq if head is not None else carried[1] if carried is not None else 0
    if shown < uploaded:
        raise SyncRolledBackError(msg(
            "The sync target shows this device's changes only up to bundle {shown}, but {uploaded} were uploaded: "
            "the target was rolled back or replaced by an older copy. Nothing was changed here.",
            shown=shown, uploaded=uploaded))
    if shown > state.own_seq:
        raise SyncError(msg("The sync target holds more of this device's changes than this vault file knows "
                            "(was the vault restored from a backup?). Sync with --as-new-device to go on as a new "
                            "device; nothing is lost."), code=ErrorCode.SYNC_DEVICE_BEHIND)
    if head is not None and head.seq == state.own_seq and head.digest != state.own_digest:
        raise SyncTamperedError(msg("This device's head in the sync target names a bundle this device never "
                                    "wrote. Nothing was changed here."))


def _bundle(get: Callable[[str], bytes | None], keys: VaultKeys, device: str, number: int, prev: str,
            out: Pulled) -> str:
    """Fetch, open and check bundle `number` of `device`; its digest (the next one's `prev`)."""
    blob = _fetch(get, bundle_name(device, number), out)
    if blob is None:
        raise SyncObjectGoneError(msg("Bundle {number} of device {device} is missing from the sync target although "
                                    "its head names it or a later one (dropped, or a sync tool has not copied it yet: "
                                    "sync again later). Nothing was changed here.", number=number, device=device))
    value = unseal(keys.sync_aead("bundle"), blob, bundle_ad(keys.vault_id, device, number),
                   f"Bundle {number} of device {device}")
    if not isinstance(value, dict) or value.get("prev") != prev:
        raise SyncTamperedError(msg("Bundle {number} of device {device} does not follow the one before it: bundles "
                                    "were dropped, reordered or replaced. Nothing was changed here.",
                                    number=number, device=device))
    try:
        revs = []
        for item in value["revs"]:
            rev = Rev.from_list(item["rev"], item["e"])
            payload = item["x"]
            if not (isinstance(item["id"], str) and isinstance(item["rev"], str) and _written_by(rev, device)
                    and (payload is None) == rev.deleted and (payload is None or isinstance(payload, str))):
                raise ValueError("inconsistent revision")
            revs.append((item["id"], rev, payload))
        changes = [Change.from_json(item) for item in value.get("policy", [])]
        if any(c.device != device for c in changes):
            raise ValueError("a policy change of another device")
    except (KeyError, TypeError, ValueError):
        raise SyncTamperedError(msg("Bundle {number} of device {device} is malformed.", number=number,
                                    device=device)) from None
    dig = digest(blob)
    out.took(Incoming(device, number, dig, revs, changes))
    return dig


def entry(record_id: str, rev: Rev, payload: str | None) -> dict[str, object]:
    """One revision as a bundle carries it."""
    return {"id": record_id, "rev": rev.rev_id, "e": rev.to_list(), "x": payload}


__all__ = ["Incoming", "Pulled", "entry", "pull"]


def _written_by(rev: Rev, device: str) -> bool:
    """A device writes its own revisions, and merged ones (the same wherever they were made)."""
    return rev.device == device or (rev.device == MERGE_DEVICE and len(rev.parents) == 2 and not rev.deleted)
