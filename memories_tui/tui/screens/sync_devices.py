"""The devices that sync the unlocked vault, and its sync target (`d` on the status screen, or
"Sync devices" in the command palette): what `memories sync devices` lists, plus forgetting a
lost or retired device (`sync forget`) and stopping sync on this device (`sync remove`).

The list is read from the target's sealed heads in a thread worker (a slow server shows
"Reading…", never a frozen screen). Forgetting asks first and names what stays (the device's
changes); stopping asks first and says that the target and the other devices are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from ...engine import DeviceInfo, TargetEntry
from ...i18n import N_, _, _n
from ..messages import WorkerMessage
from ..text import plain, tilde, utc_stamp
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from .base import VaultScreen
from .confirm import ConfirmScreen


@dataclass(eq=False, kw_only=True)
class DevicesLoaded(WorkerMessage):
    target: TargetEntry | None = None
    devices: list[DeviceInfo] | None = None
    error: str | None = None


@dataclass(eq=False, kw_only=True)
class DeviceForgotten(WorkerMessage):
    device: DeviceInfo | None = None
    error: str | None = None


class SyncDevicesScreen(VaultScreen):
    BINDINGS = [
        Binding("escape", "back", N_("Back"), id="back"),
        Binding("r", "reload", N_("Reload"), id="devices.reload"),
        Binding("s", "sync_now", N_("Sync now"), id="devices.sync_now"),
        Binding("f", "forget", N_("Forget device"), tooltip=N_("Leave the highlighted device out (its changes stay)"),
                id="devices.forget"),
        Binding("x", "stop_syncing", N_("Stop syncing here"), id="devices.stop"),
    ]
    HELP_TITLE = N_("Sync devices")
    GUIDE = N_("Every device that syncs this vault, as its sealed head in the sync target says: the name it gives "
               "itself, how many bundles of changes it wrote, how many of them this device has read, and when it "
               "last wrote (its own clock). f forgets the highlighted device (a lost or retired one: its changes "
               "stay, and it is listed again if it sends changes again); x stops syncing this vault on this device (the "
               "target and the other devices are unchanged); s syncs now; r reloads.")
    DEFAULT_CSS = """
    #devices-box { height: 1fr; }
    #devices-intro { height: auto; padding: 0 1; margin-bottom: 1; }
    #devices-table { height: 1fr; }
    """

    def __init__(self, vault_id: str) -> None:
        super().__init__(vault_id)
        self.target: TargetEntry | None = None
        self.devices: list[DeviceInfo] = []
        self.busy = False

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Vertical(id="devices-box"):
            yield Static(Text(_("Reading the sync target…")), id="devices-intro")
            yield DataTable(id="devices-table", cursor_type="row", zebra_stripes=True)
        yield AppFooter()

    def on_mount(self) -> None:
        self.query_one("#devices-table", DataTable).add_columns(
            _("Device"), _("Name"), _("Bundles"), _("Read here"), _("Last write (UTC)"))
        self.action_reload()

    def action_reload(self) -> None:
        self.query_one("#devices-intro", Static).update(Text(_("Reading the sync target…"), style="dim"))
        self.load(self.epoch())

    @work(thread=True, exclusive=True, group="sync-devices", exit_on_error=False)
    def load(self, epoch: int) -> None:
        """The target first (this home's own file), then its heads: a target that cannot be read
        still leaves `x` to stop syncing with it."""
        target: TargetEntry | None = None
        try:
            target = next(iter(self.engine.sync_status(self.vault_id, count_records=False)), None)
            devices = self.engine.sync_devices(self.vault_id) if target is not None else []
        except Exception as exc:  # noqa: BLE001 - shown inline (a bug by type and place only), never a hung UI
            self.post_if_live(DevicesLoaded(epoch, target=target, error=self.describe(exc)))
            return
        self.post_if_live(DevicesLoaded(epoch, target=target, devices=devices))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer offers forgetting only with another device listed, stopping only with a target."""
        if action == "forget":
            return any(not d.this_device for d in self.devices)
        if action == "stop_syncing":
            return self.target is not None
        return super().check_action(action, parameters)

    def on_devices_loaded(self, message: DevicesLoaded) -> None:
        if not self.epoch_live(message.epoch):
            return
        intro = self.query_one("#devices-intro", Static)
        table = self.query_one("#devices-table", DataTable)
        table.clear()
        self.devices, self.target = message.devices or [], message.target
        self.refresh_bindings()
        if message.error is not None:
            stop = ("\n" + _("x stops syncing this vault here, if that target is gone for good.")
                    if self.target is not None else "")
            intro.update(Text(message.error + stop, style="bold red"))
            return
        if self.target is None:
            intro.update(Text(_("This vault does not sync yet: s sets up a sync target (a folder, S3 or WebDAV).")))
            return
        for d in self.devices:
            device = d.device + ("  " + _("(this device)") if d.this_device else "")
            table.add_row(plain(device, "bold" if d.this_device else ""), plain(d.name or "-"), plain(f"{d.bundles:,}"),
                          plain(f"{d.read_here:,}"), plain(d.last_seen.replace("T", " ").rstrip("Z")))
        others = sum(1 for d in self.devices if not d.this_device)
        intro.update(Text("\n".join([
            _("Syncs with {target}; last sync {time}.").format(target=tilde(self.target.url),
                                                                 time=utc_stamp(self.target.last_sync) or _("not yet")),
            _n("{n} other device.", "{n} other devices.", others).format(n=others) if others else
            _("No other device is listed (one that has not sent changes yet, or was forgotten, is not). To add one: "
              "\"Join from another device\" in its Memories, or `memories sync join TARGET` there."),
            *([_("A device is listed once a sync of it sent changes.")] if not self.devices else []),
            *self._same_names(),
        ])))
        if self.devices:
            table.focus()

    def _same_names(self) -> list[str]:
        """A hint when two devices give themselves the same name (two machines called after their host)."""
        names = [d.name for d in self.devices if d.name]
        shared = sorted({name for name in names if names.count(name) > 1})
        if not shared:
            return []
        return [_("Several devices are named {names}: set `device_name` under [sync] in each one's config.toml "
                  "to tell them apart.").format(names=", ".join(f"“{name}”" for name in shared))]

    def _highlighted(self) -> DeviceInfo | None:
        row = self.query_one("#devices-table", DataTable).cursor_row
        return self.devices[row] if 0 <= row < len(self.devices) else None

    def action_forget(self) -> None:
        device = self._highlighted()
        if device is None or self.busy:
            return
        if device.this_device:
            self.notify(_("This is this device; forget it from another one."), severity="warning")
            return
        label = f"{device.name} ({device.device})" if device.name else device.device

        def answered(yes: bool | None) -> None:
            if yes:
                self.busy = True
                self.forget(self.epoch(), device.device)

        self.app.push_screen(ConfirmScreen(
            _("Forget {device}?").format(device=label),
            _n("It is left out of this vault's device list; what its {n} bundle of changes did stays in the vault on "
               "every device, and it is listed again if it sends changes again. Forget a device that is lost or retired: "
               "the target then stops keeping old bundles for it to read.",
               "It is left out of this vault's device list; what its {n} bundles of changes did stays in the vault on "
               "every device, and it is listed again if it sends changes again. Forget a device that is lost or retired: "
               "the target then stops keeping old bundles for it to read.",
               device.bundles).format(n=device.bundles),
            yes=_("Forget"), danger=True), answered)

    @work(thread=True, exclusive=True, group="sync-devices-forget", exit_on_error=False)
    def forget(self, epoch: int, device: str) -> None:
        try:
            gone = self.engine.sync_forget(self.vault_id, device)
        except Exception as exc:  # noqa: BLE001 - shown as a notice (a bug by type and place only)
            self.post_if_live(DeviceForgotten(epoch, error=self.describe(exc)))
            return
        self.post_if_live(DeviceForgotten(epoch, device=gone))

    def on_device_forgotten(self, message: DeviceForgotten) -> None:
        self.busy = False
        if not self.epoch_live(message.epoch):
            return
        if message.device is None:
            self.notify(message.error or "", title=_("Forget device"), severity="error", markup=False)
            return
        self.notify(_n("Forgot device {device}; its {n} bundle of changes stays.",
                       "Forgot device {device}; its {n} bundles of changes stay.", message.device.bundles).format(
                           device=message.device.device, n=message.device.bundles), markup=False)
        self.action_reload()

    def action_stop_syncing(self) -> None:
        if self.target is None:
            return
        url = tilde(self.target.url)

        def answered(yes: bool | None) -> None:
            if yes:
                self._stop()

        self.app.push_screen(ConfirmScreen(
            _("Stop syncing this vault here?"),
            _("This device stops syncing with {target}. The target and the other devices are unchanged, and "
              "nothing is deleted; setting up the same target again goes on from where this device stopped.").format(
                  target=url), yes=_("Stop syncing")), answered)

    def _stop(self) -> None:
        try:
            gone = self.engine.sync_remove(self.vault_id)
        except Exception as exc:  # noqa: BLE001 - shown as a notice (a bug by type and place only)
            self.notify(self.describe(exc), title=_("Stop syncing"), severity="error", markup=False)
            return
        self.notify(_("This vault no longer syncs on this device (it synced with {target}).").format(
            target=tilde(gone.url)), markup=False)
        self.action_reload()

    def action_sync_now(self) -> None:
        from .sync_now import start_sync

        start_sync(self.memories, self.vault_id, self.engine.vault_name(self.vault_id), self.action_reload)

    def action_back(self) -> None:
        self.dismiss()
