"""Snapshots: one device's chain up to bundle N in a few objects, for devices that would
otherwise read every bundle (a new device, one far behind).

A snapshot holds every revision of bundles 1..N in chain order; a revision that a later
revision names as its parent keeps its place in the tree but not its content (nobody reading
the snapshot can end with it as a leaf, the child comes along). It is cut into parts of about
BUNDLE_BYTES, `d/<device>/s<N>-<part>`, each AES-256-GCM sealed with its own subkey
(`sync-snapshot`) under associated data binding the vault, the device, N and the part number,
and each naming the digest of bundle N, so the chain after it still links up. The device's
head names N and the digest of the parts together: a snapshot the head does not name, an older
one, a part dropped or swapped is refused.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import SyncObjectGoneError, SyncTamperedError
from ..i18n import msg
from ..vault.crypto import length_prefixed
from .policy import Change
from .revtree import Rev
from .sealing import Head, cut_by_size, digest, seal, unseal
from .threeway import MERGE_DEVICE

PART_BYTES = 4 << 20
FAR_BEHIND = 500  # a reader this many bundles behind takes the snapshot even though the bundles are there
_PART = re.compile(r"^s(\d{10})-(\d{4})$")

Entry = dict[str, Any]  # one revision as bundles carry it (chains.entry), "s": 1 when its content is left out


def snapshot_name(device: str, upto: int, part: int) -> str:
    return f"d/{device}/s{upto:010d}-{part:04d}"


def snapshot_ad(vault_id: str, device: str, upto: int, part: int) -> bytes:
    return length_prefixed("sync-snapshot/v1", vault_id, device, upto, part)


@dataclass(frozen=True)
class OwnObjects:
    """What one device has in the target, from a listing: bundle numbers and snapshot parts."""

    bundles: set[int]
    parts: set[tuple[int, int]]

    @classmethod
    def listed(cls, names: list[str], device: str) -> OwnObjects:
        bundles: set[int] = set()
        parts: set[tuple[int, int]] = set()
        prefix = f"d/{device}/"
        for name in names:
            if not name.startswith(prefix):
                continue
            rest = name[len(prefix):]
            found = _PART.match(rest)
            if rest.isdigit() and len(rest) == 10:
                bundles.add(int(rest))
            elif found:
                parts.add((int(found.group(1)), int(found.group(2))))
        return cls(bundles, parts)


def parts_digest(blobs: list[bytes]) -> str:
    return _digest_of([digest(b) for b in blobs])


def _digest_of(digests: list[str]) -> str:
    """The digest of a snapshot's parts, from each part's digest."""
    return hashlib.sha256("".join(digests).encode("ascii")).hexdigest()


def fold(entries: list[Entry]) -> list[Entry]:
    """The revisions once each, in order; content left out where a child in the same list takes
    over. Only a child in the snapshot itself counts: one another device wrote may reach a
    reader later than the snapshot does (a folder tool copies files in any order)."""
    out: dict[str, Entry] = {}
    for item in entries:
        out.setdefault(item["rev"], item)
    parents = {p for item in out.values() for p in item["e"][0]}
    folded = []
    for item in out.values():
        if item["x"] is not None and item["rev"] in parents:
            item = {"id": item["id"], "rev": item["rev"], "e": item["e"], "x": None, "s": 1}
        folded.append(item)
    return folded


Adopted = dict[str, tuple[int, str]]  # forgotten device -> (its last bundle carried, that bundle's digest)


def seal_parts(aead: AESGCM, vault_id: str, device: str, upto: int, last: str, entries: list[Entry],
               adopted: Adopted | None = None, policy: list[Change] | None = None) -> list[bytes]:
    """The sealed parts of the snapshot reaching bundle `upto` (whose digest is `last`); it also
    carries the chains of the forgotten devices in `adopted`, each up to the bundle named, and
    the latest policy change of each key that these devices made (the first part holds them)."""
    chunks = list(_chunks(entries)) or [[]]
    carried = {d: list(pos) for d, pos in sorted((adopted or {}).items())}
    changes = [change.to_json() for change in latest(policy or [])]
    return [seal(aead, {"upto": upto, "digest": last, "part": k, "parts": len(chunks), "revs": chunk,
                        **({"adopted": carried} if carried else {}), **({"policy": changes} if changes and not k else {})},
                 snapshot_ad(vault_id, device, upto, k)) for k, chunk in enumerate(chunks)]


def latest(changes: list[Change]) -> list[Change]:
    """The latest change of each key by each device (an earlier one of the same device is
    replaced by it everywhere), in a stable order."""
    out: dict[tuple[str, str], Change] = {}
    for change in changes:
        known = out.get((change.device, change.key))
        if known is None or change.ident > known.ident:
            out[(change.device, change.key)] = change
    return [out[pair] for pair in sorted(out)]


def _chunks(entries: list[Entry]) -> Iterator[list[Entry]]:
    return cut_by_size(entries, lambda item: len(item["x"] or "") + 160, PART_BYTES)


@dataclass(frozen=True)
class Snapshot:
    upto: int
    digest: str  # of bundle `upto`: the next bundle names it as its predecessor
    revs: list[tuple[str, Rev, str | None]]
    entries: list[Entry]
    adopted: Adopted = field(default_factory=dict)
    policy: list[Change] = field(default_factory=list)  # the writers' latest policy changes (policy.py)


def wanted(head: Head, seen: int, listed: set[int]) -> bool:
    """Read the snapshot rather than the bundles: a new device, a bundle already gone, or far behind."""
    return head.snap > seen and (seen == 0 or seen + 1 not in listed or head.snap - seen >= FAR_BEHIND)


def read(aead: AESGCM, vault_id: str, head: Head, fetch: Callable[[str], bytes | None],
         each: Callable[[list[tuple[str, Rev, str | None]]], None] | None = None,
         upcoming: Callable[[list[str]], None] | None = None) -> Snapshot:
    """The snapshot the head names, every part checked; SyncTamperedError otherwise. With
    `each`, each part's revisions are handed over once that part is checked (the digest of all
    parts is checked after the last; stream.py), and the Snapshot returned holds none. The first
    part says how many follow: `upcoming` is told their names then (to fetch them ahead)."""
    device, upto = head.device, head.snap
    digests: list[str] = []
    entries: list[Entry] = []
    last, total, k = "", 1, 0
    adopted: Adopted = {}
    policy: list[Any] = []
    writers = {device}
    while k < total:
        blob = fetch(snapshot_name(device, upto, k))
        if blob is None:
            raise SyncObjectGoneError(msg("The snapshot of device {device} is missing from the sync target although "
                                        "its head names it (dropped, or a sync tool has not copied it yet: sync "
                                        "again later). Nothing was changed here.", device=device))
        value = unseal(aead, blob, snapshot_ad(vault_id, device, upto, k), f"The snapshot of device {device}")
        try:
            if value["upto"] != upto or value["part"] != k or (k and (value["parts"], value["digest"]) != (total, last)):
                raise ValueError("part out of place")
            total, last = value["parts"], value["digest"]
            if type(total) is not int or not 1 <= total <= 100_000 or not isinstance(last, str) \
                    or not isinstance(value["revs"], list):
                raise ValueError("bad part count")
            if k == 0:
                adopted, policy = _adopted(value.get("adopted", {}), device), value.get("policy", [])
                writers |= set(adopted)
                if upcoming is not None and total > 1:
                    upcoming([snapshot_name(device, upto, n) for n in range(1, total)])
        except (KeyError, TypeError, ValueError):
            raise _malformed(device) from None
        if each is None:
            entries += value["revs"]
        else:
            each([_parsed(item, device, writers) for item in value["revs"]])
        digests.append(digest(blob))
        k += 1
    if _digest_of(digests) != head.snap_digest:
        raise _malformed(device)
    changes = _changes(policy, device, writers)
    return Snapshot(upto, last, [_parsed(item, device, writers) for item in entries], entries, adopted, changes)


def _changes(items: Any, device: str, writers: set[str]) -> list[Change]:
    try:
        if not isinstance(items, list):
            raise ValueError("policy")
        changes = [Change.from_json(item) for item in items]
        if any(change.device not in writers for change in changes):
            raise ValueError("a policy change of a device it does not carry")
    except (KeyError, TypeError, ValueError):
        raise _malformed(device) from None
    return changes


def _adopted(value: Any, device: str) -> Adopted:
    if not isinstance(value, dict):
        raise ValueError("adopted")
    out: Adopted = {}
    for other, pos in value.items():
        if not (isinstance(other, str) and other != device and isinstance(pos, list) and len(pos) == 2
                and type(pos[0]) is int and pos[0] > 0 and isinstance(pos[1], str)):
            raise ValueError("adopted")
        out[other] = (pos[0], pos[1])
    return out


def _parsed(item: Any, device: str, writers: set[str]) -> tuple[str, Rev, str | None]:
    try:
        rev = Rev.from_list(item["rev"], item["e"])
        payload, stripped = item["x"], item.get("s") == 1
        if not (isinstance(item["id"], str) and isinstance(item["rev"], str) and not (stripped and rev.deleted)
                and (rev.device in writers or (rev.device == MERGE_DEVICE and len(rev.parents) == 2 and not rev.deleted))
                and (payload is None) == (rev.deleted or stripped) and (payload is None or isinstance(payload, str))):
            raise ValueError("inconsistent revision")
    except (KeyError, TypeError, ValueError, AttributeError):
        raise _malformed(device) from None
    return item["id"], rev, payload


def _malformed(device: str) -> SyncTamperedError:
    return SyncTamperedError(msg("The snapshot of device {device} is malformed or is not the one its head names: "
                                 "it was altered, replaced by another or an older one. Nothing was changed here.",
                                 device=device))
