"""Notes editable in place: add, edit (a new revision), revisions, delete with a
confirmation — through the keys a user presses, checked against the real vault."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Static, TextArea

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.confirm import ConfirmScreen
from memories_tui.tui.screens.editor import RecordEditorScreen, RevisionsScreen
from memories_tui.tui.screens.records import RecordsScreen
from memories_tui.tui.screens.search import SearchScreen
from memories_tui.tui.widgets.results import ResultsPane
from tests.helpers.pilot import static_text, wait_for
from tests.tui.test_keys import unlock_to_records, vault_with_notes


def reader_meta(screen: RecordsScreen) -> str:
    return static_text(screen.query_one("#reader-meta", Static))


async def test_add_edit_revisions_delete(engine: Engine) -> None:
    vault_id = vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        records = await unlock_to_records(pilot, app)

        # add: title, tags, text; ctrl+s saves and shows the new record
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordEditorScreen))
        editor = app.screen
        assert editor.query_one("#editor-title", Input).has_focus
        await pilot.press("ctrl+s")  # no title: refused inline
        assert "title" in static_text(editor.query_one("#editor-error", Static))
        await pilot.press(*"Basil", "enter", *"garden, herbs", "enter")
        assert editor.query_one("#editor-body", TextArea).has_focus
        editor.query_one("#editor-body", TextArea).insert("Sow basil in May, next to the tomatoes.")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is records and records.shown is not None
                       and records.shown.title == "Basil")
        basil = next(r for r in engine.list_records(vault_id) if r.title == "Basil")
        assert basil.kind == "memory" and basil.tags == ("garden", "herbs") and basil.revision == 1
        assert basil.body == "Sow basil in May, next to the tomatoes."

        # edit: a new revision; unchanged saves make none
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordEditorScreen))
        assert app.screen.query_one("#editor-body", TextArea).has_focus
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is records)
        assert engine.revisions(vault_id, basil.id) == [1]
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordEditorScreen))
        app.screen.query_one("#editor-body", TextArea).text = "Sow basil in late May; it hates cold nights."
        await pilot.press("ctrl+end", *" Water", "ctrl+home", *"Basil: ")  # the text's end, then its start
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is records and records.shown.revision == 2
                       and "revision 2 · 2 of 2 kept" in reader_meta(records))  # the reader follows the reload
        assert engine.revisions(vault_id, basil.id) == [1, 2]
        assert records.shown.body == "Basil: Sow basil in late May; it hates cold nights. Water"

        # revisions: h lists them, enter shows the old one in the reader
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, RevisionsScreen))
        await pilot.press("down", "enter")  # newest first: down is revision 1
        await wait_for(pilot, lambda: app.screen is records and records.shown.revision == 1)
        assert records.shown.body.startswith("Sow basil in May")
        assert "revision 1 · 1 of 2 kept" in reader_meta(records)  # its number, then its place (numbers can skip)

        # e on an older revision asks: restore it, or edit the latest ("Edit the latest" has the focus)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        question = static_text(app.screen.query_one("#confirm-text", Static))
        assert "reading revision 1; the latest is revision 2" in question
        await pilot.press("escape")  # neither
        await wait_for(pilot, lambda: app.screen is records)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("enter")

        # leaving the editor with changes asks; "Keep editing" has the focus
        await wait_for(pilot, lambda: isinstance(app.screen, RecordEditorScreen))
        editor = app.screen
        assert editor.query_one("#editor-body", TextArea).text.startswith("Basil: Sow basil in late May")  # latest
        editor.query_one("#editor-title", Input).value = "Basil!"
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is editor)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.click("#yes")
        await wait_for(pilot, lambda: app.screen is records)
        assert engine.read_record(vault_id, basil.id).title == "Basil"
        assert engine.revisions(vault_id, basil.id) == [1, 2]

        # the new text is searchable at once
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        app.screen.query_one("#query", Input).value = "cold nights"
        await pilot.press("enter")
        bm25 = app.screen.query_one("#pane-bm25", ResultsPane)
        await wait_for(pilot, lambda: bm25.shown)
        assert [hit.title for hit in bm25.hits] == ["Basil"]
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is records)

        # restore: r in the revisions list opens revision 1 in the editor; ctrl+s makes it revision 3
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, RevisionsScreen))
        assert "r restores it" in static_text(app.screen.query_one("#revisions-keys", Static))
        await pilot.press("end", "r")  # the oldest, revision 1, is last
        await wait_for(pilot, lambda: isinstance(app.screen, RecordEditorScreen))
        assert app.screen.query_one("#editor-body", TextArea).text.startswith("Sow basil in May")
        assert "new revision 3 from revision 1" in static_text(app.screen.query_one("#editor-kind-fixed", Static))
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is records and records.shown.revision == 3)
        assert engine.revisions(vault_id, basil.id) == [1, 2, 3]
        assert engine.read_record(vault_id, basil.id).body == "Sow basil in May, next to the tomatoes."

        # delete asks first; "Keep it" keeps it
        records.shown = engine.read_record(vault_id, basil.id)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "all 3 of its revisions" in static_text(app.screen.query_one("#confirm-text", Static))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is records)
        assert any(r.id == basil.id for r in engine.list_records(vault_id))
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.click("#yes")
        await wait_for(pilot, lambda: app.screen is records and all(r.id != basil.id for r in records.records))
        assert all(r.id != basil.id for r in engine.list_records(vault_id))

        # a record with one revision: no "all 1 of its revision"
        oven = next(r for r in engine.list_records(vault_id) if r.title == "Oven")
        # through the table, as a user does (a highlight the delete left pending would replace a
        # record shown directly)
        table = records.query_one("#records", DataTable)
        table.move_cursor(row=next(n for n, r in enumerate(records.records) if r.id == oven.id))
        await wait_for(pilot, lambda: records.shown is not None and records.shown.id == oven.id)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        text = static_text(app.screen.query_one("#confirm-text", Static))
        assert "“Oven” (memory) is removed from the vault" in text and "all 1" not in text
        await pilot.press("escape")


async def test_saving_over_a_change_made_meanwhile_merges_instead_of_dropping_it(engine: Engine) -> None:
    """The record changes while it is open in the editor (a sync brought another device's edit;
    here another engine call writes it): ctrl+s does not save over it. The editor holds the edit
    merged with the newer revision (a different line: no markers; the same line: markers) and
    says so; the next ctrl+s makes a revision of the newer one, with both changes."""
    vault_id = vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        records = await unlock_to_records(pilot, app)
        oven = next(r for r in engine.list_records(vault_id) if r.title == "Oven")
        await wait_for(pilot, lambda: records.shown is not None)
        while records.shown.id != oven.id:
            await pilot.press("down")
            await wait_for(pilot, lambda: records.shown is not None)
        for rounds, (mine, theirs) in enumerate([(("Bake bread at 250 °C.", "Bake bread at 240 °C."),
                                                  ("turns golden.", "turns deep brown.")),
                                                 (("turns deep brown.", "turns dark."),
                                                  ("turns deep brown.", "turns black."))]):
            await pilot.press("e")
            await wait_for(pilot, lambda: isinstance(app.screen, RecordEditorScreen))
            editor = app.screen
            area = editor.query_one("#editor-body", TextArea)
            area.text = area.text.replace(*mine)
            current = engine.read_record(vault_id, oven.id)
            engine.update_record(vault_id, oven.id, body=current.body.replace(*theirs))  # meanwhile
            await pilot.press("ctrl+s")
            error = editor.query_one("#editor-error", Static)
            await wait_for(pilot, lambda error=error: "Not saved" in static_text(error))
            assert app.screen is editor
            assert engine.revisions(vault_id, oven.id)[-1] == current.revision + 1  # only the change made meanwhile
            text = area.text
            if rounds == 0:
                assert mine[1] in text and theirs[1] in text and "<<<<<<<" not in text
            else:
                assert "<<<<<<< your edit" in text and "turns dark." in text and "turns black." in text
                area.text = text.split("<<<<<<<")[0] + "The crust\nturns dark brown.\n"
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: app.screen is records)
            saved = engine.read_record(vault_id, oven.id)
            assert saved.revision == current.revision + 2
            if rounds == 0:
                assert "240 °C" in saved.body and "deep brown" in saved.body
            else:
                assert saved.body.endswith("turns dark brown.\n") and "<<<<<<<" not in saved.body


async def test_ctrl_q_with_unsaved_text_in_the_editor_asks_first(engine: Engine) -> None:
    """ctrl+q quit at once and lost what the editor held; esc asked. Now both ask, with "Keep
    editing" the default; with nothing typed, ctrl+q still quits at once."""
    vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        records = await unlock_to_records(pilot, app)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordEditorScreen))
        editor = app.screen
        await pilot.press("ctrl+end", *" unsaved words")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "Quit without saving?" in static_text(app.screen.query_one("#confirm-text", Static))
        await pilot.press("enter")  # Keep editing
        await wait_for(pilot, lambda: app.screen is editor)
        assert editor.query_one("#editor-body", TextArea).text.endswith(" unsaved words")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.click("#yes")
        await wait_for(pilot, lambda: not app.is_running)
    assert records.vault_id  # the list was open beneath


async def test_ctrl_q_with_nothing_typed_quits_at_once(engine: Engine) -> None:
    vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordEditorScreen))
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running)


async def test_older_and_newer_at_the_ends_say_so(engine: Engine) -> None:
    """`[` and `]` past the ends did nothing, silently."""
    vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        records = await unlock_to_records(pilot, app)
        await wait_for(pilot, lambda: records.shown is not None)
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert "This is the only revision kept." in [str(n.message) for n in app._notifications]
