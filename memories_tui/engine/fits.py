"""Whether a write keeps a vault within its index limits, checked before anything is written.

A vault over `[rag.limits]` is one no search can load, so every path that writes searchable
text (record add and update, ingest, the TUI editor and the daemon through them) asks here
first. Usage comes from the vault's cached index when it is current, else from the records
themselves, with the counts the saved index snapshot holds for records it has seen (so a
command in its own process chunks only what changed since the last search). A write that
does not grow the vault is never refused, so the record that put a vault over a limit (by an older version, or limits lowered
afterwards) can still be shrunk or replaced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..errors import LimitError
from ..i18n import N_, Message, msg
from ..index.cache import MIB, safe_metadata_text
from ..text.chunking import DEFAULT_MAX_CHARS, chunk_text
from ..vault.records import Record, is_searchable

if TYPE_CHECKING:
    from .context import VaultContext


def count_chunks(body: str) -> int:
    if len(body) <= DEFAULT_MAX_CHARS:  # chunk_text would make it one chunk (none when blank)
        return 1 if body.strip() else 0
    return len(chunk_text(body))


def record_bytes(record: Record) -> int:
    """What the index counts against `source_mib` for a record."""
    return len(record.body.encode()) + len(record.title.encode()) + len(safe_metadata_text(record).encode())


FitCheck = Callable[[list[tuple[str, str]], list[Record]], None]  # raises VaultFullError
FULL_CHUNKS = N_("not written: the vault is at its [rag.limits] chunks limit, past which no search could load it; "
                 "raise the limit and run this again to add the rest")
FULL_BYTES = N_("not written: the vault is at its [rag.limits] source_mib limit, past which no search could load "
                "it; raise the limit and run this again to add the rest")


class VaultFullError(LimitError):
    """A write would take the vault past a limit; `reason` says which, for a file left out."""

    def __init__(self, message: str | Message, reason: str = FULL_CHUNKS, *, code: str | None = None) -> None:
        super().__init__(message, code=code)  # the arguments of every MemoriesError: a front end may re-raise it
        self.reason = reason


def fit_checker(ctx: VaultContext) -> FitCheck:
    """`check_write_fits` for one vault, counting its usage once per change of the vault (a
    sync that halves a batch to find what fits asks many times with nothing written between)."""
    memo: dict[int, tuple[int, int]] = {}
    return lambda added, replaced: check_write_fits(ctx, added, replaced, memo)


def fitting(check: FitCheck, items: Sequence[tuple[str, str, Record | None]]) -> tuple[int, str]:
    """How many leading `items` ((title, body, the record it replaces)) can be written, and the
    reason the next cannot ("" when all fit). Found by halving: a few checks, not one per item."""
    def fails(k: int) -> str:
        try:
            check([(t, b) for t, b, _ in items[:k]], [r for _, _, r in items[:k] if r is not None])
        except VaultFullError as exc:
            return exc.reason
        return ""

    why = fails(len(items))
    if not why:
        return len(items), ""
    good, bad = 0, len(items)  # `good` items fit (none always does), `bad` do not
    while bad - good > 1:
        mid = (good + bad) // 2
        reason = fails(mid)
        if reason:
            bad, why = mid, reason
        else:
            good = mid
    return good, why


def check_write_fits(ctx: VaultContext, added: Sequence[tuple[str, str]], replaced: Sequence[Record],
                     memo: dict[int, tuple[int, int]] | None = None) -> None:
    """Raise VaultFullError (a LimitError) when writing searchable `added` (title, body) pairs in
    place of `replaced` records would take the vault past `[rag.limits]`; nothing is written then.
    `memo` keeps the vault's usage by change counter across calls."""
    added = [(t, b) for t, b in added]
    replaced = [r for r in replaced if is_searchable(r.kind)]
    if not added:
        return
    limits = ctx.config.rag.limits
    add_bytes = sum(len(t.encode()) + len(b.encode()) for t, b in added)
    gone_bytes = sum(map(record_bytes, replaced))
    cap_bytes = limits.source_mib * MIB
    usage: list[tuple[int, int]] = []  # (chunks, bytes) of the vault now, counted once when needed

    def used() -> tuple[int, int]:
        if not usage:
            if memo is None:
                usage.append(_usage(ctx))
            else:
                counter = ctx.vault.change_counter()
                if counter not in memo:
                    memo.clear()
                    memo[counter] = _usage(ctx)
                usage.append(memo[counter])
        return usage[0]

    if add_bytes > gone_bytes:
        after_bytes = used()[1] - gone_bytes + add_bytes
        if after_bytes > cap_bytes:
            raise VaultFullError(msg(
                "This would bring the vault to {used:.1f} MiB of source text and metadata; the limit is "
                "{source_mib:g} MiB per vault ([rag.limits] source_mib in the config), past which no search could "
                "load it. Nothing was written: store less text, or raise the limit.",
                used=after_bytes / MIB, source_mib=limits.source_mib), FULL_BYTES)
    add_chunks = sum(count_chunks(b) for _, b in added)
    gone_chunks = sum(count_chunks(r.body) for r in replaced)
    if add_chunks <= gone_chunks:
        return
    after = used()[0] - gone_chunks + add_chunks
    if after > limits.chunks:
        raise VaultFullError(msg(
            "This would bring the vault to {after:,} chunks; the limit is {limit:,} chunks per vault ([rag.limits] "
            "chunks in the config), past which no search could load it. Nothing was written: store less text, or "
            "raise the limit.", after=after, limit=limits.chunks), FULL_CHUNKS)


def _usage(ctx: VaultContext) -> tuple[int, int]:
    """(chunks, source bytes): the cached index's when it matches the vault now, else counted."""
    index = ctx.cached_index()
    if index is not None and index.synced_counter == ctx.entry.counter == ctx.vault.change_counter():
        return len(index.chunks), int(index.source_bytes)
    return _counted(ctx)


def _counted(ctx: VaultContext) -> tuple[int, int]:
    """(chunks, source bytes) of the searchable records, exactly, without building an index:
    a record the saved index snapshot counted at its current revision is taken from there
    (not even decrypted), a short one is one chunk, and only the rest are chunked here."""
    from ..index.cache import SNAPSHOT_BLOB, VaultIndex

    data = ctx.vault.get_blob(SNAPSHOT_BLOB)
    known = VaultIndex.snapshot_usage(data) if data is not None else {}
    _, live, changed = ctx.vault.refresh({record_id: seen[0] for record_id, seen in known.items()})
    fresh = {record.id for record in changed}
    chunks = sum(known[record_id][1] for record_id in live if record_id in known and record_id not in fresh)
    nbytes = sum(known[record_id][2] for record_id in live if record_id in known and record_id not in fresh)
    for record in changed:
        if is_searchable(record.kind):
            chunks += count_chunks(record.body)
            nbytes += record_bytes(record)
    return chunks, nbytes
