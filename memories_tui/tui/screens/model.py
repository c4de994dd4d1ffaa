"""Model install: live progress (bytes, rate, ETA), per-file verify state, start / cancel / resume."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, DataTable, Input, ProgressBar, Static

from ...engine import GEMMA_PROHIBITED_USE_URL, GEMMA_TERMS_URL, PINNED_MODEL, ModelManifest
from ...errors import CancelledError
from ...frontend.words import status_name
from ...i18n import N_, _
from ..language import styled
from ..messages import InstallDone, InstallProgressMessage
from ..text import human_eta, plain, tilde
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from .base import EngineScreen

if TYPE_CHECKING:  # httpx loads only when the install starts
    from ...engine import InstallProgress

STATE_STYLE = {"pending": "dim", "downloading": "cyan", "copying": "cyan", "verifying": "yellow",
               "downloaded": "green", "copied": "green", "reused": "green", "failed": "bold red"}
# the file states only this screen shows (the outcomes are the CLI's words too: frontend/words.py)
STATE_NAMES = {"pending": N_("pending"), "downloading": N_("downloading"), "copying": N_("copying"),
               "verifying": N_("verifying"), "cancelled": N_("cancelled")}


def state_cell(state: str, style: str | None = None) -> Text:
    return plain(_(STATE_NAMES[state]) if state in STATE_NAMES else status_name(state),
                 STATE_STYLE.get(state, "") if style is None else style)


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _pinned_manifest() -> ModelManifest | None:
    return PINNED_MODEL


def terms_text() -> Text:
    text = Text()
    text.append(_("Gemma Terms of Use") + "\n", style="bold")
    text.append_text(styled(_("EmbeddingGemma is a Gemma model by Google. By downloading it you accept the Gemma "
                              "Terms of Use {terms} and agree to follow the Gemma Prohibited Use Policy {policy}. "
                              "A copy of this notice is kept beside the files (NOTICE.md)."),
                            terms=(GEMMA_TERMS_URL, "underline"), policy=(GEMMA_PROHIBITED_USE_URL, "underline")))
    return text


class ModelInstallScreen(EngineScreen):
    BINDINGS = [
        Binding("escape", "back", N_("Back"), id="back"),
        Binding("ctrl+r", "start", N_("Start / resume"), id="model.start"),
        Binding("ctrl+x", "cancel", N_("Cancel download"), id="model.cancel"),
    ]

    HELP_TITLE = N_("Embedding model")
    GUIDE = N_("Vector and hybrid search need the embedding model (EmbeddingGemma, about 200 MiB, downloaded "
             "once). ctrl+r starts or resumes the download; every file is checked against its pinned "
             "SHA-256 hash. ctrl+x cancels (partial files are kept for a resume). Without internet, type a "
             "folder of files downloaded elsewhere in the field beside the buttons and press enter: the same "
             "checks apply.")

    def __init__(self) -> None:
        super().__init__()
        self.cancel_event: threading.Event | None = None
        self.rows: set[str] = set()
        self.file_states: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with VerticalScroll(id="model"):  # at 80×24 a failure's message and the file table scroll into reach
            yield Static(id="model-intro")
            yield Static(id="model-terms")
            yield Static(id="model-message")  # above the buttons: a failure's way out is seen at once
            with Horizontal(id="model-buttons"):
                yield Button(_("Start"), id="start", variant="primary")
                yield Button(_("Cancel"), id="cancel", variant="error")
                yield Input(placeholder=_("…or a folder of model files + enter"), id="from-dir")
            yield ProgressBar(id="model-progress", show_eta=False)
            yield Static(id="model-rate")
            yield DataTable(id="model-files", cursor_type="row", zebra_stripes=True)
        yield AppFooter()

    def on_mount(self) -> None:
        vault = self.memories.vault
        if vault is not None and self.engine.is_unlocked(vault.vault_id):
            self.sub_title = self.engine.vault_name(vault.vault_id)  # the header names the vault, as elsewhere
        table = self.query_one("#model-files", DataTable)
        table.add_column(_("File"), key="file", width=30)
        table.add_column(_("Size"), key="size", width=10)
        table.add_column(_("Done"), key="done", width=10)
        table.add_column(_("State"), key="state", width=11)
        intro = Text(_("The embedding model enables vector and hybrid search. Files are downloaded once, checked "
                       "against pinned SHA-256 hashes, and can be resumed after a cancel or a failure."))
        manifest = _pinned_manifest()
        if manifest is not None:
            intro.append("\n" + _("{repo} @ {revision} · {n} files · {size}").format(
                repo=manifest.repo, revision=manifest.revision[:12], n=len(manifest.files),
                size=human_bytes(manifest.total_bytes)), style="dim")
            table = self.query_one("#model-files", DataTable)
            for mf in manifest.files:
                self.rows.add(mf.path)
                table.add_row(plain(mf.path), plain(human_bytes(mf.bytes)), plain("–"),
                              state_cell("pending"), key=mf.path)
        self.query_one("#model-intro", Static).update(intro)
        self.query_one("#cancel", Button).display = False
        self.query_one("#model-progress").display = False
        self.say("#model-rate", Text(""))
        self.say("#model-message", Text(""))
        self.show_terms()
        self.query_one("#start", Button).focus()  # not the scrolling frame around it

    def show_terms(self) -> None:
        """The Gemma terms stay on screen until the first download starts (accepting them)."""
        accepted = self.engine.model_terms_accepted()
        terms = self.query_one("#model-terms", Static)
        terms.display = not accepted
        terms.update(terms_text() if not accepted else Text(""))
        if not accepted:
            self.query_one("#start", Button).label = _("Accept the terms and download")

    @property
    def message_line(self) -> Static:
        return self.query_one("#model-message", Static)

    def say(self, selector: str, text: Text) -> None:
        """Update a status line; an empty line takes no room."""
        line = self.query_one(selector, Static)
        line.update(text)
        line.display = bool(text.plain)

    def action_back(self) -> None:
        self.dismiss()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return self.cancel_event is not None  # the footer offers cancel only while something runs
        return True

    def set_running(self, running: bool) -> None:
        self.query_one("#start", Button).disabled = running
        self.query_one("#cancel", Button).display = running
        self.refresh_bindings()

    @on(Button.Pressed, "#start")
    def _start_pressed(self) -> None:
        self.action_start()

    def action_start(self, source: Path | None = None) -> None:
        if self.cancel_event is not None:
            return
        self.cancel_event = threading.Event()
        self.set_running(True)
        self.query_one("#model-terms", Static).display = False
        self.say("#model-message", Text(_("Installing from {source}…").format(source=source) if source
                                        else _("Starting…")))
        self.install_worker(self.cancel_event, self.epoch(), source)

    @on(Input.Submitted, "#from-dir")
    def _from_folder(self, event: Input.Submitted) -> None:
        """Install from a folder of files downloaded elsewhere (each size and SHA-256 checked)."""
        if not event.value.strip():
            self.say("#model-message", Text(_("Type the folder that holds the downloaded model files."), style="yellow"))
            return
        self.action_start(Path(event.value.strip()).expanduser())

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        if self.cancel_event is not None:
            self.cancel_event.set()
            self.say("#model-message", Text(_("Cancelling…")))

    @work(thread=True, exclusive=True, group="model-install", exit_on_error=False)
    def install_worker(self, cancel: threading.Event, epoch: int, source: Path | None = None) -> None:
        def progress(p: InstallProgress) -> None:
            self.post_message(InstallProgressMessage(epoch, progress=p))

        try:
            if source is not None:
                report = self.engine.install_model(progress=progress, cancel=cancel, source=source)
            else:
                report = self.engine.install_model(progress=progress, cancel=cancel)
        except CancelledError as exc:
            self.post_message(InstallDone(epoch, error=self.describe(exc), cancelled=True))
        except Exception as exc:  # noqa: BLE001 - shown inline, never a hung UI
            self.post_message(InstallDone(epoch, error=self.describe(exc)))
        else:
            self.post_message(InstallDone(epoch, report=report))

    def on_install_progress_message(self, message: InstallProgressMessage) -> None:
        self.show_progress(message.progress)

    def show_progress(self, p: InstallProgress) -> None:
        bar = self.query_one("#model-progress", ProgressBar)
        bar.display = True
        bar.update(total=max(p.bytes_total, 1), progress=p.bytes_done)
        line = Text()
        line.append(_("{done} of {total}").format(done=human_bytes(p.bytes_done), total=human_bytes(p.bytes_total)),
                    style="bold")
        line.append(f"  ·  {human_bytes(p.rate_bps)}/s  ·  " + _("ETA {eta}").format(eta=human_eta(p.eta_seconds)))
        self.say("#model-rate", line)
        if self.cancel_event is not None and not self.cancel_event.is_set():
            finished = sum(f.state in ("downloaded", "reused", "copied") for f in p.files)
            self.say("#model-message", Text(_("{done} of {total} files ready…").format(done=finished, total=len(p.files))))
        self.file_states = {f.path: f.state for f in p.files}
        table = self.query_one("#model-files", DataTable)
        for f in p.files:
            cells = (plain(f.path), plain(human_bytes(f.bytes_total)), plain(human_bytes(f.bytes_done)),
                     state_cell(f.state))
            if f.path in self.rows:
                for key, cell in zip(("file", "size", "done", "state"), cells, strict=True):
                    table.update_cell(f.path, key, cell)
                continue
            self.rows.add(f.path)
            table.add_row(*cells, key=f.path)

    def on_install_done(self, message: InstallDone) -> None:
        self.cancel_event = None
        self.set_running(False)
        self.show_terms()
        start = self.query_one("#start", Button)
        if message.cancelled:
            start.label = _("Resume")
            table = self.query_one("#model-files", DataTable)
            for path, state in self.file_states.items():
                if state in ("downloading", "verifying") and path in self.rows:
                    table.update_cell(path, "state", state_cell("cancelled", "yellow"))
            self.say("#model-message", Text(message.error or _("Cancelled."), style="yellow"))
            return
        if message.error:
            start.label = _("Retry")
            error = Text(message.error, style="bold red")
            if "--from DIR" in message.error:  # in this screen the folder goes in the field beside the buttons
                error.append("\n" + _("Here: type that folder in the field beside the buttons and press enter."),
                             style="yellow")
            self.say("#model-message", error)
            return
        report = message.report
        if report is None:
            return
        table = self.query_one("#model-files", DataTable)
        failed = []
        for f in report.files:
            if f.path in self.rows:
                table.update_cell(f.path, "state", state_cell(f.status))
            if f.status == "failed":
                failed.append(f"{f.path}: {f.error}")
        if report.ok:
            start.label = _("Verify again")
            done = Text(_("Model installed and verified in {folder}.").format(folder=tilde(report.directory)),
                        style="bold green")
            if self.memories.vault is not None:
                done.append("\n" + _("The unlocked vault is being embedded in the background."), style="green")
                self.memories.request_embedding()
            self.say("#model-message", done)
        else:
            start.label = _("Resume")
            self.say("#model-message", Text(_("Some files failed:") + "\n" + "\n".join(failed), style="bold red"))

    def on_unmount(self) -> None:
        if self.cancel_event is not None:
            self.cancel_event.set()
