"""Joining a vault from another device in the TUI (screens/join.py): from the first-run form of
an empty home, and `j` on the vault picker; a wrong passphrase and a taken name are said in the
dialog and leave nothing behind; esc cancels a join whose server stopped answering. Another home
made the vault and its target (a real folder, a real WebDAV server holding reads back)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.create_vault import CreateVaultScreen
from memories_tui.tui.screens.join import JoinScreen
from memories_tui.tui.screens.records import RecordsScreen
from memories_tui.tui.screens.vaults import VaultPickerScreen
from tests.helpers.pilot import PASS, open_records, static_text, type_text, wait_for
from tests.integration.test_sync_slow_target import WAIT, _when_held, dav, slow  # noqa: F401 - the fixtures
from tests.tui.test_keys import unlock_to_records, vault_with_notes
from tests.tui.test_sync_now_dialog import QUIET


def _first_device(tmp_path: Path, target: str) -> str:
    """Home `a` with the notes vault ("Personal"), synced with `target`: the vault's id."""
    a = Engine.open(tmp_path / "a")
    vault_id = vault_with_notes(a)
    a.unlock(vault_id, PASS)
    a.sync_add(vault_id, target, PASS)
    a.sync_now(vault_id)
    a.lock()
    return vault_id


def _damaged_target(tmp_path: Path) -> tuple[Path, str]:
    """A folder target whose join record is sound and whose first bundle is damaged: (it, the vault's id)."""
    folder = tmp_path / "Sync"
    folder.mkdir()
    vault_id = _first_device(tmp_path, str(folder))
    bundle = next(path for path in (folder / "d").rglob("0000000001"))
    data = bytearray(bundle.read_bytes())
    data[-5] ^= 0xFF
    bundle.write_bytes(bytes(data))
    return folder, vault_id


def _empty_home(tmp_path: Path) -> Engine:
    home = tmp_path / "b"
    home.mkdir()
    (home / "config.toml").write_text(QUIET, encoding="utf-8")
    return Engine.open(home)


def _stage(app: MemoriesApp) -> str:
    return static_text(app.screen.query_one("#join-stage", Static))


async def _join_from_the_first_run_form(pilot, app: MemoriesApp) -> None:  # noqa: ANN001
    await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen))
    await pilot.click("#join")
    await wait_for(pilot, lambda: isinstance(app.screen, JoinScreen))


async def _fill(pilot, app: MemoriesApp, **fields: str) -> None:  # noqa: ANN001
    for name, value in fields.items():
        field = app.screen.query_one(f"#join-{name}", Input)
        field.value = ""
        await type_text(pilot, field, value)


async def test_an_empty_home_joins_from_the_first_run_form(tmp_path: Path, cheap_kdf) -> None:
    folder = tmp_path / "Sync"
    folder.mkdir()
    vault_id = _first_device(tmp_path, str(folder))
    engine = _empty_home(tmp_path)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 40)) as pilot:
        await _join_from_the_first_run_form(pilot, app)
        await pilot.click("#join")  # nothing typed
        await wait_for(pilot, lambda: "Type the sync target" in _stage(app))
        assert app.screen.focused is app.screen.query_one("#join-url", Input)
        await _fill(pilot, app, url=str(folder))
        await pilot.press("enter")  # a folder: on to the passphrase, past the S3 endpoint
        assert app.screen.focused is app.screen.query_one("#join-passphrase", Input)
        await _fill(pilot, app, passphrase="not the passphrase at all")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "[wrong_passphrase]" in _stage(app))
        assert engine.list_vaults() == [] and isinstance(app.screen, JoinScreen)
        field = app.screen.query_one("#join-passphrase", Input)  # greyed while it joined: back, and where to retype
        assert not field.disabled and app.screen.focused is field
        await _fill(pilot, app, passphrase=PASS)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and app.screen.records)
        assert {r.title for r in app.screen.records} == {"Oven", "Bikes"}
        assert app.vault is not None and app.vault.vault_id == vault_id and app.vault.name == "Personal"
    assert [e.url for e in engine.sync_status(vault_id)] == [str(folder)]
    engine.lock()


async def test_j_on_the_vault_picker_joins_under_another_name_when_the_name_is_taken(tmp_path: Path,
                                                                                    cheap_kdf) -> None:
    folder = tmp_path / "Sync"
    folder.mkdir()
    vault_id = _first_device(tmp_path, str(folder))
    engine = _empty_home(tmp_path)
    engine.create_vault("Personal", PASS)  # another vault, the same name
    engine.create_vault("Work", PASS)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, VaultPickerScreen) and app.screen.vaults)
        await pilot.press("j")
        await wait_for(pilot, lambda: isinstance(app.screen, JoinScreen))
        await _fill(pilot, app, url=str(folder), passphrase=PASS)
        await pilot.click("#join")
        await wait_for(pilot, lambda: "[vault_exists]" in _stage(app))
        assert "give this one another name below" in _stage(app) and "--as" not in _stage(app)
        assert app.screen.focused is app.screen.query_one("#join-name", Input)
        assert len(engine.list_vaults()) == 2
        await _fill(pilot, app, name="Personal (laptop)")
        await pilot.press("enter")  # in the last field: joins (a second click within the button's 0.2 s press
        # effect would be ignored by Textual on a loaded machine)
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and app.screen.records)
        assert app.vault is not None and (app.vault.vault_id, app.vault.name) == (vault_id, "Personal (laptop)")
    engine.lock()


async def test_esc_cancels_a_join_whose_server_stopped_answering(slow, tmp_path: Path, cheap_kdf) -> None:  # noqa: F811
    url, hold, waiting = slow
    _first_device(tmp_path, url)
    engine = _empty_home(tmp_path)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 40)) as pilot:
        await _join_from_the_first_run_form(pilot, app)
        await _fill(pilot, app, url=url, passphrase=PASS)
        hold("stall")
        await pilot.click("#join")
        _when_held(waiting)  # the join record is being read
        fields = list(app.screen.query(Input))  # greyed while it joins: a name typed now would change nothing
        assert fields and all(field.disabled for field in fields)
        await pilot.press("escape")
        await wait_for(pilot, lambda: "[cancelled]" in _stage(app), timeout=WAIT)
        assert engine.list_vaults() == [] and isinstance(app.screen, JoinScreen)
        assert not any(field.disabled for field in fields) and app.screen.focused is fields[0]
        hold("")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen))
    assert not list((tmp_path / "b").glob("vaults/*.mvault"))


async def test_a_join_stopped_after_the_vault_was_made_leaves_it_locked(tmp_path: Path, cheap_kdf) -> None:
    """The target's bundle is damaged: the vault file is made (the join record is sound), then the
    pull refuses the bundle. The dialog says so; the vault stays here, locked, as the picker lists it."""
    folder, vault_id = _damaged_target(tmp_path)
    engine = _empty_home(tmp_path)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 40)) as pilot:
        await _join_from_the_first_run_form(pilot, app)
        await _fill(pilot, app, url=str(folder), passphrase=PASS)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "[sync_target_tampered]" in _stage(app))
        assert [v.vault_id for v in engine.list_vaults()] == [vault_id]  # kept: a later sync goes on from here
        assert not engine.is_unlocked(vault_id) and app.vault is None
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen))


async def test_a_failed_join_from_create_vault_leaves_the_open_vault_unlocked(tmp_path: Path, cheap_kdf) -> None:
    """"Create vault" in the palette while a vault is open, then "Join from another device": the join
    that fails locks only the vault it made, not the one the app has open."""
    folder, joined_id = _damaged_target(tmp_path)
    engine = _empty_home(tmp_path)
    own = vault_with_notes(engine, "Mine")
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 40)) as pilot:
        await unlock_to_records(pilot, app)
        await app.run_action("create_vault")
        await _join_from_the_first_run_form(pilot, app)
        await _fill(pilot, app, url=str(folder), passphrase=PASS)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "[sync_target_tampered]" in _stage(app))
        assert engine.is_unlocked(own) and app.vault is not None and app.vault.vault_id == own
        assert not engine.is_unlocked(joined_id)
    engine.lock()


async def test_the_palette_joins_another_vault_while_one_is_open(tmp_path: Path, cheap_kdf) -> None:
    from textual.command import CommandList, CommandPalette

    folder = tmp_path / "Sync"
    folder.mkdir()
    joined_id = _first_device(tmp_path, str(folder))
    engine = _empty_home(tmp_path)
    work = engine.create_vault("Work", PASS)
    engine.unlock(work.vault_id, PASS)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 40)) as pilot:
        await open_records(pilot, app, work.vault_id)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"join a vault")
        commands = app.screen.query_one(CommandList)
        await wait_for(pilot, lambda: commands.option_count > 0 and commands.highlighted == 0 and
                       "Join a vault from another device" in str(commands.get_option_at_index(0).prompt))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JoinScreen) and bool(app.screen.query("#join-name")))
        await _fill(pilot, app, url=str(folder), passphrase=PASS)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and app.screen.vault_id == joined_id
                       and app.screen.records)
        assert {r.title for r in app.screen.records} == {"Oven", "Bikes"}
        assert engine.is_unlocked(work.vault_id)  # the vault that was open is left as it was
    engine.lock()
