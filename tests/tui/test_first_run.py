"""First run: focus, passphrase strength, the short-passphrase question, the
spinner's words (the estimate itself: tests/unit/test_strength.py)."""

from __future__ import annotations

import threading

from textual.widgets import Checkbox, Input, Static

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.confirm import ConfirmScreen
from memories_tui.tui.screens.create_vault import CreateVaultScreen
from memories_tui.tui.screens.records import RecordsScreen
from tests.helpers.pilot import static_text, wait_for


async def test_first_run_focus_strength_and_short_passphrase_question(engine: Engine) -> None:
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen))
        screen = app.screen
        assert screen.query_one("#name", Input).has_focus
        screen.query_one("#samples", Checkbox).value = False
        await pilot.press("enter")  # name is prefilled: enter moves to the passphrase
        assert screen.query_one("#pass1", Input).has_focus
        await pilot.press("a", "b", "c", "1")
        strength = screen.query_one("#strength", Static)
        await wait_for(pilot, lambda: "weak" in static_text(strength))
        await pilot.press("enter", "a", "b", "c", "1", "enter")

        # a short passphrase needs a confirmation; the safe answer has the focus
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "4 characters" in static_text(app.screen.query_one("#confirm-text", Static))
        await pilot.press("enter")  # "Choose another"
        await wait_for(pilot, lambda: app.screen is screen)
        assert engine.list_vaults() == []
        assert screen.query_one("#pass1", Input).value == "" and screen.query_one("#pass1", Input).has_focus

        await pilot.press("x", "y", "enter", "x", "y", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")  # esc is "no" too
        await wait_for(pilot, lambda: app.screen is screen)
        assert engine.list_vaults() == []

        await pilot.press("x", "y", "enter", "x", "y", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.click("#yes")
        # quitting right after the switch to the records screen must not trip Textual's header
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        assert [v.name for v in engine.list_vaults()] == ["Personal"]


async def test_a_long_passphrase_creates_at_once_and_the_spinner_says_what_it_does(engine: Engine) -> None:
    """The real create/unlock/import run; a gate holds the import so the status line can be read."""
    gate, reached = threading.Event(), threading.Event()
    real_import = engine.import_samples

    def gated_import(vault_id: str):
        reached.set()
        gate.wait(10)
        return real_import(vault_id)

    engine.import_samples = gated_import  # type: ignore[method-assign]
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen))
        screen = app.screen
        strong = "granite otter velvet cascade lantern"  # five random words (the well-known PASS rates weak)
        screen.query_one("#pass1", Input).value = strong
        screen.query_one("#pass2", Input).value = strong
        strength = screen.query_one("#strength", Static)
        await wait_for(pilot, lambda: "strong" in static_text(strength) or "good" in static_text(strength))
        screen.query_one("#pass2", Input).focus()
        await pilot.press("enter")
        await wait_for(pilot, reached.is_set)
        status = screen.query_one("#create-status", Static)
        await wait_for(pilot, lambda: "Importing the sample notes" in static_text(status))
        assert screen.query_one("#create-busy").display
        gate.set()
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and app.screen.records, timeout=20)
        assert len(app.screen.records) == 5
