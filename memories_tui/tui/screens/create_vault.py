"""The create-vault screen: a name, a passphrase twice (its strength shown as it is typed),
sample notes on a first run. Kept apart from the picker and unlock screens (vaults.py): it is
the one screen that makes a vault rather than opens one."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Horizontal, Vertical
from textual.widgets import Button, Checkbox, Input, Label, LoadingIndicator, Static

from ...frontend.strength import SHORT, estimate
from ...i18n import N_, _, _n
from ..messages import CreateProgress, VaultCreated
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from ..wrap import BrokenLines
from .base import EngineScreen, compact_when_short
from .confirm import ConfirmScreen

STRENGTH_NAMES = {"weak": N_("weak"), "fair": N_("fair"), "good": N_("good"), "strong": N_("strong")}


class CreateVaultScreen(EngineScreen):
    BINDINGS = [Binding("escape", "back", N_("Back"), id="back"), EngineScreen.ENTER_BINDING]
    ENTER_NEXT = {"name": "#pass1", "pass1": "#pass2"}
    HELP_TITLE = N_("Create a vault")
    GUIDE = N_("Give the vault a name and a passphrase (twice); tab and shift+tab move between fields, enter "
               "in the last field creates the vault. Everything in the vault is encrypted with a key derived "
               "from the passphrase: it cannot be recovered if you forget it.")

    def __init__(self, first_run: bool = False) -> None:
        super().__init__()
        self.first_run = first_run

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Center(), Vertical(id="create-form", classes="form"):
            if self.first_run:
                yield Static(BrokenLines(Text(_("Welcome to Memories. Create your first vault: everything in it "
                                                "is encrypted with a key derived from your passphrase, and nothing "
                                                "leaves this machine."))), id="welcome")
            yield Label(_("Vault name"))
            yield Input(value=_("Personal") if self.first_run else "", id="name", placeholder=_("e.g. Personal"))
            yield Label(_("Passphrase"))
            yield Input(password=True, id="pass1", placeholder=_("passphrase"))
            yield Static(id="strength")
            yield Label(_("Passphrase again"))
            yield Input(password=True, id="pass2", placeholder=_("repeat the passphrase"))
            yield Checkbox(_("Device-only: never send this vault's text to remote services"), value=False,
                           id="device-only")
            yield Checkbox(_("Import the bundled sample notes (English, 中文, mixed)"), value=self.first_run,
                           id="samples")
            yield Static(id="create-error", classes="error")
            with Horizontal(id="create-busy"):
                yield LoadingIndicator(id="create-loading")
                yield Static(id="create-status")
            with Horizontal(id="create-buttons"):
                yield Button(_("Create vault"), id="create", variant="primary")
                yield Button(_("Join from another device"), id="join")
        yield AppFooter()

    def on_mount(self) -> None:
        self.query_one("#create-busy").display = False
        self.query_one("#name", Input).focus()

    def on_resize(self) -> None:
        """Borderless fields on a short terminal, so the whole form fits in 24 rows."""
        self.set_class(compact_when_short(self), "-compact")

    @on(Input.Changed, "#pass1")
    def _strength(self, event: Input.Changed) -> None:
        self.query_one("#strength", Static).update(strength_line(event.value))

    def action_back(self) -> None:
        self.dismiss()

    @on(Button.Pressed, "#join")
    def _join(self) -> None:
        """A vault another device syncs (screens/join.py): it opens here instead of a new one."""
        from .join import open_join

        open_join(self.memories)

    @on(Input.Submitted, "#pass2")
    @on(Button.Pressed, "#create")
    def submit(self) -> None:
        name = self.query_one("#name", Input).value.strip()
        p1 = self.query_one("#pass1", Input).value
        p2 = self.query_one("#pass2", Input).value
        if not name:
            return self.show_error(_("Give the vault a name."), "#name")
        if not p1:
            return self.show_error(_("An empty passphrase is not allowed."), "#pass1")
        if p1 != p2:
            self.query_one("#pass2", Input).value = ""
            return self.show_error(_("The two passphrases differ."), "#pass2")
        self.show_error("")
        if len(p1) < SHORT:
            question = ConfirmScreen(
                _("Short passphrase"),
                _n("This passphrase has only {n} character. Anyone who gets the vault file can try passphrases "
                   "offline, and a short one is found quickly. It cannot be recovered if forgotten, but it can "
                   "be changed later (memories vault passwd).",
                   "This passphrase has only {n} characters. Anyone who gets the vault file can try passphrases "
                   "offline, and a short one is found quickly. It cannot be recovered if forgotten, but it can "
                   "be changed later (memories vault passwd).", len(p1)).format(n=len(p1)),
                yes=_("Use it anyway"), no=_("Choose another"))
            self.app.push_screen(question, lambda yes: self._create(name, p1) if yes else self._retry_short())
            return
        self._create(name, p1)

    def _retry_short(self) -> None:
        for field in ("#pass1", "#pass2"):
            self.query_one(field, Input).value = ""
        self.query_one("#pass1", Input).focus()

    def _create(self, name: str, passphrase: str) -> None:
        self.set_busy(True)
        self.create_worker(name, passphrase, self.query_one("#device-only", Checkbox).value,
                           self.query_one("#samples", Checkbox).value, self.epoch())

    def set_busy(self, busy: bool) -> None:
        self.query_one("#create-busy").display = busy
        self.query_one("#create", Button).disabled = busy
        for widget in self.query(Input):
            widget.disabled = busy
        if busy:
            self.query_one("#create-status", Static).update(Text(_("Starting…")))

    def on_create_progress(self, message: CreateProgress) -> None:
        if self.epoch_live(message.epoch):
            self.query_one("#create-status", Static).update(Text(message.step))

    def show_error(self, message: str, focus: str | None = None) -> None:
        self.query_one("#create-error", Static).update(Text(message))
        if focus:
            self.query_one(focus, Input).focus()

    @work(thread=True, exclusive=True, group="create-vault", exit_on_error=False)
    def create_worker(self, name: str, passphrase: str, device_only: bool, samples: bool, epoch: int) -> None:
        engine = self.engine

        def step(text: str) -> None:
            self.post_message(CreateProgress(epoch, step=text))

        try:
            with self.memories.kdf_lock:  # never two derivations at once (256 MiB each)
                step(_("Deriving the vault key from your passphrase (Argon2id: a few seconds, on purpose)…"))
                info = engine.create_vault(name, passphrase, device_only=device_only)
                step(_("Unlocking the new vault (the key is derived once more)…"))
                engine.unlock(info.vault_id, passphrase)
            self.memories.daemon_link.unlocked(info.vault_id, passphrase)
            if samples:
                step(_("Importing the sample notes…"))
            count = len(engine.import_samples(info.vault_id)) if samples else 0
            if engine.lock_epoch != epoch:  # locked meanwhile: do not leave it open
                engine.lock(info.vault_id)
                return
        except Exception as exc:  # noqa: BLE001 - shown inline, never a hung UI
            self.post_message(VaultCreated(epoch, error=self.describe(exc)))
            return
        self.post_message(VaultCreated(epoch, vault_id=info.vault_id, samples=count))

    def on_vault_created(self, message: VaultCreated) -> None:
        self.set_busy(False)
        if message.error:
            self.show_error(message.error)
            return
        if message.samples:
            self.notify(_n("Imported {n} sample note.", "Imported {n} sample notes.", message.samples).format(
                n=message.samples))
        self.memories.vault_unlocked(self.engine.resolve_vault(message.vault_id))


def strength_line(passphrase: str) -> Text:
    """"Strength: good (~62 bits) · advice" for a passphrase being typed (empty: nothing)."""
    strength = estimate(passphrase)
    line = Text()
    if strength.label:
        line.append(_("Strength: "), style="dim")
        line.append(_(STRENGTH_NAMES.get(strength.label, strength.label)), style=strength.style)
        line.append(" " + _("(~{bits} bits)").format(bits=strength.bits), style="dim")
        if strength.advice:
            line.append(f" · {strength.advice}", style="dim")
    return line
