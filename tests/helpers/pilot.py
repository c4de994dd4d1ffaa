"""Helpers for driving the TUI with Pilot (shared by the tests under tests/tui)."""

from __future__ import annotations

import time

from rich.text import Text
from textual.widgets import Input, Static

PASS = "correct horse battery staple"


async def wait_for(pilot, predicate, timeout: float = 60.0) -> None:
    """Wait for a condition, never for a fixed time; `timeout` only stops a hung test on a loaded machine."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not reached in time; screen={pilot.app.screen!r} "
                                 f"stack={pilot.app.screen_stack}")
        await pilot.pause(0.02)


async def unlock_with(pilot, app, passphrase: str, timeout: float = 30.0) -> None:
    """Type `passphrase` on the unlock screen the app opens with, then wait for the records screen."""
    from memories_tui.tui.screens.records import RecordsScreen
    from memories_tui.tui.screens.vaults import UnlockScreen

    await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen) and bool(app.screen.query("#passphrase")),
                   timeout)
    await type_text(pilot, app.screen.query_one("#passphrase", Input), passphrase)
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen), timeout)


def static_text(widget: Static) -> str:
    content = widget.content
    return content.plain if isinstance(content, Text) else str(content)


async def type_text(pilot, widget: Input, text: str) -> None:
    widget.focus()
    widget.value = text
    await pilot.pause()


def footer_keys(screen) -> dict[str, str]:
    """description → key as the footer shows them right now."""
    from textual.widgets._footer import FooterKey

    return {key.description: key.key_display for key in screen.query(FooterKey)}


async def open_records(pilot, app, vault_id: str):
    """The records screen of a vault the engine has unlocked, as the app shows it after an unlock."""
    from memories_tui.tui.screens.records import RecordsScreen

    app.vault_unlocked(app.engine.resolve_vault(vault_id))
    await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
    return app.screen


async def ask(pilot, app, vault_id: str, question: str, *, wait: bool = True):
    """Open Ask on an unlocked vault and submit `question`; with `wait`, until the answer (or
    why there is none) shows. The Ask screen."""
    from memories_tui.tui.screens.ask import AskScreen

    await open_records(pilot, app, vault_id)
    await pilot.press("a")
    await wait_for(pilot, lambda: isinstance(app.screen, AskScreen))
    screen = app.screen
    field = screen.query_one("#question", Input)
    field.focus()
    field.value = question
    await pilot.press("enter")
    if wait:
        await wait_for(pilot, lambda: screen.state not in ("idle", "working"))
    return screen
