"""The Memories terminal UI: hosts the engine in-process (R-TUI-1..3).

`memories-tui [--home DIR] [--config FILE]` or `memories tui` / `memories` with no verb.
The engine is synchronous; everything slow (unlock's KDF, ingest, search, status, model
install) runs in thread workers that post typed messages (messages.py) back. Locking
(`ctrl+l` or the idle timer) zeroes keys in the engine, pops every screen that shows vault
data and returns to the unlock screen; results of workers started before the lock are dropped.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from ..engine import Engine, VaultInfo
from ..errors import MemoriesError
from .commands import MemoriesCommands
from .screens.base import VaultScreen
from .screens.ingest import IngestScreen
from .screens.model import ModelInstallScreen
from .screens.records import RecordsScreen
from .screens.search import SearchScreen
from .screens.status import StatusScreen
from .screens.vaults import CreateVaultScreen, UnlockScreen, VaultPickerScreen

ACTIVITY_EVENTS = (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp, events.Paste)


class MemoriesApp(App):
    """Vault picker → unlock → records, with search, ingest, model install and status on top."""

    CSS_PATH = "app.tcss"
    TITLE = "Memories"
    COMMANDS = App.COMMANDS | {MemoriesCommands}
    BINDINGS = [
        Binding("ctrl+l", "lock", "Lock", id="lock", priority=True),
    ]

    def __init__(self, engine: Engine | None = None, *, home: str | Path | None = None,
                 config: str | Path | None = None, browse_root: Path | None = None) -> None:
        super().__init__()
        self.engine = engine if engine is not None else Engine.open(home, config)
        self.vault: VaultInfo | None = None
        self.browse_root = browse_root
        self.idle_lock_seconds = float(self.engine.config.tui.idle_lock_minutes) * 60.0
        self._last_activity = time.monotonic()

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

    async def check_idle_lock(self) -> None:
        if self.idle_lock_seconds <= 0 or self.vault is None:
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
        self.sub_title = info.name
        if isinstance(self.screen, UnlockScreen | CreateVaultScreen):
            self.switch_screen(RecordsScreen(info.vault_id))
        else:
            self.push_screen(RecordsScreen(info.vault_id))

    async def action_lock(self) -> None:
        """Zero keys and indexes, pop every screen showing vault data, back to the unlock screen."""
        info = self.vault
        self.engine.lock()
        self.vault = None
        self.sub_title = ""
        if info is None and not any(isinstance(s, VaultScreen) for s in self.screen_stack):
            return
        while len(self.screen_stack) > 1:
            await self.pop_screen()
        if info is not None:
            await self.push_screen(UnlockScreen(info))

    async def action_switch_vault(self) -> None:
        self.engine.lock()
        self.vault = None
        self.sub_title = ""
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
