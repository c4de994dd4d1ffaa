"""Revision trees, one per record (as CouchDB keeps them): every revision names its parents, so
two edits that did not see each other are two leaves, never an overwrite.

The winner among the leaves is chosen the same way on every device: a live revision beats a
deletion (an edit beats a concurrent delete), then the later hybrid-clock stamp, then the
device id and the revision id as tie-breakers. The other live leaves are the conflicts.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

from .hlc import Stamp


@dataclass(frozen=True)
class Rev:
    rev_id: str
    parents: tuple[str, ...]
    stamp: Stamp
    device: str
    deleted: bool
    kind: str

    def order(self) -> tuple[bool, Stamp, str, str]:
        return (not self.deleted, self.stamp, self.device, self.rev_id)

    def to_list(self) -> list[object]:
        return [list(self.parents), self.stamp.ms, self.stamp.counter, self.device, self.deleted, self.kind]

    @classmethod
    def from_list(cls, rev_id: str, row: list[object]) -> Rev:
        parents, ms, counter, device, deleted, kind = row
        if not (isinstance(parents, list) and all(isinstance(p, str) for p in parents) and type(ms) is int
                and type(counter) is int and isinstance(device, str) and isinstance(deleted, bool)
                and isinstance(kind, str)):
            raise ValueError("a revision entry has a field of the wrong type")
        return cls(rev_id, tuple(parents), Stamp(ms, counter), device, deleted, kind)


_PACK = struct.Struct(">I").pack
_REV_LABEL = _PACK(6) + b"rev/v1"


def rev_id_for(record_id: str, parents: tuple[str, ...], stamp: Stamp, device: str, deleted: bool,
               payload: bytes) -> str:
    """A content-derived id: the same revision has the same id everywhere. The hash of
    length_prefixed("rev/v1", record_id, sorted parents joined by ",", stamp ms, stamp counter,
    device, int(deleted), the payload's SHA-256 hex), unrolled: a first push derives one a record."""
    parts = (record_id.encode("utf-8"), ",".join(sorted(parents)).encode("utf-8"), str(stamp.ms).encode(),
             str(stamp.counter).encode(), device.encode("utf-8"), b"1" if deleted else b"0",
             hashlib.sha256(payload).hexdigest().encode())
    data = _REV_LABEL + b"".join([_PACK(len(part)) + part for part in parts])
    return hashlib.sha256(data).hexdigest()[:24]


class RevTree:
    def __init__(self, revs: dict[str, Rev] | None = None) -> None:
        self.revs: dict[str, Rev] = dict(revs or {})
        self._leaves: list[Rev] | None = None  # settling a record asks several times; `add` forgets it

    def add(self, rev: Rev) -> bool:
        """False when the revision was known already (a replay changes nothing)."""
        if rev.rev_id in self.revs:
            return False
        self.revs[rev.rev_id] = rev
        self._leaves = None
        return True

    def leaves(self) -> list[Rev]:
        if self._leaves is None:
            if len(self.revs) == 1:
                self._leaves = list(self.revs.values())
            else:
                named = {p for rev in self.revs.values() for p in rev.parents}
                self._leaves = [rev for rev in self.revs.values() if rev.rev_id not in named]
        return list(self._leaves)

    def winner(self) -> Rev | None:
        leaves = self.leaves()
        if len(leaves) == 1:
            return leaves[0]
        return max(leaves, key=Rev.order) if leaves else None

    def losers(self) -> list[Rev]:
        """Leaves other than the winner, newest first: live ones are conflicts, deleted ones are
        deletions an edit beat (reported, never applied)."""
        winner = self.winner()
        return sorted((r for r in self.leaves() if winner is None or r.rev_id != winner.rev_id),
                      key=Rev.order, reverse=True)
