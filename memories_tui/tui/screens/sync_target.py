"""Setting up sync from the TUI: the target of the open vault, as `memories sync add` sets it.

Opened by "Set up sync" in the command palette, and by `s` / "Sync now" while the vault has no
target yet. The target is a folder, s3://BUCKET/PREFIX (with an endpoint URL for R2, B2, MinIO)
or a WebDAV https:// URL; `Engine.sync_add` runs in a thread worker and its errors show in the
dialog, which stays open to correct them. The passphrase is asked only when the engine needs it
(`sync_passphrase_needed`: it changed since this unlock). Once added, the dialog closes with
True and the caller syncs at once (screens/sync_now.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Input, Static

from ...errors import ErrorCode, MemoriesError
from ...i18n import N_, _
from ..crash import as_error
from ..text import tilde_paths
from .base import EnterMovesOn, compact_when_short

if TYPE_CHECKING:
    from ..app import MemoriesApp


def target_inputs(prefix: str) -> tuple[Input, Input]:
    """The fields of a sync target as `sync add` and `sync join` take it: `PREFIX-url`, `PREFIX-endpoint`."""
    return (Input(placeholder=_("~/Sync/memories, s3://bucket/prefix or https://…"), id=f"{prefix}-url"),
            Input(placeholder=_("S3 endpoint URL for R2, B2, MinIO… (empty for AWS; only for s3://)"),
                  id=f"{prefix}-endpoint"))


def target_enter_next(screen: Screen, prefix: str, then: str | None) -> str | None:
    """Where enter moves from the fields of `target_inputs(prefix)`: an s3:// URL on to its
    endpoint; any other URL, and the endpoint, on to `then` (None: enter submits the dialog)."""
    field = screen.focused.id if screen.focused is not None else None
    if field == f"{prefix}-url":
        url = screen.query_one(f"#{prefix}-url", Input).value.strip()
        return f"#{prefix}-endpoint" if url.startswith("s3://") else then
    return then if field == f"{prefix}-endpoint" else None


class SyncTargetScreen(EnterMovesOn, ModalScreen[bool]):
    """Dismisses with True once the vault syncs with the target typed, False on esc."""

    BINDINGS = [Binding("escape", "cancel", N_("Cancel"), id="sync_target.cancel"), EnterMovesOn.ENTER_BINDING]
    DEFAULT_CSS = """
    SyncTargetScreen { align: center middle; }
    #target-box { width: 84; max-width: 95%; height: auto; border: thick $primary; background: $surface;
                  padding: 1 2; }
    #target-title { text-style: bold; height: auto; margin-bottom: 1; }
    #target-help, #target-error { height: auto; margin-bottom: 1; }
    #target-buttons { height: auto; align-horizontal: right; }
    #target-buttons Button { margin-left: 2; }
    """

    def __init__(self, vault_id: str, name: str) -> None:
        super().__init__()
        self.vault_id, self.vault_name = vault_id, name
        self.busy = False

    @property
    def memories(self) -> MemoriesApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical(id="target-box"):
            yield Static(Text(_("Sync {name} between your devices").format(name=self.vault_name)), id="target-title")
            yield Static(Text(_(
                "A folder that Syncthing, Dropbox, iCloud Drive, a NAS or a USB disk carries; s3://BUCKET/PREFIX "
                "(keys from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or a profile); or a WebDAV https:// URL such "
                "as Nextcloud's (MEMORIES_WEBDAV_USERNAME / MEMORIES_WEBDAV_PASSWORD or ~/.netrc). Only ciphertext "
                "goes there. Then, on each other device: \"Join from another device\" in Memories, or memories sync join "
                "TARGET.")), id="target-help")
            yield from target_inputs("target")
            yield Input(placeholder=_("Passphrase of this vault"), password=True, id="target-passphrase")
            yield Static("", id="target-error")
            with Horizontal(id="target-buttons"):
                yield Button(_("Cancel"), id="cancel")
                yield Button(_("Add and sync now"), id="add", variant="primary")

    def on_resize(self) -> None:
        compact_when_short(self)

    def on_mount(self) -> None:
        self.query_one("#target-passphrase", Input).display = False
        self.query_one("#target-url", Input).focus()

    def enter_target(self) -> str | None:
        """enter in an s3:// URL moves on to its endpoint; anywhere else it adds (Input.Submitted)."""
        return target_enter_next(self, "target", None)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.add()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "add":
            self.add()
        else:
            self.action_cancel()

    def add(self) -> None:
        url = self.query_one("#target-url", Input).value.strip()
        if not url:
            self._say(_("Type where to sync: a folder, s3://BUCKET/PREFIX or a WebDAV https:// URL."))
            self.query_one("#target-url", Input).focus()
            return
        if self.busy:
            return
        endpoint = self.query_one("#target-endpoint", Input).value.strip() or None
        passphrase_field = self.query_one("#target-passphrase", Input)
        passphrase = passphrase_field.value if passphrase_field.display and passphrase_field.value else None
        self.busy = True
        self._say(_("Checking {target}…").format(target=url), error=False)
        self.add_worker(url, endpoint, passphrase)

    @work(thread=True, exclusive=True, group="sync-target", exit_on_error=False)
    def add_worker(self, url: str, endpoint: str | None, passphrase: str | None) -> None:
        try:
            self.memories.engine.sync_add(self.vault_id, url, passphrase, endpoint_url=endpoint)
        except Exception as exc:  # noqa: BLE001 - a bug too is said in the dialog (crash.as_error), never a hung UI
            self.app.call_from_thread(self._failed, as_error(exc, self.memories.engine.home))
        else:
            self.app.call_from_thread(self.dismiss, True)

    def _failed(self, exc: MemoriesError) -> None:
        self.busy = False
        if exc.code == ErrorCode.SYNC_PASSPHRASE_NEEDED:
            field = self.query_one("#target-passphrase", Input)
            field.display = True
            field.focus()
        self._say(f"{tilde_paths(exc.localized())} [{exc.code}]")

    def _say(self, text: str, *, error: bool = True) -> None:
        self.query_one("#target-error", Static).update(Text(text, style="bold red" if error else "dim"))

    def action_cancel(self) -> None:
        self.dismiss(False)
