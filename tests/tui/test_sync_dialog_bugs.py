"""A bug in the engine under one of the TUI's sync dialogs (sync now, set up sync, join) is
said in that dialog with the crash log's path, as the app's other unexpected errors are, and its
message (which could quote note text) is never shown: the dialog does not stay on
"Checking…"/"Reading…". The bug is an engine method made to raise what no code of ours expects;
the dialogs, the engine's other steps and the targets are real."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.join import JoinScreen
from memories_tui.tui.screens.sync_target import SyncTargetScreen
from tests.helpers.pilot import PASS, static_text, type_text, wait_for
from tests.tui.test_join_dialog import _empty_home, _fill, _first_device, _join_from_the_first_run_form, _stage
from tests.tui.test_keys import unlock_to_records, vault_with_notes
from tests.tui.test_sync_now_dialog import _dialog_text, _home, _open_dialog, _synced

SECRET = "the text of a private note"


def _bug(*args: object, **kwargs: object) -> None:
    raise RuntimeError(SECRET)


def _said_as_a_bug(text: str, home: Path) -> None:
    assert "This is a bug" in text and "RuntimeError" in text and SECRET not in text, text
    log = (home / "logs" / "tui-errors.log").read_text(encoding="utf-8")
    assert "RuntimeError" in log and SECRET not in log


async def test_a_bug_during_sync_now_is_said_in_the_dialog(tmp_path: Path, cheap_kdf,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    engine, _vault_id, _target = _synced(tmp_path)
    engine.lock()
    monkeypatch.setattr(engine, "sync_now", _bug)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open_dialog(pilot, app)
        await wait_for(pilot, lambda: not screen.running)
        _said_as_a_bug(_dialog_text(app), engine.home)
    engine.lock()


async def test_a_bug_while_adding_a_target_is_said_in_the_dialog(tmp_path: Path, cheap_kdf,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    engine = _home(tmp_path)
    vault_with_notes(engine)
    (tmp_path / "Sync").mkdir()
    monkeypatch.setattr(engine, "sync_add", _bug)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await unlock_to_records(pilot, app)
        await app.run_action("set_up_sync")  # the palette's "Set up sync"
        await wait_for(pilot, lambda: isinstance(app.screen, SyncTargetScreen) and bool(app.screen.query("#target-url")))
        await type_text(pilot, app.screen.query_one("#target-url", Input), str(tmp_path / "Sync"))
        await pilot.press("enter")
        error = app.screen.query_one("#target-error", Static)
        await wait_for(pilot, lambda: "This is a bug" in static_text(error))
        _said_as_a_bug(static_text(error), engine.home)
        assert isinstance(app.screen, SyncTargetScreen) and not app.screen.busy  # can be corrected and tried again
    engine.lock()


async def test_a_bug_after_the_join_made_the_vault_is_said_and_leaves_it_locked(
        tmp_path: Path, cheap_kdf, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "Sync"
    folder.mkdir()
    vault_id = _first_device(tmp_path, str(folder))
    engine = _empty_home(tmp_path)
    monkeypatch.setattr(engine, "resolve_vault", _bug)  # the step after the vault is made and filled
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 40)) as pilot:
        await _join_from_the_first_run_form(pilot, app)
        await _fill(pilot, app, url=str(folder), passphrase=PASS)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "This is a bug" in _stage(app))
        _said_as_a_bug(_stage(app), engine.home)
        assert isinstance(app.screen, JoinScreen) and not app.screen.running
    assert [v.vault_id for v in engine.list_vaults()] == [vault_id] and not engine.is_unlocked(vault_id)
