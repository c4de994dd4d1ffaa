"""`[tui.keys]`: a binding id rebound in the config takes its new key at start (Textual's
App.set_keymap); bad types are a ConfigError; an unknown id is a notice, the app still runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import Static

from memories_tui.config import parse_config
from memories_tui.engine import Engine
from memories_tui.errors import ConfigError
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.help import HelpScreen
from memories_tui.tui.screens.records import RecordsScreen
from memories_tui.tui.screens.search import SearchScreen
from tests.helpers.pilot import static_text, wait_for
from tests.tui.test_keys import unlock_to_records, vault_with_notes


def engine_with_keys(tmp_path: Path, keys: str) -> Engine:
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[tui.keys]\n" + keys, encoding="utf-8")
    return Engine.open(home)


async def test_a_rebound_key_opens_search_and_the_old_key_no_longer_does(tmp_path: Path) -> None:
    engine = engine_with_keys(tmp_path, '"search" = "ctrl+s,f6"\n')
    try:
        vault_with_notes(engine)
        app = MemoriesApp(engine)
        async with app.run_test(size=(80, 24)) as pilot:
            await unlock_to_records(pilot, app)
            await pilot.press("s")
            await pilot.pause(0.2)
            assert isinstance(app.screen, RecordsScreen)
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
            await pilot.press("f6")
            await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
    finally:
        engine.lock()


async def test_an_unknown_id_is_a_notice_and_the_app_still_works(tmp_path: Path) -> None:
    engine = engine_with_keys(tmp_path, '"records.nonsense" = "f7"\n"search" = "f6"\n')
    try:
        vault_with_notes(engine)
        app = MemoriesApp(engine)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: any("records.nonsense" in str(n.message) for n in app._notifications))
            notice = next(str(n.message) for n in app._notifications if "records.nonsense" in str(n.message))
            assert "records.reload" in notice  # the known ids are listed
            await unlock_to_records(pilot, app)
            await pilot.press("f6")
            await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
    finally:
        engine.lock()


@pytest.mark.parametrize("tui", [{"keys": "ctrl+s"}, {"keys": {"search": 5}}, {"keys": {"search": ""}},
                                 {"keys": {"search": ["ctrl+s"]}}])
def test_bad_keymap_types_are_a_config_error(tmp_path: Path, tui: dict) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({"tui": tui}, tmp_path / "config.toml", tmp_path)
    assert "tui.keys" in err.value.message


def test_a_keymap_is_parsed(tmp_path: Path) -> None:
    config = parse_config({"tui": {"keys": {"search": "ctrl+s,f6"}}}, tmp_path / "config.toml", tmp_path)
    assert config.tui.keys == {"search": "ctrl+s,f6"}


async def test_a_rebound_help_key_opens_the_help_and_closes_it_again(tmp_path: Path) -> None:
    engine = engine_with_keys(tmp_path, '"help" = "f5"\n')
    try:
        vault_with_notes(engine)
        app = MemoriesApp(engine)
        async with app.run_test(size=(80, 24)) as pilot:
            await unlock_to_records(pilot, app)
            await pilot.press("f1")
            await pilot.pause(0.2)
            assert isinstance(app.screen, RecordsScreen)
            await pilot.press("f5")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
            await pilot.press("f5")
            await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
    finally:
        engine.lock()


async def test_the_help_lists_each_binding_id_with_the_users_keys(tmp_path: Path) -> None:
    """Remapped in the config, the help's id list shows the user's key beside the id, with the
    explanation of [tui.keys] and where the config file is."""
    engine = engine_with_keys(tmp_path, '"search" = "ctrl+s"\n"records.reload" = "f6,f7"\n')
    try:
        vault_with_notes(engine)
        app = MemoriesApp(engine)
        async with app.run_test(size=(80, 24)) as pilot:
            await unlock_to_records(pilot, app)
            await pilot.press("f1")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
            text = static_text(app.screen.query_one("#help-ids", Static))
            assert "[tui.keys]" in text and str(engine.config.path.name) in text
            rows = dict(line.split(None, 1) for line in text.splitlines()[-30:] if re.fullmatch(r"\S+ +\S+", line))
            assert rows["search"] == "ctrl+s" and rows["records.reload"] == "f6,f7"
            assert rows["records.add"] == "n" and rows["quit"] == "ctrl+q" and rows["help"] == "f1"
            assert rows["records.older"] == "left_square_bracket"  # as a [tui.keys] line writes it
    finally:
        engine.lock()
