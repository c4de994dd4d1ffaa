"""A second search over a limit no longer crashes the app, an
unexpected error never prints a traceback (with locals) or note text, and keys typed in one
burst after the passphrase reach the screens after the unlock."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from textual import events
from textual.screen import Screen
from textual.widgets import Input, Static

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.crash import StoppedError
from memories_tui.tui.screens.ask import AskScreen
from memories_tui.tui.screens.confirm import ConfirmScreen
from memories_tui.tui.screens.editor import RecordEditorScreen
from memories_tui.tui.screens.records import RecordsScreen
from memories_tui.tui.screens.search import SearchScreen
from memories_tui.tui.screens.vaults import UnlockScreen
from memories_tui.tui.widgets.results import ResultsPane
from tests.helpers.pilot import PASS, static_text, wait_for
from tests.tui.test_keys import unlock_to_records


def notes_vault(engine: Engine) -> str:
    info = engine.create_vault("Personal", PASS)
    engine.unlock(info.vault_id, PASS)
    engine.add_record(info.vault_id, kind="memory", title="Sourdough", body="Bake sourdough at 250 °C in a pot.")
    engine.add_record(info.vault_id, kind="card", title="Sourdough starter", body="Feed the sourdough starter daily.")
    engine.add_record(info.vault_id, kind="card", title="京都旅行", body="京都的寺廟很多，秋天的楓葉最美。")
    engine.lock()
    return info.vault_id


def burst(app: MemoriesApp, *keys: str) -> None:
    """Keys posted in one go, as a paste or a password manager's auto-type sends them: none
    waits for the one before it to be handled (Pilot's `press` waits after every key)."""
    for key in keys:
        if key == "enter":
            app.post_message(events.Key("enter", "\r"))
        else:
            for char in key:
                app.post_message(events.Key("space" if char == " " else char, char))


def panes(app: MemoriesApp) -> dict[str, ResultsPane]:
    return {mode: app.screen.query_one(f"#pane-{mode}", ResultsPane) for mode in ("bm25", "vector", "hybrid")}


async def test_a_query_over_the_limit_after_results_shows_the_limit_instead_of_crashing(engine: Engine) -> None:
    notes_vault(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(140, 45)) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        query = app.screen.query_one("#query", Input)
        query.value = "sourdough"
        await pilot.press("enter")
        await wait_for(pilot, lambda: all(p.shown for p in panes(app).values()), timeout=60)
        assert len(panes(app)["bm25"].hits) == 2
        assert panes(app)["bm25"].shared  # rows tagged "also in Hybrid": the state the crash needed

        for too_long in ("x" * 1100, " ".join(f"w{n}" for n in range(70))):
            await pilot.press("ctrl+f")
            query.value = too_long
            await pilot.press("enter")
            await wait_for(pilot, lambda: all(p.shown for p in panes(app).values()), timeout=60)
            bm25 = panes(app)["bm25"]
            assert not bm25.hits and not bm25.shared and bm25.option_list.option_count == 0
            assert "limit" in static_text(bm25.state), static_text(bm25.state)
            # and a normal search works again afterwards
            query.value = "sourdough"
            await pilot.press("enter")
            await wait_for(pilot, lambda: len(panes(app)["bm25"].hits) == 2, timeout=60)
        assert isinstance(app.screen, SearchScreen) and app.is_running


CRASH_CHILD = """
import sys
from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp

app = MemoriesApp(Engine.open(sys.argv[1]))


def handler_with_a_bug() -> None:
    passphrase = "SECRET-LOCAL-VALUE"  # a local Textual's traceback would print
    raise ValueError("note text SECRET-NOTE-TEXT quoted in an error message " + passphrase[:0])


app.call_later(handler_with_a_bug)
app.run(headless=True, size=(80, 24))
print("RETURN", app.return_code)
"""


def test_an_unexpected_error_prints_one_line_and_logs_no_content(tmp_path: Path) -> None:
    home = tmp_path / "home"
    Engine.open(home).create_vault("Personal", PASS)
    done = subprocess.run([sys.executable, "-c", CRASH_CHILD, str(home)], capture_output=True, text=True,
                          timeout=120, check=False)
    out = done.stdout + done.stderr
    assert "RETURN 1" in done.stdout, out
    for secret in ("SECRET-LOCAL-VALUE", "SECRET-NOTE-TEXT", "Traceback", "locals"):
        assert secret not in out, out
    line = "".join(done.stderr.splitlines())  # one sentence (the terminal's width wraps it)
    assert line.startswith("Memories stopped after an unexpected ValueError in <string>:"), line
    assert line.endswith("please report it."), line
    log = home / "logs" / "tui-errors.log"
    assert str(log) in line
    text = log.read_text(encoding="utf-8")
    assert "ValueError" in text and "<string>" in text and "handler_with_a_bug" in text
    assert "SECRET" not in text
    assert log.stat().st_mode & 0o777 == 0o600 and log.parent.stat().st_mode & 0o777 == 0o700


async def test_a_burst_after_the_passphrase_unlocks_and_reaches_the_search_field(engine: Engine) -> None:
    """passphrase⏎s京都⏎ in one burst: the unlock gets the passphrase alone, then `s` opens the
    search, 京都 goes into its field and enter searches."""
    notes_vault(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        burst(app, PASS, "enter", "s", "京都", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen) and panes(app)["bm25"].shown, timeout=60)
        assert app.screen.query_one("#query", Input).value == "京都"
        assert [hit.title for hit in panes(app)["bm25"].hits] == ["京都旅行"]


async def test_a_wrong_passphrase_drops_the_keys_typed_after_it(engine: Engine) -> None:
    notes_vault(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        screen = app.screen
        burst(app, "not the passphrase", "enter", "s", "京都", "enter")
        error = screen.query_one("#unlock-error", Static)
        await wait_for(pilot, lambda: "passphrase" in static_text(error).lower() and not screen.unlocking, timeout=60)
        field = screen.query_one("#passphrase", Input)
        assert field.value == "" and not field.disabled
        assert app.screen is screen and not engine.is_unlocked(engine.list_vaults()[0].vault_id)
        # the field works again: the right passphrase unlocks
        burst(app, PASS, "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen), timeout=60)


async def test_unlocking_runs_one_key_derivation_and_the_field_takes_no_input(engine: Engine, monkeypatch) -> None:
    """While the key is derived, enter and typing go nowhere near the field, and a second
    unlock never starts: the derivation is held on an event the test controls."""
    vault_id = notes_vault(engine)
    release = threading.Event()
    calls: list[str] = []
    real_unlock = engine.unlock

    def slow_unlock(ref: str, passphrase: str):
        calls.append(passphrase)
        assert release.wait(60)
        return real_unlock(ref, passphrase)

    monkeypatch.setattr(engine, "unlock", slow_unlock)
    app = MemoriesApp(engine)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        screen = app.screen
        burst(app, PASS, "enter")
        await wait_for(pilot, lambda: len(calls) == 1)
        field = screen.query_one("#passphrase", Input)
        assert field.disabled and screen.unlocking
        burst(app, "zz", "enter", "enter")
        await pilot.pause()
        assert field.value == PASS and calls == [PASS]
        release.set()
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen), timeout=60)
        assert calls == [PASS] and engine.is_unlocked(vault_id)


def test_quitting_never_waits_for_a_worker_that_does_not_return() -> None:
    """The thread workers' executor: shutdown waits its grace, then lets the process end."""
    from memories_tui.tui.threads import DaemonThreadExecutor

    executor = DaemonThreadExecutor(grace_seconds=0.0)
    stuck = threading.Event()
    future = executor.submit(stuck.wait)
    assert executor.running() == 1
    executor.shutdown(wait=True)  # returns although the task never will (until the test ends it)
    assert not future.done()
    stuck.set()
    assert future.result(timeout=30) is True


QUIT_CHILD = """
import json, sys, threading
from textual import events
from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.vaults import UnlockScreen
try:
    from memories_tui.tui import threads
    threads.GRACE_SECONDS = 0.0  # no grace: the test need not wait for it
except ImportError:  # (before the fix there was no such module: this child never ended)
    pass
engine = Engine.open(sys.argv[1])
never, started = threading.Event(), threading.Event()


def hang(ref, passphrase):  # a derivation that never returns
    started.set()
    never.wait()


engine.unlock = hang
app = MemoriesApp(engine)


def start() -> None:
    if isinstance(app.screen, UnlockScreen) and app.screen.is_mounted:
        app.screen.query_one("#passphrase").value = "anything"
        app.post_message(events.Key("enter", "\\r"))
        app.set_interval(0.05, lambda: app.exit() if started.is_set() else None)  # quit once it runs
    else:
        app.call_after_refresh(start)


app.call_later(start)
app.run(headless=True, size=(80, 24))
print(json.dumps({"exited": True, "derivation_started": started.is_set()}))
"""


def test_quit_while_a_derivation_hangs_ends_the_process(tmp_path: Path) -> None:
    home = tmp_path / "home"
    Engine.open(home).create_vault("Personal", PASS)
    done = subprocess.run([sys.executable, "-c", QUIT_CHILD, str(home)], capture_output=True, text=True,
                          timeout=120, check=False)  # the timeout only stops a hung test
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"exited": True, "derivation_started": True}


async def test_keys_still_queued_when_a_failed_unlock_releases_them_are_dropped_too(engine: Engine) -> None:
    """A fast derivation can fail before the app has read the rest of the burst: the release
    must wait its turn in the app's queue, or those keys land in the passphrase field."""
    notes_vault(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        field = app.screen.query_one("#passphrase", Input)
        app.hold_keys()
        burst(app, "s", "京都")  # queued, not yet read by the app
        app.release_keys(replay=False)  # the failure arrives before the app reads them
        await pilot.pause()
        await pilot.pause()
        assert field.value == "" and isinstance(app.screen, UnlockScreen)
        burst(app, "x")  # typed after the release: the field takes it
        await wait_for(pilot, lambda: field.value == "x")


CLOSING_SCREENS = {
    "records": lambda app, vault_id: RecordsScreen(vault_id),  # queries its table in on_mount
    "ask": lambda app, vault_id: AskScreen(vault_id),  # Textual's own Select queries its overlay
    "editor": lambda app, vault_id: RecordEditorScreen(vault_id),  # its kind Select reads blank
    "confirm": lambda app, vault_id: ConfirmScreen("Delete?", "Really?", yes="Delete"),
}


@pytest.mark.parametrize("turns", range(3))
@pytest.mark.parametrize("name", sorted(CLOSING_SCREENS))
async def test_a_screen_still_mounting_when_the_app_closes_is_no_crash(engine: Engine, name: str,
                                                                       turns: int) -> None:
    """Quit (here: the test ends) right after a screen opens, as when keys typed in a burst
    open one and the app closes under load: Textual closes its widgets before its mount
    handlers run. That is the app ending, not a bug to report."""
    vault_id = notes_vault(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        engine.unlock(vault_id, PASS)
        app.push_screen(CLOSING_SCREENS[name](app, vault_id))  # not awaited: still mounting at the close
        for _ in range(turns):
            await asyncio.sleep(0)
    assert not app.return_code
    assert not (engine.home / "logs" / "tui-errors.log").exists()


class BrokenScreen(Screen):
    def on_mount(self) -> None:
        self.query_one("#not-composed", Static)


async def test_a_screen_that_fails_to_mount_while_the_app_runs_still_stops_it(engine: Engine) -> None:
    notes_vault(engine)
    app = MemoriesApp(engine)
    with pytest.raises(StoppedError, match="unexpected NoMatches"):
        async with app.run_test(size=(140, 45)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
            await app.push_screen(BrokenScreen())
            await wait_for(pilot, lambda: not app.is_running)
    assert app.return_code == 1
