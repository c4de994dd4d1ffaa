"""The real TUI for bench_daemon.py's memory figures: headless, driven by Pilot.

Unlocks the home's vault `bench` on its unlock screen (passphrase from $MEMORIES_PASSPHRASE),
runs one hybrid search on its engine so the embedding model is loaded, waits until it serves
the socket (or follows a daemon, or neither with MEMORIES_NO_DAEMON=1), prints `ready` and
stays up until its standard input closes.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


async def main() -> None:
    from textual.widgets import Input

    from memories_tui.engine import Engine
    from memories_tui.tui.app import MemoriesApp
    from memories_tui.tui.screens.records import RecordsScreen
    from memories_tui.tui.screens.vaults import UnlockScreen

    app = MemoriesApp(Engine.open())
    async with app.run_test(headless=True, size=(120, 40)) as pilot:
        async def until(predicate, what: str) -> None:
            for _ in range(6000):
                if predicate():
                    return
                await pilot.pause(0.02)
            raise SystemExit(f"timed out waiting for {what}")

        await until(lambda: isinstance(app.screen, UnlockScreen), "the unlock screen")
        field = app.screen.query_one("#passphrase", Input)
        field.focus()
        field.value = os.environ["MEMORIES_PASSPHRASE"]
        await pilot.press("enter")
        await until(lambda: isinstance(app.screen, RecordsScreen), "the records screen")
        assert app.vault is not None
        await asyncio.to_thread(app.engine.search, app.vault.vault_id, "bread by the river", mode="hybrid")
        if os.environ.get("MEMORIES_NO_DAEMON") != "1":
            await until(lambda: app.daemon_link.host is not None or app.daemon_link.remote is not None,
                        "the socket link")
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.read)


if __name__ == "__main__":
    asyncio.run(main())
