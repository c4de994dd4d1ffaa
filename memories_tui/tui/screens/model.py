"""Model install: live progress (bytes, rate, ETA), per-file verify state, start / cancel / resume."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Footer, Header, ProgressBar, Static

from ...engine import PINNED_MODEL, ModelManifest
from ...errors import CancelledError
from ..messages import InstallDone, InstallProgressMessage, describe
from ..text import human_eta, plain
from .base import EngineScreen

if TYPE_CHECKING:  # httpx loads only when the install starts
    from ...engine import InstallProgress

STATE_STYLE = {"pending": "dim", "downloading": "cyan", "verifying": "yellow", "downloaded": "green",
               "reused": "green", "failed": "bold red"}


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _pinned_manifest() -> ModelManifest | None:
    return PINNED_MODEL


class ModelInstallScreen(EngineScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="back"),
        Binding("ctrl+r", "start", "Start / resume", id="model.start"),
        Binding("ctrl+x", "cancel", "Cancel download", id="model.cancel"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.cancel_event: threading.Event | None = None
        self.rows: set[str] = set()
        self.file_states: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="model"):
            yield Static(id="model-intro")
            yield ProgressBar(id="model-progress", show_eta=False)
            yield Static(id="model-rate")
            yield DataTable(id="model-files", cursor_type="row", zebra_stripes=True)
            yield Static(id="model-message")
            with Horizontal(id="model-buttons"):
                yield Button("Start", id="start", variant="primary")
                yield Button("Cancel", id="cancel", variant="error", disabled=True)
        yield Footer()

    @property
    def available(self) -> bool:
        return hasattr(self.engine, "install_model")

    def on_mount(self) -> None:
        table = self.query_one("#model-files", DataTable)
        table.add_column("File", key="file", width=40)
        table.add_column("Size", key="size", width=11)
        table.add_column("Done", key="done", width=11)
        table.add_column("State", key="state", width=12)
        intro = Text("The embedding model enables vector and hybrid search. Files are downloaded once, "
                     "checked against pinned SHA-256 hashes, and can be resumed after a cancel or a failure.")
        manifest = _pinned_manifest()
        if manifest is not None:
            intro.append(f"\n{manifest.repo} @ {manifest.revision[:12]} · {len(manifest.files)} files · "
                         f"{human_bytes(manifest.total_bytes)}", style="dim")
            table = self.query_one("#model-files", DataTable)
            for mf in manifest.files:
                self.rows.add(mf.path)
                table.add_row(plain(mf.path), plain(human_bytes(mf.bytes)), plain("–"),
                              plain("pending", STATE_STYLE["pending"]), key=mf.path)
        self.query_one("#model-intro", Static).update(intro)
        if not self.available:
            self.query_one("#model-message", Static).update(
                Text("The model installer is unavailable in this build.", style="bold red"))
            self.query_one("#start", Button).disabled = True

    def action_back(self) -> None:
        self.dismiss()

    @on(Button.Pressed, "#start")
    def action_start(self) -> None:
        if not self.available or self.cancel_event is not None:
            return
        self.cancel_event = threading.Event()
        self.query_one("#start", Button).disabled = True
        self.query_one("#cancel", Button).disabled = False
        self.query_one("#model-message", Static).update(Text("Starting…"))
        self.install_worker(self.cancel_event, self.epoch())

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        if self.cancel_event is not None:
            self.cancel_event.set()
            self.query_one("#model-message", Static).update(Text("Cancelling…"))

    @work(thread=True, exclusive=True, group="model-install", exit_on_error=False)
    def install_worker(self, cancel: threading.Event, epoch: int) -> None:
        def progress(p: InstallProgress) -> None:
            self.post_message(InstallProgressMessage(epoch, progress=p))

        try:
            report = self.engine.install_model(progress=progress, cancel=cancel)
        except CancelledError as exc:
            self.post_message(InstallDone(epoch, error=describe(exc), cancelled=True))
        except Exception as exc:  # noqa: BLE001 - shown inline, never a hung UI
            self.post_message(InstallDone(epoch, error=describe(exc)))
        else:
            self.post_message(InstallDone(epoch, report=report))

    def on_install_progress_message(self, message: InstallProgressMessage) -> None:
        self.show_progress(message.progress)

    def show_progress(self, p: InstallProgress) -> None:
        bar = self.query_one("#model-progress", ProgressBar)
        bar.update(total=max(p.bytes_total, 1), progress=p.bytes_done)
        line = Text()
        line.append(f"{human_bytes(p.bytes_done)} of {human_bytes(p.bytes_total)}", style="bold")
        line.append(f"  ·  {human_bytes(p.rate_bps)}/s  ·  ETA {human_eta(p.eta_seconds)}")
        if p.current:
            line.append(f"  ·  {p.current}", style="dim")
        self.query_one("#model-rate", Static).update(line)
        if self.cancel_event is not None and not self.cancel_event.is_set():
            active = next((f for f in p.files if f.state in ("downloading", "verifying")), None)
            status = f"{active.state.capitalize()} {active.path}…" if active else "Working…"
            self.query_one("#model-message", Static).update(Text(status))
        self.file_states = {f.path: f.state for f in p.files}
        table = self.query_one("#model-files", DataTable)
        for f in p.files:
            cells = (plain(f.path), plain(human_bytes(f.bytes_total)), plain(human_bytes(f.bytes_done)),
                     plain(f.state, STATE_STYLE.get(f.state, "")))
            if f.path in self.rows:
                for key, cell in zip(("file", "size", "done", "state"), cells, strict=True):
                    table.update_cell(f.path, key, cell)
                continue
            self.rows.add(f.path)
            table.add_row(*cells, key=f.path)

    def on_install_done(self, message: InstallDone) -> None:
        self.cancel_event = None
        self.query_one("#cancel", Button).disabled = True
        start = self.query_one("#start", Button)
        start.disabled = False
        out = self.query_one("#model-message", Static)
        if message.cancelled:
            start.label = "Resume"
            table = self.query_one("#model-files", DataTable)
            for path, state in self.file_states.items():
                if state in ("downloading", "verifying") and path in self.rows:
                    table.update_cell(path, "state", plain("cancelled", "yellow"))
            out.update(Text(message.error or "Cancelled.", style="yellow"))
            return
        if message.error:
            start.label = "Retry"
            out.update(Text(message.error, style="bold red"))
            return
        report = message.report
        if report is None:
            return
        table = self.query_one("#model-files", DataTable)
        failed = []
        for f in report.files:
            if f.path in self.rows:
                table.update_cell(f.path, "state", plain(f.status, STATE_STYLE.get(f.status, "")))
            if f.status == "failed":
                failed.append(f"{f.path}: {f.error}")
        if report.ok:
            start.label = "Verify again"
            done = Text(f"Model installed and verified in {report.directory}.", style="bold green")
            if self.memories.vault is not None:
                done.append("\nThe unlocked vault is being embedded in the background.", style="green")
                self.memories.request_embedding()
            out.update(done)
        else:
            start.label = "Resume"
            out.update(Text("Some files failed:\n" + "\n".join(failed), style="bold red"))

    def on_unmount(self) -> None:
        if self.cancel_event is not None:
            self.cancel_event.set()
