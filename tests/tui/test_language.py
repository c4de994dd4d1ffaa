"""The interface language in the TUI: the command palette's switch (kept in config.toml, every
screen drawn again at once, the vault still unlocked), footers and help in the reader's
language, and `memories-tui --lang` / the config / the locale at start."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from textual.command import CommandPalette
from textual.widgets import Input

from memories_tui.config import load_config
from memories_tui.engine import Engine
from memories_tui.i18n import current_language, set_language
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.create_vault import CreateVaultScreen
from memories_tui.tui.screens.help import HelpScreen
from memories_tui.tui.screens.records import RecordsScreen
from memories_tui.tui.screens.vaults import UnlockScreen
from tests.helpers.paths import REPO_ROOT
from tests.helpers.pilot import PASS, footer_keys, static_text, wait_for

SIZE = (80, 24)


@pytest.fixture(autouse=True)
def english_after() -> Iterator[None]:
    set_language("en")
    yield
    set_language("en")


async def choose_in_palette(pilot, text: str) -> None:
    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, CommandPalette))
    pilot.app.screen.query_one(Input).value = text
    await pilot.pause(0.3)
    await pilot.press("enter")


async def test_the_palette_switch_redraws_every_screen_keeps_the_vault_open_and_persists(engine: Engine) -> None:
    info = engine.create_vault("Personal", PASS)
    engine.config.path.parent.mkdir(parents=True, exist_ok=True)
    engine.config.path.write_text("# mine\n[tui]\nidle_lock_minutes = 30\n", encoding="utf-8")
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        app.screen.query_one("#passphrase", Input).value = PASS
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        assert "Search" in footer_keys(app.screen)

        await choose_in_palette(pilot, "繁體中文")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and "搜尋" in footer_keys(app.screen))
        assert current_language() == "zh-Hant"
        assert app.vault is not None and engine.is_unlocked(info.vault_id)  # nothing was locked
        assert "Search" not in footer_keys(app.screen) and "說明" in footer_keys(app.screen)
        saved = engine.config.path.read_text(encoding="utf-8")
        assert saved.startswith("# mine\n[tui]\nidle_lock_minutes = 30\n")  # the rest of the file kept
        assert load_config(engine.config.path, engine.home).ui.language == "zh-Hant"
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert static_text(app.screen.query_one("#help-title")) == "按鍵 · 紀錄"
        help_text = "\n".join(static_text(w) for w in app.screen.query("Static"))
        assert "搜尋" in help_text and "Search" not in help_text
        await pilot.press("escape")

        await choose_in_palette(pilot, "简体中文")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and "搜索" in footer_keys(app.screen))
        await choose_in_palette(pilot, "English")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and "Search" in footer_keys(app.screen))
        assert load_config(engine.config.path, engine.home).ui.language == "en"
        assert engine.is_unlocked(info.vault_id)


async def test_the_palette_itself_is_in_the_reader_s_language(engine: Engine) -> None:
    set_language("zh-Hans")
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen))
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        assert app.screen.query_one(Input).placeholder == "搜索命令…"
        titles = [str(c.title) for c in app.get_system_commands(app.screen)]
        assert "主题" in titles and "Theme" not in titles


async def test_the_keys_panel_is_in_the_reader_s_language(engine: Engine) -> None:
    """palette → Keys: our descriptions and the lists' keys in Chinese (the panel used to print
    the English each binding is declared with)."""
    from textual.widgets import HelpPanel
    from textual.widgets._key_panel import BindingsTable

    info = engine.create_vault("Personal", PASS)
    engine.unlock(info.vault_id, PASS)
    set_language("zh-Hant")
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        app.vault_unlocked(engine.resolve_vault(info.vault_id))
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await choose_in_palette(pilot, "按鍵")
        await wait_for(pilot, lambda: bool(app.screen.query(HelpPanel)) and bool(app.screen.query(BindingsTable)))
        await pilot.pause(0.2)
        table = app.screen.query_one(BindingsTable).render_bindings_table()
        words = {cell.plain for column in table.columns for cell in column.cells if hasattr(cell, "plain")}
        assert {"搜尋", "提問", "往上移"} <= {word.split(" ")[0] for word in words}, words
        assert not words & {"Search", "Ask", "Cursor up"}, words


async def test_auto_goes_back_to_the_locale_and_a_locked_home_shows_its_first_screen(engine: Engine,
                                                                                     monkeypatch) -> None:
    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen))
        await app.run_action("switch_language('auto')")
        await wait_for(pilot, lambda: current_language() == "zh-Hans")
        # the empty home's create form again, drawn in the new language
        await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen) and "返回" in footer_keys(app.screen))
    assert load_config(engine.config.path, engine.home).ui.language == "auto"


async def test_a_config_that_cannot_be_written_keeps_the_language_and_says_why(engine: Engine) -> None:
    engine.config.path.parent.mkdir(parents=True, exist_ok=True)
    engine.config.path.write_text("[rag\nbroken", encoding="utf-8")  # not TOML: never rewritten
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.run_action("switch_language('zh-Hant')")
        await pilot.pause()
        assert current_language() == "en"
        assert any("not valid TOML" in str(n.message) for n in app._notifications)
    assert engine.config.path.read_text(encoding="utf-8") == "[rag\nbroken"


async def test_a_lock_by_the_resident_engine_is_explained_in_the_reader_s_language(engine: Engine) -> None:
    from memories_tui.tui.daemon_link import LockedElsewhere

    info = engine.create_vault("Personal", PASS)
    set_language("zh-Hans")
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        app.screen.query_one("#passphrase", Input).value = PASS
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        app.post_message(LockedElsewhere([info.vault_id], "idle"))
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen) and app.vault is None)
        shown = [(n.title, n.message) for n in app._notifications]
        assert ("已锁定", "已锁定：闲置时间已超过守护进程的设置。") in shown, shown


def run_tui_command(tmp_path, *args: str, locale: str = "en_US.UTF-8") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LC_MESSAGES", "LANGUAGE")}
    env.update(LANG=locale, MEMORIES_HOME=str(tmp_path / "home"))
    return subprocess.run([sys.executable, "-m", "memories_tui.tui.app", *args], capture_output=True, text=True,
                          env=env, cwd=REPO_ROOT, timeout=120)


@pytest.mark.parametrize(("locale", "expected"), [("zh_TW.UTF-8", "終端機介面"), ("zh_CN.UTF-8", "终端界面"),
                                                  ("en_US.UTF-8", "terminal UI")])
def test_memories_tui_help_follows_the_locale(tmp_path, locale, expected) -> None:
    shown = run_tui_command(tmp_path, "--help", locale=locale)
    assert shown.returncode == 0, shown.stderr
    assert expected in shown.stdout


def test_memories_tui_lang_and_the_config_choose_the_language_of_its_help_and_errors(tmp_path) -> None:
    shown = run_tui_command(tmp_path, "--lang", "zh-Hant", "--help")
    assert "終端機介面" in shown.stdout and "介面語言" in shown.stdout
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text('[ui]\nlanguage = "zh-Hans"\n', encoding="utf-8")
    shown = run_tui_command(tmp_path, "--bogus")
    assert shown.returncode == 2 and "无法识别的参数" in shown.stderr, shown.stderr
    assert "Traceback" not in shown.stderr
