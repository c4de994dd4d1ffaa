"""The egress log for the engine: the hook bound to one open vault, and reading the log back.

`VaultEgress.opened` runs just before a request to a model service goes out: it names the
records behind the chunk hashes the request carries (from the vault's index), adds the MCP
client that caused it (`on_behalf_of`), and writes the entry; if that write fails the request
is not sent. The entry is rewritten with the outcome afterwards; a lock in between leaves it
saying "sending" (sent, end not recorded).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from ..egress import Finish, Outbound, SentChunk, current_origin
from ..errors import ErrorCode, MemoriesError, TamperError, UsageError
from ..i18n import msg
from ..serial import Jsonable
from ..vault.egress_log import EGRESS_MARK, EgressEntry

if TYPE_CHECKING:
    from ..index.cache import IndexCache
    from ..vault.store import UnlockedVault

_RELATIVE = re.compile(r"^(\d{1,6})([hdw])$")


@dataclass(frozen=True)
class EgressReport(Jsonable):
    """`rag egress`: the entries (oldest first) and what is wrong with the log, if anything."""

    vault_id: str
    name: str
    since: str | None
    entries: list[EgressEntry]
    damaged: list[int] = field(default_factory=list)  # entries that failed their checks
    missing: list[int] = field(default_factory=list)  # sequence numbers deleted from the middle


class VaultEgress:
    """The `EgressHook` of one unlocked vault (see models/remote.py `post_json`); `indexes`
    gives the engine's index cache (None before any index was built), to name chunks' records."""

    def __init__(self, vault: UnlockedVault, indexes: Callable[[], IndexCache | None]) -> None:
        self.vault = vault
        self.indexes = indexes

    def opened(self, request: Outbound) -> Finish:
        log = self.vault.egress
        settings = self.vault.settings()
        if not settings.get(EGRESS_MARK):  # a vault older than the mark: from now on a lost table shows
            self.vault.set_settings({**settings, EGRESS_MARK: True})
        entry = log.append(EgressEntry(seq=0, time=_stamp(datetime.now(UTC)), host=request.host,
                                       purpose=request.purpose, loopback=request.loopback,
                                       chunks=self._named(request.chunks), bytes_sent=request.bytes_sent,
                                       client=current_origin()))

        def finish(outcome: str, received: int, attempts: int) -> None:
            try:
                log.rewrite(replace(entry, outcome=outcome, bytes_received=received, attempts=attempts))
            except MemoriesError:
                pass  # locked meanwhile: the entry stays "sending" (sent, end not recorded)

        return finish

    def _named(self, chunks: tuple[SentChunk, ...]) -> tuple[SentChunk, ...]:
        """Chunks sent by hash alone (embedding) get their record id and revision from the index;
        a text shared by several records names each of them."""
        if all(c.record_id is not None for c in chunks):
            return chunks
        cache = self.indexes()
        index = cache.peek(self.vault.vault_id) if cache is not None else None
        owners: dict[str, list[tuple[str, int]]] = {}
        if index is not None:
            wanted = {c.chunk_hash for c in chunks if c.record_id is None}
            with index.lock:
                for item in index.chunks.values():
                    if item.chunk.chunk_hash in wanted:
                        owners.setdefault(item.chunk.chunk_hash, []).append((item.record_id, item.revision))
        out: list[SentChunk] = []
        for chunk in chunks:
            if chunk.record_id is not None or chunk.chunk_hash not in owners:
                out.append(chunk)
            else:
                out.extend(SentChunk(record_id, rev, chunk.chunk_hash)
                           for record_id, rev in sorted(set(owners[chunk.chunk_hash])))
        return tuple(out)


def mark_kept_log(vault: UnlockedVault) -> None:
    """At unlock: a vault whose file has the log table but not yet the mark (made before the
    mark existed) gets it, so from now on a dropped table reads as damage. Best effort: a file
    that cannot be written (read-only media) still unlocks."""
    try:
        settings = vault.settings()
        if not settings.get(EGRESS_MARK) and vault.egress.exists():
            vault.set_settings({**settings, EGRESS_MARK: True})
    except MemoriesError:
        pass


def read_egress(vault: UnlockedVault, since: str | None = None) -> EgressReport:
    cutoff = parse_since(since)
    if not vault.egress.exists() and vault.settings().get(EGRESS_MARK):
        raise TamperError(msg(
            "{name}: the egress log is missing (its table was removed from the vault file), so what this vault "
            "sent out can no longer be shown. The file was altered outside Memories; restore the vault from a "
            "backup (`memories vault restore`) to get the log back.", name=vault.name), code=ErrorCode.EGRESS_LOG_MISSING)
    read = vault.egress.read(cutoff)
    return EgressReport(vault.vault_id, vault.name, cutoff, read.entries, read.damaged, read.missing)


def parse_since(text: str | None, now: datetime | None = None) -> str | None:
    """`2026-12-01`, `2026-12-01T08:00`, an ISO time with an offset, or `24h` / `7d` / `2w` ago:
    the UTC time the log compares with (entries at or after it)."""
    if text is None:
        return None
    value = text.strip()
    relative = _RELATIVE.match(value)
    if relative:
        amount, unit = int(relative[1]), relative[2]
        delta = {"h": timedelta(hours=amount), "d": timedelta(days=amount), "w": timedelta(weeks=amount)}[unit]
        return _stamp((now or datetime.now(UTC)) - delta)
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(msg("--since takes a date (2026-12-01), a time (2026-12-01T08:00, UTC unless it has an "
                             "offset) or an age (24h, 7d, 2w); got {text!r}.", text=text)) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return _stamp(moment)


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
