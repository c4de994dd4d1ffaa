"""Backups from the TUI: the backup dialog (`b` on the records or vault picker screen, or the
command palette) and the scheduled backup taken when a vault is locked.

The dialog runs `Engine.backup_vault` in a thread worker: a progress bar while the copy and
its verification run, then where the backup went and how it was checked, or the error with its
code. esc closes it (and cancels a backup still running; no partial file is left).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import ProgressBar, Static

from ...errors import MemoriesError
from ...i18n import N_, _, _n

if TYPE_CHECKING:
    from ...engine import BackupProgress, BackupReport
    from ..app import MemoriesApp

STAGES = {"copy": N_("Copying (SQLite online backup)…"), "verify": N_("Verifying every record…")}


@dataclass(eq=False)
class BackupStep(Message):
    progress: BackupProgress


@dataclass(eq=False, kw_only=True)
class BackupFinished(Message):
    report: BackupReport | None = None
    error: MemoriesError | None = None


class BackupScreen(ModalScreen[None]):
    """Back up one vault now (verified in full when it is unlocked, by structure otherwise)."""

    BINDINGS = [Binding("escape", "close", N_("Close"), id="backup.close")]
    DEFAULT_CSS = """
    BackupScreen { align: center middle; }
    #backup-box { width: 72; max-width: 95%; height: auto; border: thick $primary; background: $surface;
                  padding: 1 2; }
    #backup-title { text-style: bold; height: auto; margin-bottom: 1; }
    #backup-stage, #backup-result { height: auto; }
    #backup-bar { margin: 1 0; }
    """

    def __init__(self, vault_ref: str, name: str) -> None:
        super().__init__()
        self.vault_ref = vault_ref
        self.vault_name = name
        self.cancel = threading.Event()
        self.report: BackupReport | None = None
        self.error: MemoriesError | None = None
        self.running = True

    def compose(self) -> ComposeResult:
        with Vertical(id="backup-box"):
            yield Static(Text(_("Back up {name}").format(name=self.vault_name)), id="backup-title")
            yield Static(Text(_("Starting…")), id="backup-stage")
            yield ProgressBar(id="backup-bar", show_eta=False)
            yield Static(Text(_("esc closes (a running backup is cancelled; nothing partial is kept)"), style="dim"),
                         id="backup-result")

    def on_mount(self) -> None:
        self.run_backup()

    @work(thread=True, exclusive=True, group="backup")
    def run_backup(self) -> None:
        try:
            report = self.memories.engine.backup_vault(self.vault_ref, cancel=self.cancel, progress=self._step)
        except MemoriesError as exc:
            self.post_message(BackupFinished(error=exc))
        else:
            self.post_message(BackupFinished(report=report))

    def _step(self, progress: BackupProgress) -> None:
        self.post_message(BackupStep(progress))

    @property
    def memories(self) -> MemoriesApp:
        return self.app  # type: ignore[return-value]

    def on_backup_step(self, message: BackupStep) -> None:
        p = message.progress
        self.query_one("#backup-stage", Static).update(Text(_(STAGES[p.stage]) if p.stage in STAGES else p.stage))
        self.query_one("#backup-bar", ProgressBar).update(total=max(p.total, 1), progress=p.done)

    def on_backup_finished(self, message: BackupFinished) -> None:
        self.running = False
        self.report, self.error = message.report, message.error
        stage = self.query_one("#backup-stage", Static)
        result = self.query_one("#backup-result", Static)
        if message.report is not None:
            r = message.report
            checked = (_("every record decrypted and the keyed manifest matched") if r.verified == "full"
                       else _("structure and digests checked (locked: records not decrypted)"))
            stage.update(Text(_("Backup written and verified."), style="bold green"))
            self.query_one("#backup-bar", ProgressBar).update(total=1, progress=1)
            counts = _("{records}, {revisions}").format(
                records=_n("{n} record", "{n} records", r.records).format(n=r.records),
                revisions=_n("{n} revision", "{n} revisions", r.revisions).format(n=r.revisions))
            lines = [f"{r.path}", _("{counts}, {size:,} bytes; {checked}").format(counts=counts, size=r.bytes,
                                                                                   checked=checked)]
            lines += [_("removed older backup {name}").format(name=p.name) for p in r.removed]
            result.update(Text("\n".join(lines) + "\n\n" + _("esc closes")))
        else:
            error = message.error
            stage.update(Text(_("The backup failed; nothing was left behind."), style="bold red"))
            result.update(Text(f"{error.localized() if error else ''} [{error.code if error else ''}]\n\n" + _("esc closes")))

    def action_close(self) -> None:
        self.cancel.set()
        self.dismiss(None)


async def backup_before_lock(app: MemoriesApp, vault_id: str) -> None:
    """The `[backup] every_hours` backup, taken while the keys are still there (so it is
    verified in full); the UI stays responsive meanwhile. A failure is shown, and the lock
    goes on either way."""
    engine = app.engine
    if engine.config.backup.every_hours is None or not engine.is_unlocked(vault_id):
        return
    try:
        report = await asyncio.to_thread(engine.backup_if_due, vault_id)
    except MemoriesError as exc:
        app.notify(f"{exc.localized()} [{exc.code}]", title=_("Backup before lock failed"), severity="error", timeout=10,
                   markup=False)
        return
    if report is not None:
        app.notify(_n("{name}: {n} record, verified", "{name}: {n} records, verified", report.records).format(
            name=report.path.name, n=report.records), title=_("Backed up before lock"), markup=False)
