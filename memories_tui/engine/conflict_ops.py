"""The engine's conflict methods: list a vault's conflicts, resolve one, keep both sides.

Kept apart from sync_ops.py because they work on what the last sync left in the vault (its
kept revisions), never on a target: no network, no registry. `Engine` inherits them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ..errors import ErrorCode, NotFoundError, UsageError
from ..i18n import msg
from ..sync.types import Conflict
from .sync_ops import now_stamp

if TYPE_CHECKING:
    from ..sync.state import SyncState
    from ..vault.records import Record
    from ..vault.store import UnlockedVault
    from .parts import EngineParts


class ConflictOperations:
    """Mixed into `Engine`; every method works on one of the engine's open vaults."""

    def _conflict_vault(self, vault_id: str) -> UnlockedVault:
        return cast("EngineParts", self)._state.vaults.get(vault_id).vault

    def resolve_conflict(self, vault_id: str, record_id: str, keep: str | None = None) -> Conflict:
        """End a record's conflict: the vault keeps the winner (or the kept revision `keep`: its id
        or a unique start of it) as a new revision that, on the next sync, names every conflicting
        revision as its parent, so every device stops listing them. Keeping a deletion deletes the
        record here: the next sync sends a deletion with those parents, which every device then
        applies. Returns the conflict as it was."""
        import json

        from ..sync.run import load_state
        from ..vault.integrity import decode_payload
        from ..vault.records import Record

        vault = self._conflict_vault(vault_id)
        shown = {c.record_id: c for c in self.conflicts(vault_id)}
        if record_id not in shown:
            raise UsageError(msg("Record {record_id} has no conflict to resolve.", record_id=record_id),
                             code=ErrorCode.NO_CONFLICT)
        conflict = shown[record_id]
        state = load_state(vault)
        payload = state.kept[record_id][_named(vault.name, conflict, keep)] if keep is not None else None
        if keep is not None and payload is None:  # a deletion an edit beat: it wins now
            _delete_resolving(vault, state, record_id)
            return conflict
        current = vault.read(record_id)
        chosen = current
        if payload is not None:
            chosen = decode_payload(bytearray(payload.encode()), record_id, current.revision,
                                    json.loads(payload)["kind"], "A kept revision")
        fresh = Record(id=record_id, revision=current.revision + 1, kind=chosen.kind, title=chosen.title,
                       body=chosen.body, tags=chosen.tags, metadata=chosen.metadata, created=current.created,
                       updated=now_stamp(), data=chosen.data)
        state.resolving.add(record_id)
        vault.apply_synced(state.change(puts=[fresh], expected={record_id: current.revision}))
        return conflict

    def keep_both(self, vault_id: str, record_id: str) -> list[Record]:
        """End a record's conflict keeping every side: each kept revision with content becomes a
        new record (its title marked as a conflict copy), then the winner stays as
        `resolve_conflict` keeps it. Returns the copies."""
        import json

        from ..sync.run import load_state
        from ..vault.integrity import decode_payload
        from ..vault.records import NewRecord

        vault = self._conflict_vault(vault_id)
        if record_id not in {c.record_id for c in self.conflicts(vault_id)}:
            raise UsageError(msg("Record {record_id} has no conflict to resolve.", record_id=record_id),
                             code=ErrorCode.NO_CONFLICT)
        copies = []
        for payload in load_state(vault).kept.get(record_id, {}).values():
            if payload is None:
                continue
            kept = decode_payload(bytearray(payload.encode()), record_id, 1, json.loads(payload)["kind"],
                                  "A kept revision")  # a file's bytes come back as they were
            copies.append(NewRecord(kept.kind, msg("{title} (conflict copy)", title=kept.title).localized(),
                                    kept.body, tuple(kept.tags), _unlinked(kept.metadata), kept.data))
        files = [vault.add(c) for c in copies if c.kind == "asset"]  # as `add_asset` stores them: never indexed
        notes = [c for c in copies if c.kind != "asset"]
        made = self.add_records(vault_id, notes) if notes else []  # type: ignore[attr-defined]
        self.resolve_conflict(vault_id, record_id)
        return [*files, *made]

    def conflicted(self, vault_id: str, record_id: str) -> bool:
        """Whether the record has kept conflicting revisions (what MCP `memory_read` reports)."""
        from ..sync.run import load_state

        vault = self._conflict_vault(vault_id)
        return vault.sync_state() is not None and record_id in load_state(vault).kept

    def conflicts(self, vault_id: str) -> list[Conflict]:
        """Records with kept conflicting revisions (and deletions an edit beat), from the last sync;
        each with the body both sides came from when this vault still holds it."""
        from ..sync.conflicts import listed
        from ..sync.run import load_state

        vault = self._conflict_vault(vault_id)
        return listed(vault, load_state(vault))


def _named(vault_name: str, conflict: Conflict, keep: str) -> str:
    """The id of the one kept revision `keep` names (its id, or a unique start of it)."""
    found = conflict.named_by(keep)
    if not found:
        raise UsageError(msg("{revision} is not a kept revision of record {record_id}; `memories memory conflicts "
                             "{name}` lists them (an id, or a unique start of one).", revision=keep,
                             record_id=conflict.record_id, name=vault_name), code=ErrorCode.NO_CONFLICT)
    if len(found) > 1:
        raise UsageError(msg("{count} kept revisions of record {record_id} start with {revision} ({revisions}); give "
                             "more of the one to keep.", count=len(found), record_id=conflict.record_id,
                             revision=keep, revisions=", ".join(k.revision for k in found)),
                         code=ErrorCode.NO_CONFLICT)
    return found[0].revision


def _delete_resolving(vault: UnlockedVault, state: SyncState, record_id: str) -> None:
    """Delete the record as the resolution of its conflict: the next sync's deletion revision
    names every leaf as its parent (sync/merge.py), so it is the one leaf left on every device."""
    try:
        held: int | None = vault.read(record_id).revision
    except NotFoundError:
        held = None  # deleted here since the last sync: that deletion is the one the next sync sends
    state.resolving.add(record_id)
    vault.apply_synced(state.change(deletes=[record_id] if held is not None else [], expected={record_id: held}))


# What ties a card to the file or export it mirrors: a source sync (or a later import) would take
# a conflict copy carrying these for that file's card and overwrite the text it keeps.
_SOURCE_LINKS = frozenset({"source_id", "source_rel", "source_path", "source_size", "source_mtime_ns", "source_gone",
                           "sha256", "source_app"})


def _unlinked(metadata: dict[str, object]) -> dict[str, object]:
    """A conflict copy's metadata: the original's, less its ties to a file (the copy is its own note)."""
    from .source_sync import IMPORT_KEYS

    return {key: value for key, value in metadata.items() if key not in _SOURCE_LINKS | IMPORT_KEYS}
