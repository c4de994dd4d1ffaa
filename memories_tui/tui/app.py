"""The Memories terminal UI: hosts the engine in-process.

`memories-tui [--home DIR] [--config FILE]` or `memories tui` / `memories` with no verb.
The engine is synchronous; everything slow (unlock's KDF, ingest, search, status, model
install) runs in thread workers that post typed messages (messages.py) back. Locking
(`ctrl+l` or the idle timer) zeroes keys in the engine, pops every screen that shows vault
data and returns to the unlock screen; results of workers started before the lock are dropped.

Background embedding: after unlock, an ingest, a record change or a model install, the engine's
`BackgroundEmbedding` runs one low-priority job when a model is installed; its progress is the
`embed_state` reactive, shown by the `EmbedStatus` line (embedding_actions.py). Lock cancels it.
Vector/hybrid panes wait for it instead of embedding on their own, and re-run when it ends.
The idle timer treats running ingest / model install / vault creation as activity.
"""

from __future__ import annotations

import asyncio
import gc
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
from ..errors import MemoriesError
from ..frontend.words import lock_notice
from ..i18n import N_, _, resolve_language, set_language
from . import crash, sync_notice
from .commands import MemoriesCommands
from .daemon_link import DaemonLink, LockedElsewhere
from .data_actions import DataActions
from .embedding_actions import EmbeddingActions
from .keymap import apply_keymap
from .keys import KeyRouting
from .language_switch import LanguageActions
from .launch import parse_arguments, run_guarded
from .screens.base import VaultScreen
from .screens.create_vault import CreateVaultScreen
from .screens.help import HelpScreen
from .screens.vaults import UnlockScreen, VaultPickerScreen
from .textual_adapter import SafeExceptions
from .threads import DaemonThreadExecutor

# The screens behind the unlock screen load on first use (local imports below): the first
# frame waits for nothing it does not show (bench/bench_tui_start.py measures it).
from .widgets.embed_status import EmbedState

ACTIVITY_EVENTS = (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp, events.Paste)
# worker groups whose work counts as activity for the idle lock (locking would cancel or cut them)
BUSY_GROUPS = frozenset({"ingest", "model-install", "create-vault", "backup"})


class MemoriesApp(DataActions, EmbeddingActions, LanguageActions, KeyRouting, SafeExceptions, App):
    """Vault picker → unlock → records, with search, ingest, model install and status on top."""

    CSS_PATH = "app.tcss"
    TITLE = "Memories"
    COMMANDS = App.COMMANDS | {MemoriesCommands}
    BINDINGS = [
        Binding("f1", "help", N_("Help"), id="help"),
        Binding("question_mark", "help", N_("Help"), id="help.question", show=False),
        Binding("ctrl+l", "lock", N_("Lock"), id="lock", priority=True),
        Binding("f2", "open_model", N_("Model"), tooltip=N_("Install the embedding model"), id="model.open", show=False),
        Binding("ctrl+q", "quit", N_("Quit"), id="quit", priority=True),
        # closes Textual's key panel (palette → "Keys"); inactive, so esc goes on, when it is not shown
        Binding("escape", "hide_help_panel", N_("Close keys"), id="keys.close", show=False, priority=True),
        # Textual's own tab binding waits in the focused field's queue, so keys typed right after
        # it (a paste, a password manager's auto-type) landed in the old field; as app priority
        # bindings the focus moves before the next key is routed. No widget here uses tab itself.
        Binding("tab", "focus_next", id="focus.next", show=False, priority=True),
        Binding("shift+tab", "focus_previous", id="focus.previous", show=False, priority=True),
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
        self.embedding = self.engine.background_embedding(self._deliver_embedding)
        # serves the home's socket, or follows a separate daemon's lock state (daemon_link.py)
        self.daemon_link = DaemonLink(self.engine, lambda ids, why: self.post_message(LockedElsewhere(ids, why)),
                                      idle_lock_in=self.idle_lock_in)
        # a background sync that starts failing is said, not only in status; one that ended reloads the list
        self.sync_notices = sync_notice.SyncNotices(self._synced_in_background)
        self._quit_question: Screen[Any] | None = None  # "Quit without saving?" while it is asked
        self.stopping = threading.Event()  # set as the app ends: a "sync now" still reading the target stops at
        # once (its worker thread would otherwise keep the process from exiting while a server holds a read back)
        self._first_screen: Screen | None = None  # chosen with the default screen, pushed on mount
        self._start_error = ""
        self._gc_paused = False  # see on_load
        # one key derivation at a time, whichever screen starts it (each takes 256 MiB)
        self.kdf_lock = threading.Lock()

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
        """The vault picker, at the bottom of the stack; the first screen may go on top of it."""
        self._first_screen = self._choose_first_screen()
        return VaultPickerScreen(deferred=self._first_screen is not None)

    def _choose_first_screen(self) -> Screen | None:
        """The create form in an empty home, the unlock screen of the only vault, else the picker
        (None): also when some `*.mvault` file is not a usable vault, so the user sees why."""
        try:
            scan = self.engine.scan_vaults()
        except MemoriesError as exc:
            self._start_error = exc.localized()
            return None
        if scan.problems:
            return None
        if not scan.vaults:
            return CreateVaultScreen(first_run=True)
        return UnlockScreen(scan.vaults[0]) if len(scan.vaults) == 1 else None

    def on_load(self) -> None:
        """Start-up allocates many objects that live on (widgets, styles): the cycle collector
        waits until the first frame is drawn instead of walking them all before it.
        Thread workers run on daemon threads that quitting does not wait for (threads.py)."""
        self._gc_paused = gc.isenabled()
        gc.disable()
        asyncio.get_running_loop().set_default_executor(DaemonThreadExecutor())

    def _resume_gc(self) -> None:
        """After the first frame, or when the app ends before one (exit, unmount)."""
        if self._gc_paused:
            self._gc_paused = False
            gc.enable()

    def on_unmount(self) -> None:
        self.stopping.set()
        self._resume_gc()
        self.daemon_link.close()

    def on_mount(self) -> None:
        self.set_interval(1.0, self.check_idle_lock, name="idle-lock")
        self.set_interval(sync_notice.EVERY_SECONDS, self.check_sync, name="sync-notice")
        apply_keymap(self, self.engine.config.tui.keys)
        self.call_after_refresh(self._after_first_frame)
        if self._start_error:
            self.notify(self._start_error, severity="error")
        if self._first_screen is not None:
            self.push_screen(self._first_screen)

    def _after_first_frame(self) -> None:
        """Once the first screen is drawn: the cycle collector runs again, and the engine's
        search code loads in the background.

        The first frame waits for no index, segmenter or model code (
        bench/bench_tui_start.py measures it); loading it now means the first unlock and search
        do not wait for it either. A daemon thread: quitting never waits for it."""
        screen = self.screen
        if not screen.is_mounted:
            self.call_after_refresh(self._after_first_frame)
            return

        def drawn() -> None:
            self._resume_gc()
            threading.Thread(target=self.engine.preload, name="memories-preload", daemon=True).start()
            threading.Thread(target=self.daemon_link.start, name="memories-daemon-link", daemon=True).start()

        # call_later: after the screen's other after-refresh callbacks (the bench's clock is one)
        screen.call_after_refresh(self.call_later, drawn)

    # -- idle lock ------------------------------------------------------------------------------
    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, ACTIVITY_EVENTS):
            self._last_activity = time.monotonic()
            self.daemon_link.activity()
        await super().on_event(event)

    def busy_work(self) -> bool:
        """Is an ingest, model install or vault creation running? (such work is never cut by the idle lock)."""
        return any(w.group in BUSY_GROUPS and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
                   for w in self.workers)

    def idle_lock_in(self) -> float | None:
        """Seconds until the idle timer locks the open vault, None if it will not (`daemon status` asks)."""
        if self.idle_lock_seconds <= 0 or self.vault is None:
            return None
        return max(0.0, self.idle_lock_seconds - (time.monotonic() - self._last_activity))

    async def check_idle_lock(self) -> None:
        self.daemon_link.poll()
        if self.idle_lock_seconds <= 0 or self.vault is None:
            return
        if self.busy_work():
            self._last_activity = time.monotonic()
            return
        if time.monotonic() - self._last_activity >= self.idle_lock_seconds:
            minutes = self.idle_lock_seconds / 60
            await self.action_lock()
            self.notify(_("Locked after {minutes:g} idle minute(s).").format(minutes=minutes), title=_("Auto-lock"))

    def check_sync(self) -> None:
        self.sync_notices.check(self, self.engine, self.vault.vault_id if self.vault is not None else None)

    def _synced_in_background(self, vault_id: str) -> None:
        """A sync of the open vault ended: the records list shows what it brought (another screen
        reloads the list when it is back)."""
        from .screens.records import RecordsScreen

        if isinstance(self.screen, RecordsScreen) and self.screen.vault_id == vault_id:
            self.screen.action_reload()

    # -- unexpected errors -------------------------------------------------------------------------
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """One handler for unexpected worker failures (expected ones are MemoriesError, shown inline)."""
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        if isinstance(error, MemoriesError):
            message = error.localized()
        else:
            message = crash.report(error if error is not None else RuntimeError(), self.engine.home, stopped=False)
        self.notify(message, title=_("Background task failed"), severity="error", timeout=10, markup=False)

    def replace_uncaught(self, error: Exception) -> Exception:
        """An exception no handler caught stops the app (the widget that raised it cannot go on).

        Textual would print a traceback with every frame's local variables (passphrases, note
        text) on the terminal: the error is logged without content (crash.py) and Textual
        prints the one line of `StoppedError` instead (see textual_adapter.py)."""
        if isinstance(error, crash.StoppedError):
            return error
        stopped = crash.StoppedError(crash.report(error, self.engine.home))
        stopped.__cause__ = error  # for tests: Pilot re-raises it, pytest shows the cause
        return stopped

    # -- vault life cycle -------------------------------------------------------------------------
    def vault_unlocked(self, info: VaultInfo) -> None:
        """Called by the unlock / create screens once the engine holds the vault open."""
        self.vault = info
        self._last_activity = time.monotonic()
        self.refresh_bindings()
        # in the app's queue: the screen that called this is replaced, so it must not wait for it
        self.call_later(self._show_records, info)
        self.request_embedding()

    async def _show_records(self, info: VaultInfo) -> None:
        """The records screen, then the keys typed while the vault unlocked, as if typed now."""
        from .screens.records import RecordsScreen

        if isinstance(self.screen, UnlockScreen | CreateVaultScreen):
            await self.switch_screen(RecordsScreen(info.vault_id))
        else:
            await self.push_screen(RecordsScreen(info.vault_id))
        self.release_keys(replay=True)

    def exit(self, *args: Any, **kwargs: Any) -> None:
        self._resume_gc()
        self.stop_embedding()
        self.daemon_link.close()
        super().exit(*args, **kwargs)

    async def action_quit(self) -> None:
        """ctrl+q: an editor holding unsaved text asks first, as its esc does (a note a sync deleted
        while it was edited is what this keeps); anything else quits at once."""
        from .screens.confirm import ConfirmScreen
        from .screens.editor import RecordEditorScreen

        unsaved = any(isinstance(s, RecordEditorScreen) and s.has_unsaved_text() for s in self.screen_stack)
        if not unsaved or self.screen is self._quit_question:  # ctrl+q on the question itself quits
            self.exit()
            return
        self._quit_question = ConfirmScreen(_("Unsaved changes"), _("Quit without saving? What you typed in the "
                                                                   "editor is lost."),
                                            yes=_("Quit"), no=_("Keep editing"), danger=True)
        self.push_screen(self._quit_question, lambda leave: self.exit() if leave else None)

    async def action_lock(self) -> None:
        """Zero keys and indexes, pop every screen showing vault data, back to the unlock screen."""
        info = await self.backed_up_before_lock(self.vault)  # `[backup] every_hours` (data_actions.py)
        self.stop_embedding()
        self.engine.lock()
        self.daemon_link.locked(info.vault_id if info is not None else None)
        self.vault = None
        self.refresh_bindings()
        if info is None and not any(isinstance(s, VaultScreen) for s in self.screen_stack):
            return
        while len(self.screen_stack) > 1:
            await self.pop_screen()
        if info is not None:
            await self.push_screen(UnlockScreen(info))

    async def on_locked_elsewhere(self, message: LockedElsewhere) -> None:
        if self.vault is not None and self.vault.vault_id in message.vault_ids:
            await self.action_lock()
            self.notify(lock_notice(message.reason), title=_("Locked"))

    async def action_switch_vault(self) -> None:
        self.stop_embedding()
        self.daemon_link.locked(self.vault.vault_id if self.vault is not None else None)
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
            self.notify(_("Unlock a vault first."), severity="warning")
            return None
        return self.vault.vault_id

    async def _open(self, make: Callable[[str], Screen]) -> None:
        from .screens.records import RecordsScreen

        vault_id = self._unlocked_id()
        if vault_id is None:
            return
        while len(self.screen_stack) > 1 and not isinstance(self.screen, RecordsScreen):
            await self.pop_screen()
        await self.push_screen(make(vault_id))

    async def action_open_search(self) -> None:
        from .screens.search import SearchScreen

        await self._open(SearchScreen)

    async def action_open_ask(self) -> None:
        from .screens.ask import AskScreen

        await self._open(AskScreen)

    async def action_open_ingest(self) -> None:
        from .screens.ingest import IngestScreen

        await self._open(lambda vid: IngestScreen(vid, self.browse_root))

    async def action_open_status(self) -> None:
        from .screens.status import StatusScreen

        await self._open(StatusScreen)

    async def action_open_records(self) -> None:
        from .screens.records import RecordsScreen

        if self._unlocked_id() is None:
            return
        while len(self.screen_stack) > 1 and not isinstance(self.screen, RecordsScreen):
            await self.pop_screen()

    async def action_open_model(self) -> None:
        from .screens.model import ModelInstallScreen

        if isinstance(self.screen, ModelInstallScreen):
            return
        await self.push_screen(ModelInstallScreen())



def run_app(home: str | Path | None = None, config: str | Path | None = None, language: str | None = None) -> int:
    """Open the engine and run the TUI in `language` (a `--lang` value; None: `[ui] language`);
    raises MemoriesError (e.g. a bad config) before any UI. Returns the app's exit status."""
    engine = Engine.open(home, config)
    set_language(resolve_language(language or engine.config.ui.language))
    app = MemoriesApp(engine)
    try:
        app.run()
        return app.return_code or 0
    finally:
        app.daemon_link.close()
        engine.lock()


def main(argv: list[str] | None = None) -> int:
    """`memories-tui`: see launch.py."""
    args = parse_arguments(argv)
    return run_guarded(lambda: run_app(args.home, args.config, args.lang))


if __name__ == "__main__":  # pragma: no cover
    main()
