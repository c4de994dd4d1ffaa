"""The ingest screen leaves the home folder — a path field that
completes names from the file system, a tree that goes up a folder and opens where the field
points, a root shown as ~/… (it said only "root")."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.paths import PathSuggester, complete, parse_paths
from memories_tui.tui.screens.ingest import FileTree, IngestScreen
from tests.helpers.pilot import static_text, wait_for
from tests.tui.test_keys import unlock_to_records, vault_with_notes


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "notes" / "travel").mkdir(parents=True)
    (tmp_path / "notes" / "travel" / "kyoto.md").write_text("# 京都\n\n寺廟很多。\n", encoding="utf-8")
    (tmp_path / "notes" / "travel plans.md").write_text("# Plans\n\nOsaka next.\n", encoding="utf-8")
    (tmp_path / "notes" / ".hidden.md").write_text("x", encoding="utf-8")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "garden.md").write_text("# Garden\n\nTomatoes.\n", encoding="utf-8")
    return tmp_path


async def test_completion_suggests_the_rest_of_a_name(tree: Path) -> None:
    base = str(tree)
    assert complete(f"{base}/no") == f"{base}/notes/"
    assert complete(f"{base}/notes/tra") == f"{base}/notes/travel"  # travel/ and "travel plans.md"
    assert complete(f"{base}/notes/travel/k") == f"{base}/notes/travel/kyoto.md"
    assert complete(f"{base}/notes/.h") == f"{base}/notes/.hidden.md"  # dot-files only when asked for
    assert complete(f"{base}/notes/x") is None and complete(f"{base}/nowhere/a") is None
    suggester = PathSuggester()
    assert await suggester.get_suggestion(f"a.md {base}/else") == f"a.md {base}/elsewhere/"
    assert await suggester.get_suggestion(f"{base}/notes/travel ") is None  # after a space: nothing
    # a name with a space completes inside an open quote only, so the field stays parseable
    assert await suggester.get_suggestion(f'"{base}/notes/travel p') == f'"{base}/notes/travel plans.md'
    assert parse_paths(f'"{base}/notes/travel plans.md" ~/x') == [tree / "notes" / "travel plans.md",
                                                                   Path.home() / "x"]


async def test_the_tree_leaves_the_home_and_opens_where_the_field_points(tree: Path, engine: Engine,
                                                                         monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tree / "notes"))
    vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, IngestScreen))
        screen = app.screen
        files = screen.query_one("#tree", FileTree)
        field = screen.query_one("#paths", Input)
        assert Path(files.path) == tree / "notes" and str(files.root.label) == "~"

        # the field completes: type part of a name, right arrow takes the grey rest
        field.value = f"{tree}/else"
        field.cursor_position = len(field.value)
        await wait_for(pilot, lambda: field._suggestion == f"{tree}/elsewhere/")
        await pilot.press("right")
        assert field.value == f"{tree}/elsewhere/"

        # ctrl+t opens the tree at that folder, outside the home; backspace goes up
        await pilot.press("ctrl+t")
        assert files.has_focus
        await wait_for(pilot, lambda: Path(files.path) == tree / "elsewhere")
        assert str(files.root.label) == str(tree / "elsewhere")
        await pilot.press("backspace")
        await wait_for(pilot, lambda: Path(files.path) == tree)
        await wait_for(pilot, lambda: {"elsewhere", "notes"} <= {str(n.label) for n in files.root.children})
        assert str(files.root.label) == str(tree)
        assert "up a folder" in static_text(screen.query_one("#tree-folder", Static))

        # enter on a file in the tree adds it; the import runs from the field
        field.value = ""
        await pilot.press("backspace")  # and up again: the tree is never stuck
        await wait_for(pilot, lambda: Path(files.path) == tree.parent)
        files.path = tree / "elsewhere"
        await wait_for(pilot, lambda: len(files.root.children) == 1)
        files.move_cursor(files.root.children[0])
        await pilot.press("enter")
        await wait_for(pilot, lambda: "garden.md" in field.value)
        await pilot.press("ctrl+r")
        table = screen.query_one("#ingest-results", DataTable)
        await wait_for(pilot, lambda: table.row_count == 1, timeout=30)


async def test_a_folder_in_the_field_imports_its_tree_and_lists_what_it_skipped(tree: Path, engine: Engine) -> None:
    """A folder typed (or added from the tree) brings its text and Markdown files, subfolders
    included; a binary is listed as skipped with its reason and dot-files stay out."""
    (tree / "notes" / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    vault_id = vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(120, 36)) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, IngestScreen))
        screen = app.screen
        screen.query_one("#paths", Input).value = str(tree / "notes")
        await pilot.press("ctrl+r")
        message = screen.query_one("#ingest-message", Static)
        await wait_for(pilot, lambda: static_text(message).startswith("Done"), timeout=60)
        table = screen.query_one("#ingest-results", DataTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        by_file = {row[0]: row for row in rows}
        assert set(by_file) == {"kyoto.md", "travel plans.md", "photo.png"}, rows
        assert by_file["photo.png"][1] == "skipped" and by_file["photo.png"][3]  # the reason is shown
        titles = {record.title for record in engine.list_records(vault_id)}
        assert {"京都", "Plans"} <= titles and not any("hidden" in t for t in titles)
