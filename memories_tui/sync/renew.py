"""Going on as a new device after a vault file was restored from a backup.

The restored file's sync state is behind this device's own chain in the target: the bundles it
pushed after the backup are there, the vault does not know them, and writing its next bundle
under the same number would fork the chain. So the vault takes a new random device id and reads
its old id's chain as another device's, from where the backup left it: the changes made after
the backup come back at the next sync, and what was changed since the restore is pushed as the
new device's. Nothing is lost; the old id stays in `sync devices` until it is forgotten.
"""

from __future__ import annotations

import secrets

from ..errors import ErrorCode, UsageError
from ..i18n import msg
from ..vault.store import UnlockedVault
from ..vault.sync_rows import SyncedChange
from .run import load_state
from .sealing import Head, head_name
from .targets import Target


def as_new_device(vault: UnlockedVault, target: Target) -> tuple[str, str]:
    """(the old device id, the new one); refused unless the target is ahead of this vault's own
    chain (otherwise a new id would only leave an orphan chain behind)."""
    state = load_state(vault)
    blob = target.get(head_name(state.device))
    head = Head.opened(vault.keys.sync_aead("head"), vault.vault_id, state.device, blob) if blob is not None else None
    if head is None or head.seq <= state.own_seq:
        raise UsageError(msg("Vault {name} is not behind its own changes in the sync target; sync it as usual.",
                             name=vault.name), code=ErrorCode.SYNC_NOT_BEHIND)
    old = state.device
    state.seen[old] = (state.own_seq, state.own_digest)  # every bundle up to here is in the target already
    state.device = secrets.token_hex(8)
    state.own_seq, state.own_digest = 0, ""
    state.outbox.clear()
    stored, base = state.commit_form()
    vault.apply_synced(SyncedChange(state=stored, base=base))
    return old, state.device
