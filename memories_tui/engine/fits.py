"""Whether a write keeps a vault within its index limits, checked before anything is written.

A vault over `[rag.limits]` is one no search can load, so every path that writes searchable
text (record add and update, ingest, the TUI editor and the daemon through them) asks here
first. Usage comes from the vault's cached index when it is current, else from the records
themselves: byte counts exactly, chunk counts from a cheap upper bound, and only when that bound
could pass the limit from chunking every record. A write that does not grow the vault is never
refused, so the record that put a vault over a limit (by an older version, or limits lowered
afterwards) can still be shrunk or replaced.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import LimitError
from ..i18n import msg
from ..index.cache import MIB, safe_metadata_text
from ..text.chunking import DEFAULT_OVERLAP, chunk_text
from ..vault.records import Record, is_searchable

if TYPE_CHECKING:
    from ..index.cache import VaultIndex
    from .context import VaultContext

# A chunk ends at least half a window after its start and the next starts about an overlap
# before that end: each chunk moves on by more than one overlap (a safe floor for the bound).
_MIN_STRIDE = DEFAULT_OVERLAP


def count_chunks(body: str) -> int:
    return len(chunk_text(body))


def _most_chunks(body: str) -> int:
    return len(body) // _MIN_STRIDE + 2


def record_bytes(record: Record) -> int:
    """What the index counts against `source_mib` for a record."""
    return len(record.body.encode()) + len(record.title.encode()) + len(safe_metadata_text(record).encode())


def check_write_fits(ctx: VaultContext, added: Sequence[tuple[str, str]], replaced: Sequence[Record]) -> None:
    """Raise LimitError when writing searchable `added` (title, body) pairs in place of
    `replaced` records would take the vault past `[rag.limits]`; nothing is written then."""
    added = [(t, b) for t, b in added]
    replaced = [r for r in replaced if is_searchable(r.kind)]
    if not added:
        return
    limits = ctx.config.rag.limits
    add_bytes = sum(len(t.encode()) + len(b.encode()) for t, b in added)
    gone_bytes = sum(map(record_bytes, replaced))
    cap_bytes = limits.source_mib * MIB
    if add_bytes > gone_bytes:
        used = _used_bytes(ctx)
        after_bytes = used - gone_bytes + add_bytes
        if after_bytes > cap_bytes:
            raise LimitError(msg(
                "This would bring the vault to {used:.1f} MiB of source text and metadata; the limit is "
                "{source_mib:g} MiB per vault ([rag.limits] source_mib in the config), past which no search could "
                "load it. Nothing was written: store less text, or raise the limit.",
                used=after_bytes / MIB, source_mib=limits.source_mib))
    add_chunks = sum(count_chunks(b) for _, b in added)
    gone_chunks = sum(count_chunks(r.body) for r in replaced)
    if add_chunks <= gone_chunks:
        return
    after = _used_chunks(ctx, limits.chunks - add_chunks + gone_chunks) - gone_chunks + add_chunks
    if after > limits.chunks:
        raise LimitError(msg(
            "This would bring the vault to {after:,} chunks; the limit is {limit:,} chunks per vault ([rag.limits] "
            "chunks in the config), past which no search could load it. Nothing was written: store less text, or "
            "raise the limit.", after=after, limit=limits.chunks))


def _cached(ctx: VaultContext) -> VaultIndex | None:
    """The vault's cached index when it matches the vault now, else None (nothing is built)."""
    index = ctx.cached_index()
    if index is not None and index.synced_counter == ctx.entry.counter == ctx.vault.change_counter():
        return index
    return None


def _searchable(ctx: VaultContext) -> list[Record]:
    return [r for r in ctx.records().values() if is_searchable(r.kind)]


def _used_bytes(ctx: VaultContext) -> int:
    index = _cached(ctx)
    if index is not None:
        return int(index.source_bytes)
    return sum(map(record_bytes, _searchable(ctx)))


def _used_chunks(ctx: VaultContext, room: int) -> int:
    """The vault's chunk count; exact whenever it could exceed `room`."""
    index = _cached(ctx)
    if index is not None:
        return len(index.chunks)
    records = _searchable(ctx)
    bound = sum(_most_chunks(r.body) for r in records)
    if bound <= room:
        return bound
    return sum(count_chunks(r.body) for r in records)
