"""Changing the open vault's passphrase in the TUI ("Change passphrase" in the command palette),
as `memories vault passwd` does: the current passphrase, the new one twice (its strength shown as
it is typed, a short one confirmed as the create form does). The vault key is re-wrapped, no
record is re-encrypted; a vault that syncs puts the new wrap in its target, so the other devices
take the new passphrase at their next sync and new devices join with it.

Argon2id runs two or three times (checking the current passphrase, wrapping, the target's join
record), seconds on purpose, so it runs in a thread worker under the app's KDF lock. esc while it
runs closes the dialog (a target that stops answering would hold it for the client's timeouts);
the change goes on and how it ended comes as a notice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, LoadingIndicator, Static

from ...errors import ErrorCode, MemoriesError
from ...frontend.strength import SHORT
from ...i18n import N_, _, _n
from ..crash import as_error
from ..text import tilde_paths
from .base import EnterMovesOn, compact_when_short
from .confirm import ConfirmScreen
from .create_vault import strength_line

if TYPE_CHECKING:
    from ..app import MemoriesApp

FIELDS = ("passwd-old", "passwd-new", "passwd-again")


class ChangePassphraseScreen(EnterMovesOn, ModalScreen[bool]):
    """Dismisses with True once the passphrase changed (a target left on the old wrap is said in
    a notice), False when closed without a change."""

    BINDINGS = [Binding("escape", "cancel", N_("Cancel"), id="passwd.cancel"), EnterMovesOn.ENTER_BINDING]
    ENTER_NEXT = {"passwd-old": "#passwd-new", "passwd-new": "#passwd-again"}  # in the last, enter changes
    DEFAULT_CSS = """
    ChangePassphraseScreen { align: center middle; }
    #passwd-box { width: 76; max-width: 95%; height: auto; border: thick $primary; background: $surface;
                  padding: 1 2; }
    #passwd-title { text-style: bold; height: auto; margin-bottom: 1; }
    #passwd-help, #passwd-error, #passwd-strength { height: auto; }
    #passwd-error { color: $error; margin-top: 1; }
    #passwd-busy { height: auto; }
    #passwd-busy LoadingIndicator { width: 4; height: 1; }
    #passwd-buttons { height: auto; align-horizontal: right; margin-top: 1; }
    #passwd-buttons Button { margin-left: 2; }
    """

    def __init__(self, vault_id: str, name: str, syncs: bool) -> None:
        super().__init__()
        self.vault_id, self.vault_name, self.syncs = vault_id, name, syncs
        self.busy = False
        self.closed = False  # esc while busy: the outcome then comes as a notice

    def compose(self) -> ComposeResult:
        with Vertical(id="passwd-box"):
            yield Static(Text(_("Change the passphrase of {name}").format(name=self.vault_name)), id="passwd-title")
            help_text = _("The vault key is wrapped again under the new passphrase; no record is re-encrypted.")
            if self.syncs:
                help_text += " " + _("The other devices take it at their next sync, and new devices join with it.")
            yield Static(Text(help_text, style="dim"), id="passwd-help")
            yield Input(password=True, id="passwd-old", placeholder=_("current passphrase"))
            yield Input(password=True, id="passwd-new", placeholder=_("new passphrase"))
            yield Static(id="passwd-strength")
            yield Input(password=True, id="passwd-again", placeholder=_("new passphrase again"))
            yield Static(id="passwd-error")
            with Horizontal(id="passwd-busy"):
                yield LoadingIndicator()
                yield Static(Text(_("Deriving keys (Argon2id: a few seconds, on purpose), then putting the new "
                                    "wrap in the sync target… esc closes this; the change goes on.") if self.syncs
                                  else _("Deriving keys (Argon2id: a few seconds, on purpose)…")))
            with Horizontal(id="passwd-buttons"):
                yield Button(_("Cancel"), id="cancel")
                yield Button(_("Change passphrase"), id="change", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#passwd-busy").display = False
        self.query_one("#passwd-old", Input).focus()

    def on_resize(self) -> None:
        compact_when_short(self)

    @property
    def memories(self) -> MemoriesApp:
        return self.app  # type: ignore[return-value]

    @on(Input.Changed, "#passwd-new")
    def _strength(self, event: Input.Changed) -> None:
        self.query_one("#passwd-strength", Static).update(strength_line(event.value))

    @on(Input.Submitted, "#passwd-again")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.change()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "change":
            self.change()
        else:
            self.action_cancel()

    def change(self) -> None:
        if self.busy:
            return
        old, new, again = (self.query_one(f"#{field}", Input).value for field in FIELDS)
        if not old:
            return self._say(_("Type the current passphrase."), "#passwd-old")
        if not new:
            return self._say(_("An empty passphrase is not allowed."), "#passwd-new")
        if new != again:
            self.query_one("#passwd-again", Input).value = ""
            return self._say(_("The two passphrases differ."), "#passwd-again")
        if new == old:
            return self._say(_("The new passphrase is the current one."), "#passwd-new")
        self._say("")
        if len(new) < SHORT:
            question = ConfirmScreen(
                _("Short passphrase"),
                _n("This passphrase has only {n} character. Anyone who gets the vault file (or its sync target) can "
                   "try passphrases offline, and a short one is found quickly.",
                   "This passphrase has only {n} characters. Anyone who gets the vault file (or its sync target) can "
                   "try passphrases offline, and a short one is found quickly.", len(new)).format(n=len(new)),
                yes=_("Use it anyway"), no=_("Choose another"))
            self.app.push_screen(question, lambda yes: self._start(old, new) if yes else self._retry())
            return
        self._start(old, new)

    def _retry(self) -> None:
        for field in FIELDS[1:]:
            self.query_one(f"#{field}", Input).value = ""
        self.query_one("#passwd-new", Input).focus()

    def _start(self, old: str, new: str) -> None:
        self._set_busy(True)
        self.change_worker(old, new)

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.query_one("#passwd-busy").display = busy
        self.query_one("#change", Button).disabled = busy
        for widget in self.query(Input):
            widget.disabled = busy

    @work(thread=True, exclusive=True, group="change-passphrase", exit_on_error=False)
    def change_worker(self, old: str, new: str) -> None:
        app = self.memories  # kept: a dialog closed meanwhile no longer reaches its app
        error: MemoriesError | None = None
        try:
            with app.kdf_lock:  # never two derivations at once (256 MiB each)
                app.engine.change_passphrase(self.vault_id, old, new)
        except Exception as exc:  # noqa: BLE001 - a bug too is said in the dialog (crash.as_error), never a hung UI
            error = as_error(exc, app.engine.home)
        app.call_from_thread(self._finished, app, error)

    def _finished(self, app: MemoriesApp, error: MemoriesError | None) -> None:
        """In the dialog, or as a notice once it was closed while the change went on."""
        if error is None or error.code == ErrorCode.SYNC_JOIN_RECORD_STALE:  # changed; only the target lags
            if error is not None:
                app.notify(f"{tilde_paths(error.localized())} [{error.code}]", title=_("Passphrase changed"),
                           severity="warning", timeout=15, markup=False)
            else:
                app.notify(_("Passphrase changed for {name}.").format(name=self.vault_name)
                           + (" " + _("The other devices take it at their next sync.") if self.syncs else ""),
                           markup=False)
            if not self.closed:
                self.dismiss(True)
            return
        if self.closed:
            app.notify(f"{tilde_paths(error.localized())} [{error.code}]", title=_("Passphrase not changed"),
                       severity="error", timeout=15, markup=False)
            return
        self._set_busy(False)
        if error.code == ErrorCode.WRONG_PASSPHRASE:
            self.query_one("#passwd-old", Input).value = ""
            return self._say(f"{tilde_paths(error.localized())} [{error.code}]", "#passwd-old")
        self._say(f"{tilde_paths(error.localized())} [{error.code}]")

    def _say(self, text: str, focus: str | None = None) -> None:
        self.query_one("#passwd-error", Static).update(Text(text))
        if focus:
            self.query_one(focus, Input).focus()

    def action_cancel(self) -> None:
        """Closes; a change under way goes on, and how it ended comes as a notice."""
        self.closed = self.busy
        self.dismiss(False)
