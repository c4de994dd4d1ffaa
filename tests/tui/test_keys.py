"""Discoverable keys and the 80×24 layout of the records screen."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, HelpPanel, Input, Static

from memories_tui import __version__
from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.app import main as tui_main
from memories_tui.tui.screens.help import HelpScreen
from memories_tui.tui.screens.ingest import IngestScreen
from memories_tui.tui.screens.records import RecordsScreen
from memories_tui.tui.screens.search import SearchScreen
from memories_tui.tui.screens.vaults import UnlockScreen, VaultPickerScreen
from memories_tui.tui.widgets.reader import RecordReader
from memories_tui.tui.widgets.results import ResultsPane
from tests.helpers.pilot import PASS, footer_keys, static_text, type_text, wait_for


def vault_with_notes(engine: Engine, name: str = "Personal") -> str:
    info = engine.create_vault(name, PASS)
    engine.unlock(info.vault_id, PASS)
    engine.add_record(info.vault_id, kind="memory", title="Oven", body="# Oven\n\nBake bread at 250 °C.\nThe crust\n"
                      "turns golden.")
    engine.add_record(info.vault_id, kind="card", title="Bikes", body="Fix a flat tyre with a patch.")
    engine.lock()
    return info.vault_id


async def unlock_to_records(pilot, app: MemoriesApp) -> RecordsScreen:
    await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
    await type_text(pilot, app.screen.query_one("#passphrase", Input), PASS)
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and app.screen.records)
    return app.screen


def help_text(app: MemoriesApp) -> str:
    return static_text(app.screen.query_one("#help-keys", Static))


async def test_f1_and_question_mark_open_help_with_every_key_of_the_screen(engine: Engine) -> None:
    vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        records = await unlock_to_records(pilot, app)
        keys = footer_keys(records)
        assert {"Quit", "Help", "Lock", "Search"} <= set(keys), keys

        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        listed = help_text(app)
        for description in ("Search", "Ingest", "Model", "Status", "Older revision", "Newer revision",
                            "Raw / Markdown", "Reload", "Lock", "Quit", "Help", "command palette"):
            assert description in listed, description
        assert "^l" in listed and "^q" in listed and "f1 / ?" in listed
        # the version people quote in a bug report, also when the foot says there is more below
        await wait_for(pilot, lambda: "more line" in static_text(app.screen.query_one("#help-foot", Static)))
        assert static_text(app.screen.query_one("#help-foot", Static)).endswith(f"Memories {__version__}")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is records)

        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("question_mark")  # `?` closes it again
        await wait_for(pilot, lambda: app.screen is records)

        # in the search screen `?` is text in the query field, F1 is help; the guide says how to open a result
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        await pilot.press("w", "h", "y", "question_mark")
        assert search.query_one("#query", Input).value == "why?"
        assert app.screen is search
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        guide = static_text(app.screen.query_one("#help-guide", Static))
        assert "tab into a pane" in guide and "enter shows that chunk" in guide
        assert "Query" in help_text(app) and "Back" in help_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is search)
        search.query_one("#pane-bm25", ResultsPane).option_list.focus()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))


async def test_lock_is_offered_only_while_a_vault_is_unlocked(engine: Engine) -> None:
    vault_with_notes(engine, "Alpha")
    vault_with_notes(engine, "Beta")
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, VaultPickerScreen) and app.screen.vaults
                       and footer_keys(app.screen))
        keys = footer_keys(app.screen)
        assert "Quit" in keys and "Lock" not in keys, keys
        await pilot.press("ctrl+l")  # nothing to lock: nothing happens
        assert isinstance(app.screen, VaultPickerScreen)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert "Lock" not in help_text(app) and "Quit" in help_text(app)
        await pilot.press("escape")

        await pilot.press("enter")
        records = await unlock_to_records(pilot, app)
        await pilot.pause()
        assert "Lock" in footer_keys(records)
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        await pilot.pause()
        assert "Lock" not in footer_keys(app.screen) and "Quit" in footer_keys(app.screen)


async def test_escape_closes_the_key_panel_before_anything_else(engine: Engine) -> None:
    vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(120, 30)) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        app.action_show_help_panel()
        await wait_for(pilot, lambda: bool(search.query(HelpPanel)))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not search.query(HelpPanel))
        assert app.screen is search  # the panel closed; the screen stayed
        await pilot.press("escape")  # without a panel esc goes back as before
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))


async def test_ingest_tree_starts_at_home_hides_dot_entries_and_ctrl_t_focuses_it(
        tmp_path: Path, engine: Engine, monkeypatch) -> None:
    home = tmp_path / "user"
    (home / ".ssh").mkdir(parents=True)
    (home / "notes").mkdir()
    (home / ".profile").write_text("secret", encoding="utf-8")
    (home / "todo.md").write_text("# Todo\n\nWater the tomatoes.\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    vault_with_notes(engine)
    app = MemoriesApp(engine)  # no browse_root: the tree starts at the home folder
    async with app.run_test(size=(100, 30)) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, IngestScreen))
        screen = app.screen
        tree = screen.query_one("#tree")
        assert Path(tree.path) == home
        assert screen.query_one("#paths", Input).has_focus
        await pilot.press("ctrl+t")
        assert tree.has_focus and tree.display
        await wait_for(pilot, lambda: len(tree.root.children) == 2)
        names = sorted(str(node.label) for node in tree.root.children)
        assert names == ["notes", "todo.md"], names
        await pilot.press("ctrl+t")  # back to the path field, the tree stays
        assert screen.query_one("#paths", Input).has_focus and tree.display
        await pilot.press("ctrl+t")
        tree.move_cursor(next(n for n in tree.root.children if str(n.label) == "todo.md"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: "todo.md" in screen.query_one("#paths", Input).value)
        await pilot.press("ctrl+r")
        table = screen.query_one("#ingest-results", DataTable)
        await wait_for(pilot, lambda: table.row_count == 1)


async def test_records_and_reader_share_the_width(engine: Engine) -> None:
    vault_with_notes(engine)
    for size, dates in (((80, 24), False), ((140, 45), True)):
        app = MemoriesApp(engine)
        async with app.run_test(size=size) as pilot:
            records = await unlock_to_records(pilot, app)
            await pilot.pause(0.1)
            table = records.query_one("#records", DataTable)
            reader = records.query_one("#reader", RecordReader)
            assert table.size.width >= 36 and reader.size.width >= 36, (size, table.size, reader.size)
            assert table.size.width <= 66
            assert ("updated" in table.columns) is dates
            title = table.columns["title"]
            assert title.width >= 20
            await pilot.press("ctrl+l")
            await wait_for(pilot, lambda a=app: isinstance(a.screen, UnlockScreen))


async def test_reader_renders_markdown_and_toggles_raw(engine: Engine) -> None:
    vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        records = await unlock_to_records(pilot, app)
        table = records.query_one("#records", DataTable)
        table.move_cursor(row=next(n for n, r in enumerate(records.records) if r.title == "Oven"))
        reader = records.query_one("#reader", RecordReader)
        heading = records.query_one("#reader-markdown")
        await wait_for(pilot, lambda: bool(heading.query("MarkdownH1")))
        paragraph = heading.query("MarkdownParagraph").first()
        # hard-wrapped lines reflow into one paragraph; the heading is a heading, not "# Oven"
        assert paragraph._content.plain == "Bake bread at 250 °C. The crust turns golden."
        assert reader.showing_markdown
        await pilot.press("v")
        assert not reader.showing_markdown
        raw = static_text(records.query_one("#reader-body", Static))
        assert raw.startswith("# Oven\n\nBake bread at 250 °C.\nThe crust\n")
        table.move_cursor(row=next(n for n, r in enumerate(records.records) if r.title == "Bikes"))
        await pilot.pause()
        assert not reader.showing_markdown  # raw stays on for the next record
        await pilot.press("v")
        assert reader.showing_markdown


def test_version_flag_prints_the_package_version(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        tui_main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"memories-tui {__version__}"
