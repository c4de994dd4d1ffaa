"""Ask's question field, sources list and number keys,
the search screen's tab order and empty query, one help line per key, no empty scores for a
source opened from an answer, the vault name on the model screen, paths written with `~`."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, OptionList, Select, Static

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.ask import AskScreen, QuoteDetailScreen
from memories_tui.tui.screens.help import HelpScreen, screen_keys
from memories_tui.tui.screens.model import ModelInstallScreen
from memories_tui.tui.screens.search import SearchScreen
from memories_tui.tui.screens.status import StatusScreen
from memories_tui.tui.text import tilde, tilde_paths
from memories_tui.tui.widgets.results import ResultsPane
from tests.helpers.pilot import PASS, static_text, wait_for
from tests.tui.test_keys import unlock_to_records


def two_notes(engine: Engine) -> str:
    info = engine.create_vault("Personal", PASS)
    engine.unlock(info.vault_id, PASS)
    engine.add_record(info.vault_id, kind="card", title="Sourdough", body="Bake sourdough at 250 °C in a covered pot.")
    engine.add_record(info.vault_id, kind="card", title="Starter", body="Feed the sourdough starter twice a day.")
    engine.lock()
    return info.vault_id


async def ask_screen(pilot, app: MemoriesApp) -> AskScreen:
    await unlock_to_records(pilot, app)
    await pilot.press("a")
    await wait_for(pilot, lambda: isinstance(app.screen, AskScreen))
    return app.screen


async def submit(pilot, screen: AskScreen, *keys: str) -> None:
    answered = screen.generation + 1
    await pilot.press(*keys, "enter")
    await wait_for(pilot, lambda: screen.generation == answered and screen.state not in ("idle", "working"),
                   timeout=60)


async def test_ask_a_new_question_replaces_the_old_and_sources_open_at_once(engine: Engine) -> None:
    two_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ask_screen(pilot, app)
        field = screen.query_one("#question", Input)
        await submit(pilot, screen, *"sourdough")
        assert screen.state == "extractive" and field.has_focus
        # typing the next question replaces the last one (it is selected), not appends to it
        await submit(pilot, screen, *"starter")
        assert field.value == "starter"
        assert screen.answer is not None and "starter" in screen.answer.answer

        # the sources list: enter opens the first source at once, no ↓ first
        sources = screen.query_one("#ask-citations", OptionList)
        assert sources.option_count >= 1
        screen.set_focus(sources)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, QuoteDetailScreen))
        first = app.screen.hit.citation
        assert first == sources.get_option_at_index(0).id
        # a source of an answer has no search scores: no row of dashes and a final 0.0000
        meta = static_text(app.screen.query_one("#detail-meta", Static))
        assert "bm25 –" not in meta and "0.0000" not in meta and "scores:" not in meta
        assert f"source [{first}] of the answer" in meta
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)

        # 1 opens [S1] once the question field has lost the focus; in the field a digit is text
        await pilot.pause()
        screen.set_focus(field)
        await pilot.press("tab")
        assert not field.has_focus
        await pilot.press("1")
        await wait_for(pilot, lambda: isinstance(app.screen, QuoteDetailScreen))
        assert app.screen.hit.citation == "S1"
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        await pilot.press("9")  # no such source: said, nothing opens
        assert app.screen is screen
        screen.set_focus(field)
        await pilot.press("end", "2")
        assert field.value == "starter2" and app.screen is screen

        # F1 says how to open a citation
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        guide = static_text(app.screen.query_one("#help-guide", Static))
        assert "press its number" in guide and "list of sources" in guide
        keys = static_text(app.screen.query_one("#help-keys", Static))
        assert "1…9" in keys


async def test_search_tab_goes_to_the_results_and_an_empty_query_clears_them(engine: Engine) -> None:
    two_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(140, 45)) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        screen = app.screen
        query = screen.query_one("#query", Input)
        panes = [screen.query_one(f"#pane-{mode}", ResultsPane) for mode in ("bm25", "vector", "hybrid")]
        await pilot.press(*"sourdough", "enter")
        await wait_for(pilot, lambda: all(p.shown for p in panes), timeout=60)
        assert panes[0].hits

        # tab: the first pane (as F1 says), the next panes, the match-mode selector, the query again
        order = []
        for _ in range(5):
            await pilot.press("tab")
            order.append(app.focused)
        assert order[:3] == [p.option_list for p in panes]
        assert isinstance(order[3], Select) and order[4] is query
        await pilot.press("shift+tab")
        assert isinstance(app.focused, Select)
        await pilot.press("tab", "tab", "enter")  # enter in the first pane opens its first result
        await wait_for(pilot, lambda: app.screen is not screen)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)

        # enter on an empty query: the old results go, and the panes say why
        query.value = ""
        screen.set_focus(query)
        await pilot.press("enter")
        await wait_for(pilot, lambda: not any(p.hits for p in panes))
        for pane in panes:
            assert pane.option_list.option_count == 0
            assert "query is empty" in static_text(pane.state)


async def test_help_lists_each_key_once_and_the_model_screen_names_the_vault(engine: Engine) -> None:
    two_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(140, 45)) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        keys = screen_keys(app.screen, app)
        models = [k for k in keys if k.description.startswith("Model")]
        assert [k.keys for k in models] == ["f2"], keys
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelInstallScreen))
        assert app.screen.sub_title == "Personal"


async def test_status_shows_the_home_with_a_tilde(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    engine = Engine.open(tmp_path / ".local" / "share" / "memories")
    two_notes(engine)
    assert tilde(engine.home) == "~/.local/share/memories"
    assert tilde(tmp_path.parent) == str(tmp_path.parent) and tilde(f"{tmp_path}x") == f"{tmp_path}x"
    app = MemoriesApp(engine)
    async with app.run_test(size=(140, 45)) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view, timeout=60)
        rows = {row.label: row.value for section in app.screen.view for row in section.rows}
        assert rows["home"] == "~/.local/share/memories"
        assert rows["config"] == "~/.local/share/memories/config.toml"
        # the engine's own message names the model folder by its whole path: shown from ~ too
        assert "~/.local/share/memories/models/" in rows["problem"] and str(tmp_path) not in rows["problem"]
    engine.lock()
    assert tilde_paths(f"not in {tmp_path}/a; nor {tmp_path}x nor {tmp_path}") == f"not in ~/a; nor {tmp_path}x nor ~"
