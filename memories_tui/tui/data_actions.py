"""The app's backup, sync, passphrase and egress-log actions, mixed into `MemoriesApp` (app.py
stays small): "Back up vault", "Sync now", "Set up sync", "Sync devices", "Join a vault from
another device", "Change passphrase" and "Egress log" in the command palette, and the
`[backup] every_hours` backup taken just before a lock, while the keys are still there
(screens/backup.py, sync_now.py, sync_devices.py, join.py, passphrase.py, egress.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from ..engine import VaultInfo
    from .app import MemoriesApp


class DataActions:
    def _memories(self) -> MemoriesApp:
        return cast("MemoriesApp", self)

    async def action_backup_vault(self) -> None:
        from .screens.backup import BackupScreen

        app = self._memories()
        vault_id = app._unlocked_id()
        if vault_id is not None and app.vault is not None:
            await app.push_screen(BackupScreen(vault_id, app.vault.name))

    async def action_sync_now(self) -> None:
        from .screens.sync_now import start_sync

        app = self._memories()
        vault_id = app._unlocked_id()
        if vault_id is not None and app.vault is not None:
            start_sync(app, vault_id, app.vault.name)

    async def action_set_up_sync(self) -> None:
        from .screens.sync_now import start_sync

        app = self._memories()
        vault_id = app._unlocked_id()
        if vault_id is not None and app.vault is not None:
            start_sync(app, vault_id, app.vault.name, new_target=True)

    async def action_change_passphrase(self) -> None:
        from .screens.passphrase import ChangePassphraseScreen

        app = self._memories()
        vault_id = app._unlocked_id()
        if vault_id is not None and app.vault is not None:
            syncs = bool(app.engine.sync_status(vault_id, count_records=False))
            await app.push_screen(ChangePassphraseScreen(vault_id, app.vault.name, syncs))

    async def action_join_vault(self) -> None:
        from .screens.join import open_join

        open_join(self._memories())

    async def action_open_sync_devices(self) -> None:
        from .screens.sync_devices import SyncDevicesScreen

        await self._memories()._open(SyncDevicesScreen)

    async def action_open_egress(self) -> None:
        from .screens.egress import EgressScreen

        await self._memories()._open(EgressScreen)

    async def backed_up_before_lock(self, info: VaultInfo | None) -> VaultInfo | None:
        """Take the scheduled backup of the vault about to be locked (if one is due), then hand
        the vault back so the lock goes on with it; a failed backup is shown, never blocks it."""
        if info is not None:
            from .screens.backup import backup_before_lock

            await backup_before_lock(self._memories(), info.vault_id)
        return info
