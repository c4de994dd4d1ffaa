"""Keeping one unlocked vault's in-memory index current."""

from __future__ import annotations

from ..config import Limits
from ..errors import LimitError
from ..index.cache import SNAPSHOT_BLOB, IndexCache, VaultIndex
from ..vault.records import Record
from .session import OpenVault


def current_index(indexes: IndexCache, limits: Limits, entry: OpenVault, records: dict[str, Record],
                  counter: int) -> VaultIndex:
    """The vault's index, restored from its encrypted snapshot or built, then synced with
    `records`, which are from change counter `counter` (only changed records are re-segmented)."""
    vault = entry.vault
    vault_id = vault.vault_id
    tag = vault.policy_tag()
    index = indexes.peek(vault_id)
    if index is not None and index.policy_tag != tag:  # policy or passphrase changed: start over
        indexes.drop(vault_id)
        index = None
    if index is None:
        data = vault.get_blob(SNAPSHOT_BLOB)
        restored = (VaultIndex.restore(vault_id, limits, data, records, load_blob=vault.get_blob)
                    if data is not None else None)
        index = restored or VaultIndex(vault_id, limits)
        index.policy_tag = tag
        indexes.put(index)
    else:
        indexes.get(vault_id)  # mark as most recently used
    if index.synced_counter != counter:  # skip the O(records) diff when nothing changed
        try:
            index.sync(records.values())
        except LimitError:
            indexes.drop(vault_id)
            raise
        index.synced_counter = counter
    return index
