"""How much a sync target can make a device read: objects and listings are refused past these
bounds, before or as they arrive (docs/sync.md's threat model), so a hostile or broken target
cannot make a sync hold unbounded memory or list for ever."""

from __future__ import annotations

from ..errors import SyncTamperedError
from ..i18n import msg

MAX_OBJECT_BYTES = 1 << 30  # far above any object Memories writes (bundles and snapshot parts are cut at 4 MiB;
# one record alone is at most a 64 MiB file as base64, escaped twice): what a target can make a sync hold
MAX_LISTED_NAMES = 1_000_000  # objects under one vault's prefix: compaction keeps a few per device, and
# without it one bundle a sync that changed something is written (a listing pages without end otherwise)


def too_large(name: str, where: str) -> SyncTamperedError:
    """An object larger than MAX_OBJECT_BYTES: refused before it is read whole."""
    return SyncTamperedError(msg("The object {name} in the sync target {target} is larger than any Memories writes "
                                 "({limit} MiB); refusing it. Nothing was changed here.", name=name, target=where,
                                 limit=MAX_OBJECT_BYTES >> 20))


def too_many(where: str) -> SyncTamperedError:
    """A listing of more than MAX_LISTED_NAMES objects: refused as it grows."""
    return SyncTamperedError(msg("The sync target {target} lists more than {limit} objects for this vault, far more "
                                 "than Memories writes; refusing it. Nothing was changed here.", target=where,
                                 limit=f"{MAX_LISTED_NAMES:,}"))
