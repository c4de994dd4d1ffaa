"""Which passphrase the sync target's join record wraps the vault key under: the newest one any
device set (`vault passwd`). A device takes a newer one another device put there, and puts its
own back when a change of its own never reached the target (sync_ops.py calls both at each sync)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import SyncError

if TYPE_CHECKING:
    from ..sync.join import JoinRecord
    from ..sync.targets import Target
    from ..vault.store import UnlockedVault

SINCE_KEY = "passphrase_since"  # vault setting: when this device's passphrase was set (ms), this device only


def since(vault: UnlockedVault) -> int:
    stamp = vault.settings().get(SINCE_KEY, 0)
    return stamp if type(stamp) is int else 0


def adopt_passphrase(vault: UnlockedVault, record: JoinRecord) -> bool:
    """Take the wrap another device put in the target after `vault passwd` (join.adoptable says
    when); this vault file then unlocks with that passphrase only. Whether it was taken."""
    from ..sync import join

    stamp = join.adoptable(record, vault.keys, vault.header, since(vault))
    if stamp is None:
        return False
    vault.adopt_wrap(record.kdf, record.salt, record.wrapped)
    settings = vault.settings()
    settings[SINCE_KEY] = stamp
    vault.set_settings(settings)
    return True


def republish_if_behind(target: Target, vault: UnlockedVault, record: JoinRecord) -> None:
    """The target still wraps the key under an older passphrase than this device's: a `vault
    passwd` whose upload failed or was cut short (the process quit, `kill -9`) left it there, and
    new devices could join only with the old passphrase while the others never took the new one.
    Put this device's wrap there now, when the one made at this unlock is this passphrase's (else
    `sync add` asks for it, as the failed change said)."""
    from ..sync import join
    from ..vault.header import header_from

    # as the file has it now: a process unlocked before changes made elsewhere holds an older header,
    # whose wrap must never go out marked as the newest (publish then needs the passphrase, and skips)
    header = vault.sync_read(lambda conn, _keys: header_from(conn, vault.path))
    if (record.salt, record.kdf) == (header.salt, header.kdf):
        return  # the target's is this passphrase
    mine = since(vault)
    if join.sealed_since(record, vault.keys) >= mine:
        return  # one set later (another device's, left to the user)
    try:
        join.publish(target, header, None, vault.keys, bool(vault.settings().get("device_only", False)), mine)
    except SyncError:  # no wrap of this passphrase here (sync_passphrase_needed), or the target failed just now:
        return  # the sync itself went through, and the next one tries again
