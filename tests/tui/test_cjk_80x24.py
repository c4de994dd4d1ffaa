"""The Chinese interface at 80×24, in both scripts: the narrow search tabs, the command palette
found by English and Chinese words, notifications over the records screen (double-width
characters kept whole where a toast covers other widgets), the model screen after a failed
download (the network error in the reader's language, everything reachable by scrolling).
Each with a zh-Hant and a zh-Hans snapshot (tests/helpers/snapshots.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Input, Static, Tab

from memories_tui.engine import Engine
from memories_tui.i18n import set_language
from memories_tui.models.manifest import PINNED
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.model import ModelInstallScreen
from memories_tui.tui.screens.search import SearchScreen
from memories_tui.tui.text import human_eta
from memories_tui.tui.widgets.results import ResultsPane
from tests.helpers.loopback import unused_port
from tests.helpers.pilot import PASS, open_records, static_text, wait_for
from tests.helpers.snapshots import check
from tests.tui.test_snapshots import pinned_clocks  # noqa: F401 - a fixture: dates, ids and timings fixed

SIZE = (80, 24)


@pytest.fixture(params=["zh-Hant", "zh-Hans"])
def script(request) -> Iterator[str]:
    set_language(request.param)
    yield request.param
    set_language("en")


def screen_text(app) -> str:
    """The screen as the compositor draws it, line by line (what a terminal shows)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def chinese(script: str, hant: str, hans: str) -> str:
    return hant if script == "zh-Hant" else hans


@pytest.fixture
def sample_vault(pinned_clocks, engine: Engine) -> str:  # noqa: F811 - the fixture imported above
    info = engine.create_vault("Personal", PASS)
    engine.unlock(info.vault_id, PASS)
    engine.import_samples(info.vault_id)
    return info.vault_id


def masks(engine: Engine, vault_id: str, home: Path) -> dict[str, str]:
    found = {vault_id: "v" * len(vault_id)}
    for n, record in enumerate(engine.list_records(vault_id)):
        found[record.id] = str(n).rjust(len(record.id), "r")
    return found


async def test_narrow_search_tabs_are_translated(engine: Engine, sample_vault: str, script: str) -> None:
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_records(pilot, app, sample_vault)
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        search.query_one("#query", Input).value = "coffee"
        await pilot.press("enter")
        panes = list(search.query(ResultsPane))
        await wait_for(pilot, lambda: all(p.shown for p in panes), timeout=30)
        labels = [tab.label.plain for tab in search.query(Tab)]
        vector, hybrid = chinese(script, "向量", "向量"), chinese(script, "混合", "混合")
        assert labels[1].startswith(vector) and labels[2].startswith(hybrid), labels
        assert not any("Vector" in label or "Hybrid" in label for label in labels), labels
        assert all(label in screen_text(app) for label in labels)
        problem = await check(pilot, f"search-tabs-{script}", masks(engine, sample_vault, engine.home))
    assert problem is None, problem


@pytest.mark.parametrize("query", ["language", "語言", "语言"])
async def test_the_palette_finds_the_language_switch_by_english_and_chinese_words(engine: Engine, script: str,
                                                                                  query: str) -> None:
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        app.screen.query_one(Input).value = query
        # the palette shows its hits as they are found: wait for the last of the four
        await wait_for(pilot, lambda: chinese(script, "語言：English", "语言：English") in screen_text(app)
                       and chinese(script, "依系統語言顯示介面", "按系统语言显示界面") in screen_text(app))
        shown = screen_text(app)
        assert chinese(script, "以英文顯示介面", "以英文显示界面") in shown
        assert chinese(script, "依系統語言顯示介面", "按系统语言显示界面") in shown
        assert "以English" not in shown and "以依" not in shown
        if query in ("language", "語言"):
            problem = await check(pilot, f"palette-{'language' if query == 'language' else 'yuyan'}-{script}")
            assert problem is None, problem


async def test_the_palette_says_no_match_in_the_reader_s_language(engine: Engine, script: str) -> None:
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        app.screen.query_one(Input).value = "zzqqxx"
        await wait_for(pilot, lambda: chinese(script, "找不到相符的指令", "找不到匹配的命令") in screen_text(app))
        assert "No matches found" not in screen_text(app)


async def test_a_chinese_notification_over_the_reader_keeps_its_first_characters(engine: Engine, sample_vault: str,
                                                                                script: str) -> None:
    """A toast is drawn over the reader, whose widgets cut each screen line at their edges; a
    double-width character on such a cut used to be drawn as two blanks."""
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await open_records(pilot, app, sample_vault)
        await wait_for(pilot, lambda: bool(app.screen.query("#reader-markdown MarkdownParagraph")))
        sentence = chinese(script, "介面語言：繁體中文（已存入設定檔）。", "已导入 5 篇示例笔记。")
        app.notify(sentence, markup=False, timeout=60)
        await wait_for(pilot, lambda: sentence[:6] in screen_text(app))
        # a terminal gets partial updates: each chop is written at its own start and ends where
        # the next begins, also where a cut through a wide character was joined
        compositor = app.screen._compositor
        compositor._dirty_regions.add(app.screen.region)
        update = compositor.render_partial_update()
        assert update is not None
        for line, ends in zip(update.chops, update.chop_ends, strict=True):
            assert list(ends) == [*list(line)[1:], SIZE[0]]
        problem = await check(pilot, f"notification-{script}", masks(engine, sample_vault, engine.home))
    assert problem is None, problem


async def test_the_model_screen_after_a_failed_download_scrolls_to_everything(tmp_path: Path, script: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    port = unused_port()  # a loopback mirror that is not there: the connection is refused
    (home / "config.toml").write_text(
        f'[rag]\nmodel_download_base_url = "http://127.0.0.1:{port}/mirror"\n\n[rag.http]\nretries = 0\n',
        encoding="utf-8")
    engine = Engine.open(home)
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await app.run_action("open_model")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelInstallScreen))
        screen = app.screen
        await pilot.click("#start")
        message = screen.query_one("#model-message", Static)
        await wait_for(pilot, lambda: "127.0.0.1" in static_text(message), timeout=30)
        text = static_text(message)
        assert chinese(script, "無法連線", "无法连接") in text and "could not connect" not in text
        hint = chinese(script, "把那個資料夾輸入按鈕旁的欄位", "把那个文件夹输入按钮旁的字段")
        await wait_for(pilot, lambda: hint in screen_text(app))  # the whole message is seen at once
        problem = await check(pilot, f"model-failed-download-{script}")
        # every file row is reachable too: scroll with the keyboard to the end
        scroller = screen.query_one("#model", VerticalScroll)
        scroller.focus()
        await pilot.press("end")
        await wait_for(pilot, lambda: scroller.scroll_y >= scroller.max_scroll_y > 0)
        await pilot.pause(0.1)
        shown = screen_text(app)
        assert screen.query_one("#model-files", DataTable).row_count == len(PINNED.files)
        assert PINNED.files[-1].path[:28] in shown
    engine.lock()
    assert problem is None, problem


def test_durations_are_in_the_reader_s_language(script: str) -> None:
    assert human_eta(62) == chinese(script, "1 分 02 秒", "1 分 02 秒")
    assert human_eta(3720) == chinese(script, "1 小時 02 分", "1 小时 02 分")
    assert human_eta(9) == "9 秒"
    set_language("en")
    assert human_eta(62) == "1m02s"
