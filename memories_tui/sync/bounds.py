"""How much a sync target can make a device read, and for how long: objects and listings are
refused past these bounds, before or as they arrive, and a read that outlasts MAX_WAIT_SECONDS
is given up (docs/sync.md's threat model), so a hostile or broken target cannot make a sync
hold unbounded memory, list for ever or trickle an object a byte at a time for ever."""

from __future__ import annotations

from ..errors import ErrorCode, SyncError, SyncTamperedError
from ..i18n import msg

MAX_OBJECT_BYTES = 1 << 30  # far above any object Memories writes (bundles and snapshot parts are cut at 4 MiB;
# one record alone is at most a 64 MiB file as base64, escaped twice): what a target can make a sync hold
MAX_SMALL_BYTES = 1 << 20  # a head or a forgotten mark (a few hundred bytes, a few more per device)
MAX_JOIN_BYTES = 64 << 10  # the join record (about 400 bytes): read and parsed at every sync
AHEAD_BYTES = 16 << 20  # fetched before its turn only up to this (sync/ahead.py), so objects read at once
# hold at most one of MAX_OBJECT_BYTES: a target that put several of 1 GiB in a row held 7 GB at a time
MAX_LISTING_BYTES = 64 << 20  # one answer of a listing (a WebDAV folder's PROPFIND): about 250,000 names
MAX_LISTED_NAMES = 1_000_000  # objects under one vault's prefix: compaction keeps a few per device, and
# without it one bundle a sync that changed something is written (a listing pages without end otherwise)
MAX_WAIT_SECONDS = 900.0  # one object read or one listing, start to end: a 64 MiB asset takes 9 minutes at
# 1 Mbit/s; a server that sends a byte just inside each read timeout would go on for days


class ObjectTooLarge(SyncTamperedError):
    """An object over its bound (`limit_for`, or the smaller one a fetch ahead asked for)."""


def limit_for(name: str, asked: int | None = None) -> int:
    """How many bytes the object `name` may hold: Memories' own small objects have small bounds,
    so a target cannot make every sync parse a gigabyte of "join record" or "head"; `asked`
    lowers it further (a fetch ahead of its turn)."""
    from .sealing import JOIN_NAME

    if name == JOIN_NAME:
        limit = MAX_JOIN_BYTES
    elif name.endswith(("/head", "/forgotten")):
        limit = MAX_SMALL_BYTES
    else:
        limit = MAX_OBJECT_BYTES
    return limit if asked is None else min(limit, asked)


def too_large(name: str, where: str, limit: int = MAX_OBJECT_BYTES) -> ObjectTooLarge:
    """An object larger than `limit`: refused before it is read whole."""
    return ObjectTooLarge(msg("The object {name} in the sync target {target} is larger than Memories writes it "
                              "({limit} KiB at most); refusing it. Nothing was changed here.", name=name,
                              target=where, limit=f"{limit >> 10:,}"))


def too_many(where: str) -> SyncTamperedError:
    """A listing of more than MAX_LISTED_NAMES objects: refused as it grows."""
    return SyncTamperedError(msg("The sync target {target} lists more than {limit} objects for this vault, far more "
                                 "than Memories writes; refusing it. Nothing was changed here.", target=where,
                                 limit=f"{MAX_LISTED_NAMES:,}"))


def too_slow(where: str, name: str | None) -> SyncError:
    """An object read (`name`) or a listing (None) still going after MAX_WAIT_SECONDS: given up."""
    minutes = f"{MAX_WAIT_SECONDS / 60:.3g}"
    if name is None:
        text = msg("The sync target {target} took more than {minutes} minutes to list this vault's objects; "
                   "stopping this sync. Nothing was changed here; sync again once it answers as it should.",
                   target=where, minutes=minutes)
    else:
        text = msg("The sync target {target} took more than {minutes} minutes to send the object {name}; stopping "
                   "this sync. Nothing was changed here; sync again once it answers as it should.", target=where,
                   minutes=minutes, name=name)
    return SyncError(text, code=ErrorCode.SYNC_TARGET_UNREACHABLE)
