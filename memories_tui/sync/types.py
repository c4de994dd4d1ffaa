"""What sync reports to front ends: a sync's figures, a join, the conflicts kept. Standard
library only, so front ends and the engine facade load them without the sync machinery."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..serial import Jsonable


@dataclass(frozen=True)
class SyncReport(Jsonable):
    vault_id: str
    target: str
    device: str
    devices: int  # devices seen in the target, this one included
    pushed_revisions: int
    pushed_objects: int
    pushed_bytes: int
    pulled_revisions: int
    fetched_objects: int
    fetched_bytes: int
    written: int  # records this sync wrote or deleted in the vault
    conflicts: int  # records with kept conflicting revisions after it
    passphrase_adopted: bool = False  # another device changed the passphrase: this vault file now takes the new one
    policy_pulled: list[str] = field(default_factory=list)  # vault policy another device changed (device_only)
    policy_conflicts: list[str] = field(default_factory=list)  # policy changed on two devices at once (one won)
    left: int = 0  # records changed here that wait for the next sync (this one was stopped between two parts)
    resent_bundles: int = 0  # bundles an earlier sync committed but could not upload, sent by this one


@dataclass(frozen=True)
class ConflictRevision(Jsonable):
    revision: str  # the sync revision id (not a vault revision number)
    deleted: bool  # a deletion an edit beat (reported, not applied)
    title: str | None
    body: str | None
    base: str | None = None  # the body both sides came from, when this vault still holds it
    here: bool = False  # made on this device (e.g. a deletion made here that another device's edit beat)


@dataclass(frozen=True)
class Conflict(Jsonable):
    """A record whose edits on several devices did not see each other: the vault holds the
    winner (the same on every device), `kept` the revisions that lost."""

    record_id: str
    title: str | None  # the winner's title (None when the winner is a deletion)
    kept: list[ConflictRevision] = field(default_factory=list)

    def named_by(self, keep: str) -> list[ConflictRevision]:
        """The kept revisions `keep` names: the one with that id, else each one whose id starts
        with it (as `memory conflicts` lists them, a unique start is enough)."""
        keep = keep.strip().lower()
        return [k for k in self.kept if k.revision == keep] or [
            k for k in self.kept if keep and k.revision.startswith(keep)]


@dataclass(frozen=True)
class JoinReport(Jsonable):
    vault_id: str
    name: str
    path: Path
    sync: SyncReport


@dataclass(frozen=True)
class DeviceInfo(Jsonable):
    """A device that wrote to the target, as its authenticated head says."""

    device: str
    bundles: int  # bundles it has written
    last_seen: str  # when it last wrote its head (its own clock, UTC)
    this_device: bool
    read_here: int  # how many of its bundles this device has read
    name: str = ""  # what it calls itself (`[sync] device_name` there, else its host name); "" from older builds


@dataclass(frozen=True)
class SyncProgress(Jsonable):
    """How far a sync is: `stage` "pull" (bundles fetched of those the other devices' heads
    name) or "push" (objects uploaded); `total` 0 while it is not known yet."""

    stage: str
    done: int
    total: int
    bytes: int  # fetched ("pull") or sent ("push") so far
