"""The vault picker shows `*.mvault` files that are not usable vaults: dimmed lines
with the engine's reason below the table, never selectable, never a traceback, files untouched."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from textual.widgets import DataTable, Static

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.create_vault import CreateVaultScreen
from memories_tui.tui.screens.vaults import UnlockScreen, VaultPickerScreen
from tests.helpers.pilot import PASS, static_text, wait_for

SIZE = (100, 30)


def damage(engine: Engine) -> dict[Path, bytes]:
    """Three bad files beside the good vaults: random bytes, empty, and a vault with an edited header."""
    folder = engine.home / "vaults"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "junk.mvault").write_bytes(bytes(range(256)) * 8)
    (folder / "empty.mvault").write_bytes(b"")
    edited = engine.create_vault("Edited", PASS)
    db = sqlite3.connect(edited.path)
    with db:  # rename it behind the header checksum's back
        db.execute("UPDATE header SET name = 'Renamed'")
    db.close()
    return {path: path.read_bytes() for path in folder.glob("*.mvault")}


async def test_picker_lists_unusable_files_with_reasons_and_never_selects_them(engine: Engine) -> None:
    good = engine.create_vault("Personal", PASS)
    before = damage(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        # one usable vault, but the picker stays so the user sees why the others are missing
        await wait_for(pilot, lambda: isinstance(app.screen, VaultPickerScreen) and app.screen.vaults)
        await pilot.pause()
        assert isinstance(app.screen, VaultPickerScreen)
        table = app.screen.query_one("#vaults", DataTable)
        assert table.row_count == 1 and [v.name for v in app.screen.vaults] == ["Personal"]
        problems = static_text(app.screen.query_one("#vault-problems", Static))
        assert "Files that are not usable vaults:" in problems
        assert "junk.mvault is not a Memories vault" in problems
        assert "empty.mvault is not a Memories vault" in problems
        edited = next(p for p in before if p.name not in ("junk.mvault", "empty.mvault", good.path.name))
        assert f"{edited.name}: the vault header is damaged or was edited" in problems
        assert "Traceback" not in problems
        # the problem lines are not rows: enter, even after moving down past the last row, opens Personal
        await pilot.press("down", "down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        assert app.screen.info.vault_id == good.vault_id
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, VaultPickerScreen))
        assert "junk.mvault" in static_text(app.screen.query_one("#vault-problems", Static))
    assert {path: path.read_bytes() for path in before} == before  # nothing was changed


async def test_only_unusable_files_show_the_picker_not_the_first_run_form(engine: Engine) -> None:
    folder = engine.home / "vaults"
    folder.mkdir(parents=True)
    (folder / "notes.mvault").write_text("not a vault", encoding="utf-8")
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, VaultPickerScreen)
                       and "notes.mvault" in static_text(app.screen.query_one("#vault-problems", Static)))
        await pilot.pause()
        assert isinstance(app.screen, VaultPickerScreen)  # not sent to "create your first vault"
        assert "No usable vault in" in static_text(app.screen.query_one("#picker-intro", Static))
        await pilot.press("enter")  # nothing to unlock: no screen opens, no error
        await pilot.pause()
        assert isinstance(app.screen, VaultPickerScreen)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen))
    assert (folder / "notes.mvault").read_text(encoding="utf-8") == "not a vault"


async def test_a_good_home_shows_no_problem_lines(engine: Engine) -> None:
    engine.create_vault("Alpha", PASS)
    engine.create_vault("Beta", PASS)
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, VaultPickerScreen) and app.screen.vaults)
        assert static_text(app.screen.query_one("#vault-problems", Static)) == ""


async def test_esc_from_the_first_unlock_screen_shows_a_working_picker(engine: Engine) -> None:
    """With one vault the app opens on its unlock screen and builds the picker below only when
    it is first shown (so the first frame is quick): esc must still show the full picker, and it must still work."""
    info = engine.create_vault("Personal", PASS)
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, VaultPickerScreen) and app.screen.vaults)
        picker = app.screen
        await wait_for(pilot, lambda: picker.query_one("#vaults", DataTable).row_count == 1)
        assert "Vaults in" in static_text(picker.query_one("#picker-intro", Static))
        assert picker.query_one("#vaults", DataTable).has_focus
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        assert app.screen.info.vault_id == info.vault_id
        await pilot.press("escape")  # a second showing refreshes, never builds twice
        await wait_for(pilot, lambda: app.screen is picker)
        await pilot.pause()
        assert len(picker.query("#vaults")) == 1 and picker.query_one("#vaults", DataTable).row_count == 1


async def test_an_older_copy_put_back_is_explained_and_opened_only_on_purpose(engine: Engine, tmp_path: Path) -> None:
    """`vault_rolled_back` at unlock: the engine's sentence, then a confirmation; no keeps it
    closed, yes opens that state (the CLI's --accept-rollback) and the home takes it as newest."""
    import shutil

    from memories_tui.tui.screens.confirm import ConfirmScreen
    from memories_tui.tui.screens.records import RecordsScreen

    info = engine.create_vault("Personal", PASS)
    engine.unlock(info.vault_id, PASS)
    engine.add_record(info.vault_id, kind="memory", title="first", body="kept in the old copy")
    engine.lock()
    old = tmp_path / "old.mvault"
    shutil.copyfile(info.path, old)
    engine.unlock(info.vault_id, PASS)
    engine.add_record(info.vault_id, kind="memory", title="second", body="only in the newer state")
    engine.lock()
    for extra in ("-wal", "-shm"):
        Path(str(info.path) + extra).unlink(missing_ok=True)
    shutil.copyfile(old, info.path)

    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        for answer, opened in (("escape", False), ("yes", True)):
            await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
            unlock = app.screen
            unlock.query_one("#passphrase").value = PASS
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), timeout=30)
            assert "older state" in static_text(unlock.query_one("#unlock-error", Static))
            assert "this home then takes this state as the newest" in app.screen.text
            if answer == "yes":
                await pilot.click("#yes")
            else:
                await pilot.press("escape")
            if opened:
                await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and app.screen.records, timeout=30)
                assert [r.title for r in app.screen.records] == ["first"]
            else:
                await wait_for(pilot, lambda unlock=unlock: app.screen is unlock and unlock.query_one("#passphrase").value == "")
                assert not engine.is_unlocked(info.vault_id)
    engine.lock()
    engine.unlock(info.vault_id, PASS)  # the anchor moved: the old state is now this home's newest
    engine.lock()
