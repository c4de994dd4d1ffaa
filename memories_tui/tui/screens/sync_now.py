"""Syncing one vault now from the TUI (`s` on the status screen, "Sync now" in the command palette;
a vault with no target yet gets the target dialog first, screens/sync_target.py).

A dialog runs `Engine.sync_now` in a thread worker and shows what the CLI's bar shows: objects
fetched of those the other devices' heads name, then objects sent, then what the sync did (or
its error and code). esc cancels a running sync the way the CLI's first ctrl+c does (before the
vault is written here nothing changes; after, the sync finishes sending); a second esc closes
the dialog at once and the outcome comes later as a notice. The app ending cancels it too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
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

from ...errors import CancelledError, MemoriesError
from ...i18n import N_, _, _n
from ..crash import as_error
from ..text import tilde, tilde_paths

if TYPE_CHECKING:
    from ...engine import SyncProgress, SyncReport
    from ..app import MemoriesApp


class EitherCancel(threading.Event):
    """Set by esc, or by `also` (the app ending): the sync reads only `is_set`."""

    def __init__(self, also: threading.Event) -> None:
        super().__init__()
        self._also = also

    def is_set(self) -> bool:
        return super().is_set() or self._also.is_set()


@dataclass(eq=False)
class SyncStep(Message):
    progress: SyncProgress


@dataclass(eq=False, kw_only=True)
class SyncFinished(Message):
    report: SyncReport | None = None
    error: MemoriesError | None = None


def outcome_line(report: SyncReport) -> str:
    """What a sync did, in one sentence (the dialog, and the notice when it was closed)."""
    line = _("Synced with {target}: {sent} change(s) sent, {received} received from {devices} other device(s), "
             "{written} record(s) updated here.").format(target=tilde(report.target), sent=report.pushed_revisions,
                                                         received=report.pulled_revisions,
                                                         devices=max(report.devices - 1, 0), written=report.written)
    if report.left:
        line += " " + _n("Stopped part-way: {n} record changed here waits for the next sync.",
                         "Stopped part-way: {n} records changed here wait for the next sync.",
                         report.left).format(n=report.left)
    return line


def conflicts_line(report: SyncReport) -> str:
    return _n("{n} record was changed on two devices at once (two edits, or an edit and a deletion): it is "
              "marked ⇄ in the records list, where c compares them.",
              "{n} records were changed on two devices at once (two edits, or an edit and a deletion): they are "
              "marked ⇄ in the records list, where c compares them.", report.conflicts).format(
                  n=report.conflicts) if report.conflicts else ""


def start_sync(app: MemoriesApp, vault_id: str, name: str, then: Callable[[], None] | None = None, *,
               new_target: bool = False) -> None:
    """The sync dialog; first the target dialog (screens/sync_target.py) when the vault has no
    target yet, or for `new_target`. `then` runs once they are closed."""
    def done(_result: object = None) -> None:
        if then is not None:
            then()

    def sync() -> None:
        app.push_screen(SyncNowScreen(vault_id, name, app.stopping), callback=done)

    if not new_target and app.engine.sync_status(vault_id, count_records=False):
        sync()
        return
    from .sync_target import SyncTargetScreen

    app.push_screen(SyncTargetScreen(vault_id, name), callback=lambda added: sync() if added else done())


def _size(count: int) -> str:
    return f"{count / 1_000_000:.1f} MB" if count >= 100_000 else f"{count / 1000:.1f} kB"


def show_progress(p: SyncProgress, stage: Static, bar: ProgressBar) -> None:
    """A sync's progress as the CLI's bar counts it: objects fetched, then sent."""
    if p.stage == "pull":
        line = (_("Fetching the other devices' changes: {done} of {total} objects ({size})") if p.total else
                _("Fetching the other devices' changes: {done} objects ({size})"))
    else:
        line = _("Sending this device's changes: {done} objects ({size})")
    stage.update(Text(line.format(done=p.done, total=p.total, size=_size(p.bytes))))
    bar.update(total=p.total or None, progress=p.done)


class SyncNowScreen(ModalScreen[None]):
    """Push this device's changes and pull the others' now, with progress and cancel."""

    BINDINGS = [Binding("escape", "close", N_("Cancel / close"), id="sync_now.close")]
    DEFAULT_CSS = """
    SyncNowScreen { align: center middle; }
    #sync-box { width: 76; max-width: 95%; height: auto; border: thick $primary; background: $surface;
                padding: 1 2; }
    #sync-title { text-style: bold; height: auto; margin-bottom: 1; }
    #sync-stage, #sync-result { height: auto; }
    #sync-bar { margin: 1 0; }
    """

    def __init__(self, vault_id: str, name: str, stopping: threading.Event) -> None:
        super().__init__()
        self.vault_id, self.vault_name = vault_id, name
        self.cancel = EitherCancel(stopping)
        self.running = True
        self.closed = False
        self.report: SyncReport | None = None
        self.error: MemoriesError | None = None

    @property
    def memories(self) -> MemoriesApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical(id="sync-box"):
            yield Static(Text(_("Sync {name}").format(name=self.vault_name)), id="sync-title")
            yield Static(Text(_("Starting…")), id="sync-stage")
            yield ProgressBar(id="sync-bar", show_eta=False)
            yield Static(Text(_("esc cancels (before anything is written here nothing changes; after, the sync "
                                "finishes sending)"), style="dim"), id="sync-result")

    def on_mount(self) -> None:
        self.host = self.memories  # a screen closed meanwhile no longer reaches its app: the notice goes here
        self.run_sync()

    @work(thread=True, exclusive=True, group="sync-now", exit_on_error=False)
    def run_sync(self) -> None:
        try:
            report = self.memories.engine.sync_now(self.vault_id, progress=self._step, cancel=self.cancel)
        except Exception as exc:  # noqa: BLE001 - a bug too is said in the dialog (crash.as_error), never a hung UI
            self._finished(SyncFinished(error=as_error(exc, self.memories.engine.home)))
        else:
            self._finished(SyncFinished(report=report))

    def _step(self, progress: SyncProgress) -> None:
        self.post_message(SyncStep(progress))

    def _finished(self, message: SyncFinished) -> None:
        """To the dialog, or as a notice once it was closed while the sync went on."""
        if not self.closed:
            self.post_message(message)
            return
        if message.report is not None:
            text = " ".join(part for part in (outcome_line(message.report), conflicts_line(message.report)) if part)
            self.host.call_from_thread(self.host.notify, text, title=_("Sync"), markup=False)
        elif message.error is not None and not isinstance(message.error, CancelledError):
            self.host.call_from_thread(self.host.notify, f"{tilde_paths(message.error.localized())} "
                                      f"[{message.error.code}]", title=_("Sync"), severity="warning", markup=False)

    def on_sync_step(self, message: SyncStep) -> None:
        if not self.cancel.is_set():  # else "Cancelling…" stays until the sync returns
            show_progress(message.progress, self.query_one("#sync-stage", Static),
                          self.query_one("#sync-bar", ProgressBar))

    def on_sync_finished(self, message: SyncFinished) -> None:
        self.running = False
        self.report, self.error = message.report, message.error
        stage = self.query_one("#sync-stage", Static)
        result = self.query_one("#sync-result", Static)
        bar = self.query_one("#sync-bar", ProgressBar)
        if message.report is not None:
            stage.update(Text(_("Synced."), style="bold green"))
            bar.update(total=1, progress=1)
            lines = [outcome_line(message.report), conflicts_line(message.report)]
            result.update(Text("\n".join(line for line in lines if line) + "\n\n" + _("esc closes")))
            return
        error = message.error
        bar.display = False  # nothing moves any more: an unfinished bar went on pulsing under the failure
        if isinstance(error, CancelledError):
            stage.update(Text(_("Sync cancelled."), style="bold yellow"))
        else:
            stage.update(Text(_("The sync failed; nothing was lost."), style="bold red"))
        text = f"{tilde_paths(error.localized())} [{error.code}]" if error is not None else ""
        result.update(Text(text + "\n\n" + _("esc closes")))

    def action_close(self) -> None:
        """Running: the first esc cancels, a second one closes at once. Done: close."""
        if self.running and not self.cancel.is_set():
            self.cancel.set()
            self.query_one("#sync-stage", Static).update(Text(_(
                "Cancelling… (stops at the next object; once the vault was written here, it finishes sending). "
                "esc again closes this now."), style="yellow"))
            return
        self.closed = True
        self.dismiss(None)
