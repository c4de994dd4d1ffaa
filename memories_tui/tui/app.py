"""The Memories terminal UI: hosts the engine in-process (R-TUI-1..3).

`memories-tui [--home DIR] [--config FILE]` or `memories tui` / `memories` with no verb.
The engine is synchronous; everything slow (unlock's KDF, ingest, search, status, model
install) runs in thread workers that post typed messages (messages.py) back. Locking
(`ctrl+l` or the idle timer) zeroes keys in the engine, pops every screen that shows vault
data and returns to the unlock screen; results of workers started before the lock are dropped.

Background embedding: after unlock, an ingest, a record change or a model install, one daemon
thread runs `engine.embed_in_background` (low thread priority) when a model is installed; its
progress is the `embed_state` reactive, shown by the `EmbedStatus` line. Lock cancels it.
Vector/hybrid panes wait for it instead of embedding on their own, and re-run when it ends.
The idle timer treats running ingest / model install / vault creation as activity.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from ..engine import Engine, VaultInfo
from ..errors import CancelledError, MemoriesError, ModelError
from .commands import MemoriesCommands
from .messages import EmbedDone, EmbedProgressMessage, describe
from .screens.base import VaultScreen
from .screens.help import HelpScreen
from .screens.ingest import IngestScreen
from .screens.model import ModelInstallScreen
from .screens.records import RecordsScreen
from .screens.search import SearchScreen
from .screens.status import StatusScreen
from .screens.vaults import CreateVaultScreen, UnlockScreen, VaultPickerScreen
from .widgets.embed_status import EmbedState

ACTIVITY_EVENTS = (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp, events.Paste)
# worker groups whose work counts as activity for the idle lock (locking would cancel or cut them)
BUSY_GROUPS = frozenset({"ingest", "model-install", "create-vault"})


class MemoriesApp(App):
    """Vault picker → unlock → records, with search, ingest, model install and status on top."""

    CSS_PATH = "app.tcss"
    TITLE = "Memories"
    COMMANDS = App.COMMANDS | {MemoriesCommands}
    BINDINGS = [
        Binding("f1", "help", "Help", id="help"),
        Binding("question_mark", "help", "Help", id="help.question", show=False),
        Binding("ctrl+l", "lock", "Lock", id="lock", priority=True),
        Binding("f2", "open_model", "Model", tooltip="Install the embedding model", id="model.open", show=False),
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True),
        # closes Textual's key panel (palette → "Keys"); inactive, so esc goes on, when it is not shown
        Binding("escape", "hide_help_panel", "Close keys", id="keys.close", show=False, priority=True),
    ]

    embed_state: reactive[EmbedState] = reactive(EmbedState, always_update=True)

    def __init__(self, engine: Engine | None = None, *, home: str | Path | None = None,
                 config: str | Path | None = None, browse_root: Path | None = None) -> None:
        super().__init__()
        self.engine = engine if engine is not None else Engine.open(home, config)
        self.vault: VaultInfo | None = None
        self.browse_root = browse_root
        self.idle_lock_seconds = float(self.engine.config.tui.idle_lock_minutes) * 60.0
        self._last_activity = time.monotonic()
        # background embedding: (job number, vault id, lock epoch) of the running job, if any
        self._embed_job = 0
        self._embed_running: tuple[int, str, int] | None = None
        self._embed_cancel: threading.Event | None = None
        self._embed_again = False
        self._embed_thread: threading.Thread | None = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide what cannot work now: lock with nothing unlocked, closing a key panel that is not shown."""
        if action == "lock":
            return self.vault is not None
        if action == "hide_help_panel":
            return bool(self.screen.query("HelpPanel"))
        if action == "help":
            return not isinstance(self.screen, HelpScreen)
        return True

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.screen))

    # -- start ------------------------------------------------------------------------------
    def get_default_screen(self) -> Screen:
        return VaultPickerScreen()

    def on_mount(self) -> None:
        self.set_interval(1.0, self.check_idle_lock, name="idle-lock")
        try:
            vaults = self.engine.list_vaults()
        except MemoriesError as exc:
            self.notify(exc.message, severity="error")
            return
        if not vaults:
            self.push_screen(CreateVaultScreen(first_run=True))
        elif len(vaults) == 1:
            self.push_screen(UnlockScreen(vaults[0]))

    # -- idle lock ------------------------------------------------------------------------------
    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, ACTIVITY_EVENTS):
            self._last_activity = time.monotonic()
        await super().on_event(event)

    def busy_work(self) -> bool:
        """Is an ingest, model install or vault creation running? (R-TUI-2: never cut by the idle lock)."""
        return any(w.group in BUSY_GROUPS and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
                   for w in self.workers)

    async def check_idle_lock(self) -> None:
        if self.idle_lock_seconds <= 0 or self.vault is None:
            return
        if self.busy_work():
            self._last_activity = time.monotonic()
            return
        if time.monotonic() - self._last_activity >= self.idle_lock_seconds:
            minutes = self.idle_lock_seconds / 60
            await self.action_lock()
            self.notify(f"Locked after {minutes:g} idle minute(s).", title="Auto-lock")

    # -- worker failures ---------------------------------------------------------------------------
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """One handler for unexpected worker failures (expected ones are MemoriesError, shown inline)."""
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        message = error.message if isinstance(error, MemoriesError) else f"{type(error).__name__}: {error}"
        self.notify(message, title="Background task failed", severity="error", timeout=10)

    # -- vault life cycle -------------------------------------------------------------------------
    def vault_unlocked(self, info: VaultInfo) -> None:
        """Called by the unlock / create screens once the engine holds the vault open."""
        self.vault = info
        self._last_activity = time.monotonic()
        self.refresh_bindings()
        if isinstance(self.screen, UnlockScreen | CreateVaultScreen):
            self.switch_screen(RecordsScreen(info.vault_id))
        else:
            self.push_screen(RecordsScreen(info.vault_id))
        self.request_embedding()

    # -- background embedding --------------------------------------------------------------------
    def request_embedding(self) -> None:
        """Embed every chunk of the unlocked vault that has no vector yet, in the background.

        Called after unlock, ingest, a record change and a model install. At most one job runs;
        a request while one runs makes it run once more when it ends (to pick up new chunks)."""
        if self.vault is None or not self.engine.is_unlocked(self.vault.vault_id):
            return
        vault_id, epoch = self.vault.vault_id, self.engine.lock_epoch
        running = self._embed_running
        if running is not None and running[1:] == (vault_id, epoch):
            self._embed_again = True
            return
        self._embed_job += 1
        self._embed_cancel = threading.Event()
        self._embed_running = (self._embed_job, vault_id, epoch)
        self._embed_again = False
        self.embed_state = EmbedState("starting")
        self.embed_worker(vault_id, self._embed_job, epoch, self._embed_cancel)

    def embedding_active(self, vault_id: str) -> bool:
        running = self._embed_running
        return running is not None and running[1:] == (vault_id, self.engine.lock_epoch)

    def stop_embedding(self) -> None:
        """Cancel the background job (lock, switch vault); whatever it reports later is dropped."""
        if self._embed_cancel is not None:
            self._embed_cancel.set()
        self._embed_cancel = None
        self._embed_running = None
        self._embed_again = False
        self.embed_state = EmbedState()

    def embed_worker(self, vault_id: str, job: int, epoch: int, cancel: threading.Event) -> None:
        """A dedicated daemon thread, not a pooled Textual worker: `embed_in_background` lowers its
        thread's priority for good (a pooled thread would keep it for later searches), and quitting
        must never wait for a long embedding."""
        thread = threading.Thread(target=self._embed, args=(vault_id, job, epoch, cancel),
                                  name=f"memories-embed-{job}", daemon=True)
        self._embed_thread = thread
        thread.start()

    def _embed(self, vault_id: str, job: int, epoch: int, cancel: threading.Event) -> None:
        engine = self.engine

        def post(message: EmbedDone | EmbedProgressMessage) -> None:
            if engine.lock_epoch == epoch and not cancel.is_set():
                try:
                    self.post_message(message)
                except RuntimeError:  # the app's loop is gone (quitting)
                    cancel.set()

        try:
            engine.embedder()  # raises ModelError when no usable model is installed
        except ModelError as exc:
            post(EmbedDone(epoch, job=job, error=describe(exc), not_installed=True))
            return
        except Exception as exc:  # noqa: BLE001 - shown in the status line, never a hung UI
            post(EmbedDone(epoch, job=job, error=describe(exc)))
            return
        try:
            report = engine.embed_in_background(
                vault_id, progress=lambda p: post(EmbedProgressMessage(epoch, job=job, progress=p)), cancel=cancel)
        except CancelledError:
            post(EmbedDone(epoch, job=job, cancelled=True))
        except Exception as exc:  # noqa: BLE001 - shown in the status line, never a hung UI
            post(EmbedDone(epoch, job=job, error=describe(exc)))
        else:
            try:
                matrix = engine.index(vault_id).vectors
                vectors = len(matrix) if matrix is not None else 0
            except MemoriesError:  # locked meanwhile: dropped anyway
                vectors = 0
            post(EmbedDone(epoch, job=job, report=report, vectors=vectors))

    def exit(self, *args: Any, **kwargs: Any) -> None:
        self.stop_embedding()
        super().exit(*args, **kwargs)

    def _embed_message_live(self, message: EmbedDone | EmbedProgressMessage) -> bool:
        running = self._embed_running
        return (running is not None and running[0] == message.job and running[2] == message.epoch
                and message.epoch == self.engine.lock_epoch)

    def on_embed_progress_message(self, message: EmbedProgressMessage) -> None:
        if not self._embed_message_live(message):
            return
        p = message.progress
        self.embed_state = EmbedState("running", done=p.done, total=p.total, tokens_per_second=p.tokens_per_second,
                                      eta_seconds=p.eta_seconds)

    def on_embed_done(self, message: EmbedDone) -> None:
        if not self._embed_message_live(message):
            return
        again = self._embed_again
        self._embed_running = None
        self._embed_cancel = None
        self._embed_again = False
        if message.not_installed or message.cancelled:
            self.embed_state = EmbedState()
        elif message.error is not None:
            self.embed_state = EmbedState("failed", message=message.error)
        else:
            self.embed_state = EmbedState("done", report=message.report, vectors=message.vectors)
        if again and not message.not_installed:
            self.request_embedding()
            return
        for screen in self.screen_stack:
            if isinstance(screen, SearchScreen):
                screen.embedding_finished()

    async def action_lock(self) -> None:
        """Zero keys and indexes, pop every screen showing vault data, back to the unlock screen."""
        info = self.vault
        self.stop_embedding()
        self.engine.lock()
        self.vault = None
        self.refresh_bindings()
        if info is None and not any(isinstance(s, VaultScreen) for s in self.screen_stack):
            return
        while len(self.screen_stack) > 1:
            await self.pop_screen()
        if info is not None:
            await self.push_screen(UnlockScreen(info))

    async def action_switch_vault(self) -> None:
        self.stop_embedding()
        self.engine.lock()
        self.vault = None
        self.refresh_bindings()
        while len(self.screen_stack) > 1:
            await self.pop_screen()

    async def action_create_vault(self) -> None:
        await self.push_screen(CreateVaultScreen())

    # -- navigation -----------------------------------------------------------------------------
    def _unlocked_id(self) -> str | None:
        if self.vault is None or not self.engine.is_unlocked(self.vault.vault_id):
            self.notify("Unlock a vault first.", severity="warning")
            return None
        return self.vault.vault_id

    async def _open(self, make: Callable[[str], Screen]) -> None:
        vault_id = self._unlocked_id()
        if vault_id is None:
            return
        while len(self.screen_stack) > 1 and not isinstance(self.screen, RecordsScreen):
            await self.pop_screen()
        await self.push_screen(make(vault_id))

    async def action_open_search(self) -> None:
        await self._open(SearchScreen)

    async def action_open_ingest(self) -> None:
        await self._open(lambda vid: IngestScreen(vid, self.browse_root))

    async def action_open_status(self) -> None:
        await self._open(StatusScreen)

    async def action_open_records(self) -> None:
        if self._unlocked_id() is None:
            return
        while len(self.screen_stack) > 1 and not isinstance(self.screen, RecordsScreen):
            await self.pop_screen()

    async def action_open_model(self) -> None:
        if isinstance(self.screen, ModelInstallScreen):
            return
        await self.push_screen(ModelInstallScreen())


def run_app(home: str | Path | None = None, config: str | Path | None = None) -> None:
    """Open the engine and run the TUI; raises MemoriesError (e.g. a bad config) before any UI."""
    engine = Engine.open(home, config)
    try:
        MemoriesApp(engine).run()
    finally:
        engine.lock()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memories-tui", description="Memories: the terminal UI of your encrypted, "
                                     "local-first memory vault.")
    parser.add_argument("--home", help="Memories home folder (default: $MEMORIES_HOME or the platform data folder)")
    parser.add_argument("--config", help="config file (default: HOME/config.toml)")
    args = parser.parse_args(argv)
    try:
        run_app(args.home, args.config)
    except MemoriesError as exc:
        print(f"memories-tui: {exc.message}", file=sys.stderr)
        sys.exit(1)
    return 0


if __name__ == "__main__":  # pragma: no cover
    main()
