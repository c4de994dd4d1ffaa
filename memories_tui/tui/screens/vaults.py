"""Vault picker and unlock screens (creating a vault: create_vault.py)."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Vertical
from textual.widgets import DataTable, Input, LoadingIndicator, Static

from ...engine import VaultInfo, VaultProblem
from ...errors import MemoriesError, RollbackError, WrongPassphraseError
from ...i18n import N_, _
from ..language import styled
from ..messages import UnlockDone
from ..text import plain, tilde
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from .base import EngineScreen
from .confirm import ConfirmScreen
from .create_vault import CreateVaultScreen
from .join import open_join


class VaultPickerScreen(EngineScreen):
    """The bottom of the screen stack: every vault in the home, and below them the `*.mvault`
    files that are not usable vaults (dimmed, not selectable), so a missing vault is explained."""

    BINDINGS = [
        Binding("n", "create", N_("New vault"), id="vault.new"),
        Binding("j", "join", N_("Join"), tooltip=N_("Join a vault from another device (its sync target)"),
                id="vault.join"),
        Binding("enter", "unlock", N_("Unlock"), id="vault.unlock", show=True),
        Binding("b", "backup", N_("Backup"), tooltip=N_("Back up the highlighted vault (verified by structure "
                "while locked)"), id="vault.backup", show=False),
    ]
    HELP_TITLE = N_("Vaults")
    GUIDE = N_("Each row is a vault in this home folder. ↑/↓ choose one and enter unlocks it (you type its "
               "passphrase next); n creates a new vault, j joins one another device syncs. Files that are not "
               "usable vaults are listed below the table with the reason; they are never changed.")

    def __init__(self, *, deferred: bool = False) -> None:
        """`deferred`: another screen goes on top at once (the unlock screen of the only vault),
        so the picker builds its widgets only when first shown: the first frame waits for one
        screen, not two."""
        super().__init__()
        self.built = not deferred
        self._covered = False  # a deferred picker builds on the first resume after being covered
        self.vaults: list[VaultInfo] = []

    def compose(self) -> ComposeResult:
        if not self.built:
            return
        yield AppHeader()
        with Vertical(id="picker"):
            yield Static(id="picker-intro")
            yield DataTable(id="vaults", cursor_type="row", zebra_stripes=True)
            yield Static(id="vault-problems")
        yield AppFooter()

    def on_mount(self) -> None:
        if self.built:
            self._fill()

    def on_screen_suspend(self) -> None:
        self._covered = True

    async def on_screen_resume(self) -> None:
        """Textual also resumes the default screen at start, before the first screen covers it:
        a deferred picker ignores resumes until it has been covered once."""
        if self.built:
            self.refresh_vaults()
        elif self._covered and self.is_current:
            self.built = True
            await self.recompose()
            self._fill()

    async def rebuild(self) -> None:
        """Its widgets made again (the interface language changed); a deferred picker that was
        never shown builds when it is."""
        if self.built:
            await self.recompose()
            self._fill()

    def _fill(self) -> None:
        self.query_one("#vaults", DataTable).add_columns(_("Name"), _("Records"), _("Last sync"), _("Vault id"))
        self.refresh_vaults()

    def refresh_vaults(self) -> None:
        try:
            scan = self.engine.scan_vaults()
        except MemoriesError as exc:
            self.vaults = []
            self.query_one("#picker-intro", Static).update(Text(exc.localized(), style="bold red"))
            self.query_one("#vault-problems", Static).update("")
            return
        self.vaults = scan.vaults
        synced = self._last_syncs()
        table = self.query_one("#vaults", DataTable)
        table.clear()
        for info in self.vaults:
            table.add_row(plain(info.name), plain(info.record_count), synced.get(info.vault_id, plain("-", "dim")),
                          plain(info.vault_id, "dim"), key=info.vault_id)
        self.query_one("#vault-problems", Static).update(problems_text(scan.problems))
        intro = self.query_one("#picker-intro", Static)
        if self.vaults:
            intro.update(styled(_("Vaults in {home}{hint}"), home=(tilde(self.engine.home), "bold"),
                                hint=("  ·  " + _("enter unlocks, n creates a new vault"), "dim")))
            table.focus()
        else:
            intro.update(styled(_("No usable vault in {home}.  Press n to create one.") if scan.problems
                                else _("No vault yet in {home}.  Press n to create one."),
                                home=(tilde(self.engine.home), "bold")))

    def _last_syncs(self) -> dict[str, Text]:
        """Each syncing vault's last sync ("not yet"; its error code in yellow when the last one
        failed), read without a passphrase; a vault that does not sync shows "-"."""
        try:
            entries = self.engine.sync_status(count_records=False)
        except MemoriesError:  # an unreadable sync.json: the picker still lists the vaults
            return {}
        return {e.vault_id: plain(e.last_error, "yellow") if e.last_error else
                plain((e.last_sync or _("not yet")).replace("T", " ")[:16]) for e in entries}

    def action_create(self) -> None:
        self.app.push_screen(CreateVaultScreen(first_run=not self.vaults))

    def action_join(self) -> None:
        open_join(self.memories)

    def action_unlock(self) -> None:
        if not self.built:
            return
        table = self.query_one("#vaults", DataTable)
        if not self.vaults or table.cursor_row < 0:
            return
        self.app.push_screen(UnlockScreen(self.vaults[table.cursor_row]))

    def action_backup(self) -> None:
        from .backup import BackupScreen

        table = self.query_one("#vaults", DataTable) if self.built else None
        if table is not None and self.vaults and table.cursor_row >= 0:
            info = self.vaults[table.cursor_row]
            self.app.push_screen(BackupScreen(info.vault_id, info.name))

    @on(DataTable.RowSelected, "#vaults")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_unlock()


def problems_text(problems: list[VaultProblem]) -> Text:
    """One dimmed line per `*.mvault` file that is not a usable vault, with the engine's reason
    (its messages start with the file name; one that does not gets it in front)."""
    if not problems:
        return Text()
    out = Text(_("Files that are not usable vaults:"), style="bold yellow")
    for problem in problems:
        message = problem.localized() or problem.code
        rest = message[len(problem.file):] if message.startswith(problem.file) else f": {message}"
        out.append("\n✗ ", style="yellow")
        out.append(plain(problem.file, "bold"))
        out.append(plain(rest, "dim"))
    return out


ROLLED_BACK = N_("The vault file is older than the newest state this home has seen of it: an older copy was put "
                 "back (a restore, a sync, a copied file) and what was saved after that copy is not in it. If you "
                 "did this on purpose, open it: this home then takes this state as the newest. If not, cancel and "
                 "put back the copy you want (memories vault restore).")


class UnlockScreen(EngineScreen):
    """The passphrase field; enter starts one key derivation. From that enter on, the app
    holds every key typed (a burst like `passphrase⏎s京都⏎`): the field takes no more input,
    and the held keys go to the records screen once the vault is open."""

    BINDINGS = [
        Binding("escape", "back", N_("Vaults"), id="back"),
        # a priority binding runs before the keys typed after enter are routed to the field
        Binding("enter", "unlock", id="unlock.submit", show=False, priority=True),
    ]
    HELP_TITLE = N_("Unlock")
    GUIDE = N_("Type the vault's passphrase and press enter. esc goes back to the list of vaults. Keys typed "
               "while the vault unlocks (s, a query, enter) are kept for the records screen.")

    def __init__(self, info: VaultInfo) -> None:
        super().__init__()
        self.info = info
        self.unlocking = False

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Center(), Vertical(id="unlock-form", classes="form"):
            yield Static(styled(_("Unlock {name}{id}"), name=(self.info.name, "bold"),
                                id=(f"  ({self.info.vault_id})", "dim")), id="unlock-title")
            yield Input(password=True, id="passphrase", placeholder=_("passphrase"))
            yield Static(id="unlock-error", classes="error")
            yield LoadingIndicator(id="unlock-loading")
        yield AppFooter()

    def on_mount(self) -> None:
        self.query_one("#unlock-loading").display = False
        self.query_one("#passphrase", Input).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "unlock":  # enter in the passphrase field; elsewhere (a button) it is theirs
            return self.focused is not None and self.focused.id == "passphrase" and not self.unlocking
        return super().check_action(action, parameters)

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1 and not self.unlocking:
            self.dismiss()

    def action_unlock(self) -> None:
        """Hold the keys typed after this enter, then read the field once it has taken the keys
        typed before it (they may still wait in its queue), and derive the key."""
        self.unlocking = True
        self.memories.hold_keys()
        field = self.query_one("#passphrase", Input)
        field.call_later(self._start, field)

    def _start(self, field: Input, accept_rollback: bool = False) -> None:
        passphrase = field.value
        if not passphrase:
            self.unlocking = False
            self.query_one("#unlock-error", Static).update(Text(_("Type the vault's passphrase.")))
            self.memories.release_keys(replay=True)  # typed after an empty enter: for this field
            return
        self.query_one("#unlock-error", Static).update("")
        self.query_one("#unlock-loading").display = True
        field.disabled = True  # takes no input while the key is derived
        self.unlock_worker(passphrase, self.epoch(), accept_rollback)

    @work(thread=True, exclusive=True, group="unlock", exit_on_error=False)
    def unlock_worker(self, passphrase: str, epoch: int, accept_rollback: bool = False) -> None:
        try:
            with self.memories.kdf_lock:  # never two derivations at once (256 MiB each)
                if accept_rollback:  # answered yes to opening an older copy
                    self.engine.unlock(self.info.vault_id, passphrase, accept_rollback=True)
                else:
                    self.engine.unlock(self.info.vault_id, passphrase)
            if self.engine.lock_epoch != epoch:  # locked while the KDF ran: do not leave it open
                self.engine.lock(self.info.vault_id)
                return
            self.memories.daemon_link.unlocked(self.info.vault_id, passphrase)  # the CLI and AI clients too
        except WrongPassphraseError as exc:
            self.post_message(UnlockDone(epoch, error=self.describe(exc), wrong_passphrase=True))
        except RollbackError as exc:
            self.post_message(UnlockDone(epoch, error=self.describe(exc), rolled_back=True))
        except Exception as exc:  # noqa: BLE001 - shown inline, never a hung UI
            self.post_message(UnlockDone(epoch, error=self.describe(exc)))
        else:
            self.post_message(UnlockDone(epoch, vault_id=self.info.vault_id))

    def on_unlock_done(self, message: UnlockDone) -> None:
        self.query_one("#unlock-loading").display = False
        field = self.query_one("#passphrase", Input)
        field.disabled = False
        self.unlocking = False
        if message.error:
            self.memories.release_keys(replay=False)  # meant for the next screen, not a second try
            self.query_one("#unlock-error", Static).update(Text(message.error))
            if message.rolled_back:  # the passphrase was right: keep it for an open on purpose
                self.app.push_screen(ConfirmScreen(_("Open an older copy of this vault?"), _(ROLLED_BACK), danger=True,
                                                   yes=_("Open this older state")), self._rollback_answered)
                return
            field.value = ""
            field.focus()
            return
        self.memories.vault_unlocked(self.info)

    def _rollback_answered(self, accept: bool | None) -> None:
        field = self.query_one("#passphrase", Input)
        if accept:
            self.unlocking = True
            self._start(field, accept_rollback=True)
        else:
            field.value = ""
            field.focus()
