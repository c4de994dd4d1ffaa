"""Setting up sync in the TUI: `s` on the status screen of a vault with no target asks for one,
adds it as `memories sync add` does and syncs at once; a target that cannot work is said in the
dialog, which stays open to correct it; the passphrase is asked only after it changed since the
unlock. Real folders; another home joins with what the TUI put in the target."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.status import StatusScreen
from memories_tui.tui.screens.sync_now import SyncNowScreen
from memories_tui.tui.screens.sync_target import SyncTargetScreen
from tests.helpers.pilot import PASS, static_text, type_text, wait_for
from tests.tui.test_keys import unlock_to_records, vault_with_notes
from tests.tui.test_sync_now_dialog import _dialog_text, _home


def _target_dialog_open(app: MemoriesApp) -> bool:
    return isinstance(app.screen, SyncTargetScreen) and bool(app.screen.query("#target-error"))


def _error(app: MemoriesApp) -> str:
    return static_text(app.screen.query_one("#target-error", Static))


async def _type_target(pilot, app: MemoriesApp, target: str) -> None:  # noqa: ANN001
    field = app.screen.query_one("#target-url", Input)
    field.value = ""
    await type_text(pilot, field, target)
    await pilot.press("enter")


async def test_s_without_a_target_asks_for_one_then_syncs_and_another_home_joins(tmp_path: Path, cheap_kdf) -> None:
    engine = _home(tmp_path)
    vault_id = vault_with_notes(engine)
    folder = tmp_path / "Sync"
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
        await pilot.press("s")
        await wait_for(pilot, lambda: _target_dialog_open(app))
        await pilot.press("enter")  # nothing typed: said, nothing done
        await wait_for(pilot, lambda: "Type where to sync" in _error(app))
        await _type_target(pilot, app, str(folder))  # not made yet: the folder target's own error
        await wait_for(pilot, lambda: "[sync_target_missing]" in _error(app))
        assert isinstance(app.screen, SyncTargetScreen) and not engine.sync_status(vault_id)
        folder.mkdir()
        await _type_target(pilot, app, str(folder))
        await wait_for(pilot, lambda: isinstance(app.screen, SyncNowScreen) and not app.screen.running)
        assert "Synced." in _dialog_text(app) and "2 change(s) sent" in _dialog_text(app), _dialog_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
    assert [e.url for e in engine.sync_status(vault_id)] == [str(folder)]
    engine.lock()
    other = Engine.open(tmp_path / "other")
    other.sync_join(str(folder), PASS)
    assert {r.title for r in other.list_records(vault_id)} == {"Oven", "Bikes"}
    other.lock()


async def test_set_up_sync_says_why_a_target_cannot_work(tmp_path: Path, cheap_kdf, monkeypatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance-role lookup (tests reach only loopback)
    engine = _home(tmp_path)
    vault_id = vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await unlock_to_records(pilot, app)
        await app.run_action("set_up_sync")
        await wait_for(pilot, lambda: _target_dialog_open(app))
        await _type_target(pilot, app, "ftp://example.org/notes")
        await wait_for(pilot, lambda: "[sync_bad_target]" in _error(app))
        await _type_target(pilot, app, "s3://bucket/notes")  # enter goes on to the endpoint field
        assert app.screen.focused is app.screen.query_one("#target-endpoint", Input)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "No S3 credentials" in _error(app))
        assert "AWS_ACCESS_KEY_ID" in _error(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SyncTargetScreen | SyncNowScreen))
    assert engine.sync_status(vault_id) == []
    engine.lock()


async def test_the_passphrase_is_asked_only_once_it_changed_since_the_unlock(tmp_path: Path, cheap_kdf) -> None:
    new = "a new and longer passphrase"
    engine = _home(tmp_path)
    vault_id = vault_with_notes(engine)
    folder = tmp_path / "Sync"
    folder.mkdir()
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await unlock_to_records(pilot, app)
        engine.change_passphrase(vault_id, PASS, new)  # as `memories vault passwd` in another terminal
        await app.run_action("set_up_sync")
        await wait_for(pilot, lambda: _target_dialog_open(app))
        assert not app.screen.query_one("#target-passphrase", Input).display
        await _type_target(pilot, app, str(folder))
        await wait_for(pilot, lambda: "[sync_passphrase_needed]" in _error(app))
        field = app.screen.query_one("#target-passphrase", Input)
        assert field.display and app.screen.focused is field and field.password
        await type_text(pilot, field, new)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SyncNowScreen) and not app.screen.running)
        assert "Synced." in _dialog_text(app)
    engine.lock()
    other = Engine.open(tmp_path / "other")
    other.sync_join(str(folder), new)  # the target's join record wraps the key under the new passphrase
    assert {r.title for r in other.list_records(vault_id)} == {"Oven", "Bikes"}
    other.lock()
