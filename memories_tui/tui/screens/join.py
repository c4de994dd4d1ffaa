"""Joining a vault from another device in the TUI, as `memories sync join TARGET` does.

`j` on the vault picker, the button under the first-run form, or "Join a vault from another
device" in the command palette. The target the other device set up (a folder, s3://BUCKET/PREFIX
with its endpoint, a WebDAV URL) and that vault's passphrase; `Engine.sync_join` runs in a thread
worker with the sync dialog's progress, and the vault opens once it is here. esc cancels a join
as ctrl+c does (before the vault file is made nothing is left; after, the vault keeps what it
received and `memories sync NAME` or the status screen's `s` brings the rest).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, ProgressBar, Static

from ...errors import CancelledError, ErrorCode, MemoriesError
from ...i18n import N_, _
from ..crash import as_error
from ..text import tilde_paths
from .base import EnterMovesOn, compact_when_short
from .sync_now import SyncStep, show_progress
from .sync_target import target_enter_next, target_inputs

if TYPE_CHECKING:
    from ...engine import SyncProgress, VaultInfo
    from ..app import MemoriesApp


class JoinScreen(EnterMovesOn, ModalScreen["VaultInfo | None"]):
    """Dismisses with the joined vault (unlocked), or None."""

    BINDINGS = [Binding("escape", "close", N_("Cancel / close"), id="join.close"), EnterMovesOn.ENTER_BINDING]
    DEFAULT_CSS = """
    JoinScreen { align: center middle; }
    #join-box { width: 84; max-width: 95%; height: auto; border: thick $primary; background: $surface;
                padding: 1 2; }
    #join-title { text-style: bold; height: auto; margin-bottom: 1; }
    #join-help, #join-stage { height: auto; margin-bottom: 1; }
    #join-buttons { height: auto; align-horizontal: right; }
    #join-buttons Button { margin-left: 2; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.cancel = threading.Event()
        self.running = False

    @property
    def memories(self) -> MemoriesApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical(id="join-box"):
            yield Static(Text(_("Join a vault from another device")), id="join-title")
            yield Static(Text(_("The sync target the other device set up (its status screen shows it) and that "
                                "vault's passphrase. Everything comes over encrypted; the vault opens here once it "
                                "is in.")), id="join-help")
            yield from target_inputs("join")
            yield Input(placeholder=_("Passphrase of this vault"), password=True, id="join-passphrase")
            yield Input(placeholder=_("Name here (empty: the name it has on the other device)"), id="join-name")
            yield Static("", id="join-stage")
            yield ProgressBar(id="join-bar", show_eta=False)
            with Horizontal(id="join-buttons"):
                yield Button(_("Cancel"), id="cancel")
                yield Button(_("Join"), id="join", variant="primary")

    def on_resize(self) -> None:
        compact_when_short(self)

    def on_mount(self) -> None:
        self.query_one("#join-bar", ProgressBar).display = False
        self.query_one("#join-url", Input).focus()

    def enter_target(self) -> str | None:
        """enter moves on to the next field (the endpoint only for s3://); in the passphrase or
        the name, it joins (Input.Submitted below)."""
        return target_enter_next(self, "join", "#join-passphrase")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.join()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "join":
            self.join()
        else:
            self.action_close()

    def join(self) -> None:
        if self.running:
            return
        url = self.query_one("#join-url", Input).value.strip()
        passphrase = self.query_one("#join-passphrase", Input).value
        if not url:
            return self._say(_("Type the sync target: a folder, s3://BUCKET/PREFIX or a WebDAV https:// URL."),
                             "#join-url")
        if not passphrase:
            return self._say(_("Type the vault's passphrase (the one it has on the other device)."),
                             "#join-passphrase")
        endpoint = self.query_one("#join-endpoint", Input).value.strip() or None
        name = self.query_one("#join-name", Input).value.strip() or None
        self.running = True
        self._fields(enabled=False)  # what is typed while it joins would change nothing: say so by greying them
        self.cancel.clear()
        self._say(_("Reading {target}…").format(target=url), error=False)
        self.query_one("#join-bar", ProgressBar).display = True
        self.join_worker(url, passphrase, endpoint, name)

    @work(thread=True, exclusive=True, group="join", exit_on_error=False)
    def join_worker(self, url: str, passphrase: str, endpoint: str | None, name: str | None) -> None:
        engine = self.memories.engine
        known = {v.vault_id for v in engine.list_vaults()}
        try:
            report = engine.sync_join(url, passphrase, endpoint_url=endpoint, name=name, cancel=self.cancel,
                                      progress=self._step)
            info = engine.resolve_vault(report.vault_id)
        except Exception as exc:  # noqa: BLE001 - a bug too is said in the dialog (crash.as_error), never a hung UI
            for made in {v.vault_id for v in engine.list_vaults()} - known:  # a join stopped after it made the
                engine.lock(made)  # vault left it unlocked; a vault open in the app (palette "Create vault") stays
            self.app.call_from_thread(self._failed, as_error(exc, engine.home))
        else:
            self.app.call_from_thread(self.dismiss, info)

    def _step(self, progress: SyncProgress) -> None:
        self.post_message(SyncStep(progress))

    def on_sync_step(self, message: SyncStep) -> None:
        if not self.cancel.is_set():
            show_progress(message.progress, self.query_one("#join-stage", Static), self.query_one("#join-bar",
                                                                                                  ProgressBar))

    def _fields(self, *, enabled: bool) -> None:
        for field in self.query(Input):
            field.disabled = not enabled

    def _failed(self, exc: MemoriesError) -> None:
        self.running = False
        self._fields(enabled=True)
        self.query_one("#join-bar", ProgressBar).display = False
        if isinstance(exc, CancelledError):
            self._say(f"{tilde_paths(exc.localized())} [{exc.code}]", "#join-url", error=False)
            return
        if exc.code == ErrorCode.VAULT_EXISTS:  # the engine's words name the CLI's --as; here it is a field
            self._say(_("This home already has a vault with that name: give this one another name below.")
                      + f" [{exc.code}]", "#join-name")
            return
        self._say(f"{tilde_paths(exc.localized())} [{exc.code}]",
                  "#join-passphrase" if exc.code == ErrorCode.WRONG_PASSPHRASE else "#join-url")

    def _say(self, text: str, focus: str | None = None, *, error: bool = True) -> None:
        self.query_one("#join-stage", Static).update(Text(text, style="bold red" if error else "dim"))
        if focus:
            self.query_one(focus, Input).focus()

    def action_close(self) -> None:
        """While joining: cancel (the dialog stays to say how it ended). Else close."""
        if self.running:
            self.cancel.set()
            self._say(_("Cancelling…"), error=False)
            return
        self.dismiss(None)


def open_join(app: MemoriesApp) -> None:
    """The join dialog; the joined vault opens as an unlocked one does."""
    def joined(info: VaultInfo | None) -> None:
        if info is not None:
            app.vault_unlocked(info)

    app.push_screen(JoinScreen(), callback=joined)
