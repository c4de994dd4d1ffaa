"""The app's backup, sync, passphrase and egress-log actions, mixed into `MemoriesApp` (app.py
stays small): "Back up vault", "Sync now", "Set up sync", "Sync devices", "Join a vault from
another device", "Change passphrase", "Device-only policy" and "Egress log" in the command
palette, and the `[backup] every_hours` backup taken just before a lock, while the keys are
still there (screens/backup.py, sync_now.py, sync_devices.py, join.py, passphrase.py, egress.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from ..engine import VaultInfo
    from .app import MemoriesApp


class DataActions:
    def _memories(self) -> MemoriesApp:
        return cast("MemoriesApp", self)

    def _open_vault(self) -> tuple[MemoriesApp, str, str] | None:
        """(the app, the open vault's id, its name), or None after saying to unlock one first."""
        app = self._memories()
        vault_id = app._unlocked_id()
        return (app, vault_id, app.vault.name) if vault_id is not None and app.vault is not None else None

    async def action_backup_vault(self) -> None:
        from .screens.backup import BackupScreen

        if (open_vault := self._open_vault()) is not None:
            app, vault_id, name = open_vault
            await app.push_screen(BackupScreen(vault_id, name))

    async def action_sync_now(self) -> None:
        from .screens.sync_now import start_sync

        if (open_vault := self._open_vault()) is not None:
            start_sync(*open_vault)

    async def action_set_up_sync(self) -> None:
        from .screens.sync_now import start_sync

        if (open_vault := self._open_vault()) is not None:
            start_sync(*open_vault, new_target=True)

    async def action_change_passphrase(self) -> None:
        from .screens.passphrase import ChangePassphraseScreen

        if (open_vault := self._open_vault()) is not None:
            app, vault_id, name = open_vault
            syncs = bool(app.engine.sync_status(vault_id, count_records=False))
            await app.push_screen(ChangePassphraseScreen(vault_id, name, syncs))

    async def action_device_only(self) -> None:
        """Turn the open vault's device-only policy on or off, after saying what it does."""
        from ..i18n import _
        from .screens.confirm import ConfirmScreen

        if (open_vault := self._open_vault()) is None:
            return
        app, vault_id, name = open_vault
        on = app.engine.device_only(vault_id)
        what = _("With it on, no text of this vault goes to remote services (embedding, generation, rerank: only "
                 "loopback ones), and it syncs only with targets on this machine. The policy follows the vault to "
                 "its other devices at their next sync.")

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            try:
                app.engine.set_device_only(vault_id, not on)
            except Exception as exc:  # noqa: BLE001 - said as a notice (a bug by type and place only)
                from .crash import as_error

                error = as_error(exc, app.engine.home)
                app.notify(f"{error.localized()} [{error.code}]", severity="error", markup=False)
                return
            app.notify((_("{name}: device-only is on.") if not on else _("{name}: device-only is off.")).format(
                name=name), markup=False)

        await app.push_screen(ConfirmScreen(
            _("Turn device-only off for {name}?") if on else _("Turn device-only on for {name}?"),
            (_("Device-only is on.") if on else _("Device-only is off.")) + " " + what,
            yes=_("Turn it off") if on else _("Turn it on")), answered)

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
