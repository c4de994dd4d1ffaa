"""Changing the open vault's passphrase in the TUI ("Change passphrase" in the command palette),
as `memories vault passwd` does: mistakes said in the dialog and nothing changed (a wrong current
passphrase, two new ones that differ, the same one again, a short one not confirmed); a change
that works opens the vault with the new passphrase only; a vault that syncs puts the new wrap in
its target (another home joins with the new passphrase), and a target that cannot be reached is
said while the passphrase stays changed, and esc closes the dialog while a WebDAV server holds the
target's copy back (the outcome comes as a notice). Real vault files, real folders and WebDAV."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from memories_tui.engine import Engine
from memories_tui.errors import MemoriesError
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.confirm import ConfirmScreen
from memories_tui.tui.screens.passphrase import ChangePassphraseScreen
from memories_tui.tui.screens.records import RecordsScreen
from tests.helpers.pilot import PASS, open_records, static_text, type_text, wait_for
from tests.integration.test_sync_slow_target import WAIT, _when_held, dav, slow  # noqa: F401 - the fixtures
from tests.tui.test_keys import vault_with_notes
from tests.tui.test_sync_now_dialog import _home, _synced

NEW = "a new passphrase for the laptop and the desktop"


def _error(app: MemoriesApp) -> str:
    return static_text(app.screen.query_one("#passwd-error", Static))


def _notices(app: MemoriesApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def _dialog(pilot, app: MemoriesApp, vault_id: str) -> ChangePassphraseScreen:  # noqa: ANN001
    await open_records(pilot, app, vault_id)
    await app.run_action("change_passphrase")  # the palette's "Change passphrase"
    await wait_for(pilot, lambda: isinstance(app.screen, ChangePassphraseScreen) and bool(app.screen.query("#passwd-old")))
    return app.screen


async def _fill(pilot, app: MemoriesApp, old: str, new: str, again: str) -> None:  # noqa: ANN001
    for field, value in (("old", old), ("new", new), ("again", again)):
        widget = app.screen.query_one(f"#passwd-{field}", Input)
        widget.value = ""
        await type_text(pilot, widget, value)
    await pilot.press("enter")  # in the last field: change


def _opens_with(engine: Engine, vault_id: str, passphrase: str) -> bool:
    engine.lock()
    try:
        engine.unlock(vault_id, passphrase)
    except MemoriesError:
        return False
    engine.lock()
    return True


async def test_mistakes_are_said_and_change_nothing_then_the_new_passphrase_opens_it(tmp_path: Path,
                                                                                     cheap_kdf) -> None:
    engine = _home(tmp_path)
    vault_id = vault_with_notes(engine)
    engine.unlock(vault_id, PASS)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        screen = await _dialog(pilot, app, vault_id)
        await _fill(pilot, app, PASS, NEW, NEW + "x")
        await wait_for(pilot, lambda: "differ" in _error(app))
        assert screen.focused is screen.query_one("#passwd-again", Input)
        await _fill(pilot, app, PASS, PASS, PASS)
        await wait_for(pilot, lambda: "is the current one" in _error(app))
        await _fill(pilot, app, "not the passphrase", NEW, NEW)
        await wait_for(pilot, lambda: "[wrong_passphrase]" in _error(app))
        assert screen.focused is screen.query_one("#passwd-old", Input) and not screen.busy
        await _fill(pilot, app, PASS, "short", "short")  # asked first; "Choose another" changes nothing
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#yes")))
        await pilot.press("enter")  # the focused, safe answer
        await wait_for(pilot, lambda: app.screen is screen)
        assert screen.query_one("#passwd-new", Input).value == ""
        await pilot.pause()
        assert _opens_with_while_open(engine, vault_id, PASS)
        await _fill(pilot, app, PASS, NEW, NEW)
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        assert any("Passphrase changed for Personal." in n for n in _notices(app))
        assert not any("next sync" in n for n in _notices(app))  # this vault does not sync
    assert _opens_with(engine, vault_id, NEW) and not _opens_with(engine, vault_id, PASS)


def _opens_with_while_open(engine: Engine, vault_id: str, passphrase: str) -> bool:
    """The vault file opens with `passphrase` (checked in another engine on the same home)."""
    other = Engine.open(engine.home)
    try:
        other.unlock(vault_id, passphrase)
    except MemoriesError:
        return False
    finally:
        other.close()
    return True


async def test_a_syncing_vault_puts_the_new_wrap_in_its_target(tmp_path: Path, cheap_kdf) -> None:
    engine, vault_id, target = _synced(tmp_path)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        screen = await _dialog(pilot, app, vault_id)
        assert "next sync" in static_text(screen.query_one("#passwd-help", Static))
        await _fill(pilot, app, PASS, NEW, NEW)
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        assert any("The other devices take it at their next sync." in n for n in _notices(app))
    laptop = Engine.open(tmp_path / "laptop")
    with pytest.raises(MemoriesError) as refused:
        laptop.sync_join(target, PASS)
    assert refused.value.code == "wrong_passphrase"
    assert laptop.sync_join(target, NEW).vault_id == vault_id
    laptop.close()


async def test_a_target_out_of_reach_is_said_and_the_passphrase_stays_changed(tmp_path: Path, cheap_kdf) -> None:
    engine, vault_id, target = _synced(tmp_path)
    shutil.rmtree(target)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await _dialog(pilot, app, vault_id)
        await _fill(pilot, app, PASS, NEW, NEW)
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        assert any("[sync_join_record_stale]" in n for n in _notices(app)), _notices(app)
    assert _opens_with(engine, vault_id, NEW)


async def test_esc_closes_while_the_target_holds_the_new_wrap_back_and_the_outcome_comes_as_a_notice(
        slow, tmp_path: Path, cheap_kdf) -> None:  # noqa: F811
    url, hold, waiting = slow
    engine, vault_id, _target = _synced(tmp_path, url)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        dialog = await _dialog(pilot, app, vault_id)
        hold("stall-put")
        await _fill(pilot, app, PASS, NEW, NEW)
        _when_held(waiting)  # re-wrapped here; the target's copy waits on the server
        assert dialog.busy
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        hold("")
        await wait_for(pilot, lambda: any("Passphrase changed for Personal." in n for n in _notices(app)),
                       timeout=WAIT)
    laptop = Engine.open(tmp_path / "laptop")
    assert laptop.sync_join(url, NEW).vault_id == vault_id  # the target's copy was put after all
    laptop.close()
