"""The editor when a sync changes the record under it: a deletion from another device does
not strand the text typed here (ctrl+s offers to save it as a new note), and a merge that
still has conflict markers is not saved without asking — the way a user presses the keys,
with two homes syncing through a folder."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Static, TextArea

from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.confirm import ConfirmScreen
from memories_tui.tui.screens.conflict import ConflictScreen
from memories_tui.tui.screens.editor import RecordEditorScreen
from memories_tui.tui.screens.records import RecordsScreen
from tests.helpers.pilot import open_records, static_text, wait_for
from tests.helpers.sync import a_note_on_two_devices, first_device


async def _edit(pilot, app, records: RecordsScreen, record_id: str) -> RecordEditorScreen:
    """Show `record_id` in the records list (through the table) and press e."""
    await wait_for(pilot, lambda: any(r.id == record_id for r in records.records))
    table = records.query_one("#records", DataTable)
    table.move_cursor(row=next(n for n, r in enumerate(records.records) if r.id == record_id))
    await wait_for(pilot, lambda: records.shown is not None and records.shown.id == record_id)
    await pilot.press("e")
    await wait_for(pilot, lambda: isinstance(app.screen, RecordEditorScreen))
    return app.screen


async def test_a_note_deleted_by_a_sync_while_edited_is_saved_as_a_new_note(tmp_path) -> None:
    """Device a deletes the note and syncs; on b it is open with typed text, b syncs, ctrl+s:
    it said "No record … in vault notes." at every try and only esc (losing the text) got out.
    Now it says what happened and offers to save the text as a new note (Keep editing keeps
    the editor as it is)."""
    a, b, rid = a_note_on_two_devices(tmp_path, "Trip plan", "Train at 9.", kind="card",
                                      tags=("travel", "june"))
    app = MemoriesApp(b.engine)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            records = await open_records(pilot, app, b.vault_id)
            editor = await _edit(pilot, app, records, rid)
            await pilot.press("ctrl+end", *" Bring snacks.")
            editor.query_one("#editor-tags", Input).value = "travel, food"
            a.delete(rid)
            a.sync()
            b.sync()  # as Sync now or the background sync does, with the editor open
            assert rid not in b.records()

            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            question = static_text(app.screen.query_one("#confirm-text", Static))
            assert "“Trip plan” was deleted (on another device, or elsewhere) while you edited it" in question
            assert rid not in question
            await pilot.press("enter")  # the focused, safe answer: Keep editing
            await wait_for(pilot, lambda: app.screen is editor)
            error = static_text(editor.query_one("#editor-error", Static))
            assert "deleted" in error and rid not in error
            assert editor.query_one("#editor-body", TextArea).text == "Train at 9. Bring snacks."

            await pilot.press("ctrl+s")  # asks again
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.click("#yes")
            await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and records.shown is not None
                           and records.shown.title == "Trip plan")
            said = [str(n.message) for n in app._notifications]
            assert "Saved as a new note." in said and "Saved." not in said  # one notice, not two
            again = [r for r in b.engine.list_records(b.vault_id) if r.title == "Trip plan"]
            assert len(again) == 1 and again[0].id != rid
            assert (again[0].kind, again[0].tags, again[0].body) == ("card", ("travel", "food"),
                                                                     "Train at 9. Bring snacks.")
            b.sync()  # and the other device gets it back
        a.sync()
        assert "Train at 9. Bring snacks." in {body for _kind, _title, body in a.records().values()}
    finally:
        a.close()
        b.close()


async def test_a_merge_with_conflict_markers_left_asks_before_saving(tmp_path) -> None:
    """m on a conflict opens the three-way merge with markers around the line both devices
    changed; ctrl+s at once saved the markers (and they synced to every device). Now it asks,
    Keep editing (the focused answer) saves nothing, and Save anyway saves the text as it is."""
    a, b, rid = a_note_on_two_devices(tmp_path, "Trip plan", "Day one\nTrain at 9.\n\nDay two\nMuseum.\n")
    a.edit(rid, "Day one\nTrain at 10.\n\nDay two\nMuseum.\n")
    b.edit(rid, "Day one\nBus at 8.\n\nDay two\nMuseum.\n")
    for device in (a, b, a):
        device.sync()
    b.close()
    app = MemoriesApp(a.engine)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            records = await open_records(pilot, app, a.vault_id)
            await wait_for(pilot, lambda: records.conflicted == {rid})
            table = records.query_one("#records", DataTable)
            table.move_cursor(row=next(n for n, r in enumerate(records.records) if r.id == rid))
            await wait_for(pilot, lambda: records.shown is not None and records.shown.id == rid)
            await pilot.press("c")
            await wait_for(pilot, lambda: isinstance(app.screen, ConflictScreen))
            await pilot.press("m")
            await wait_for(pilot, lambda: isinstance(app.screen, RecordEditorScreen))
            editor = app.screen
            merged = editor.query_one("#editor-body", TextArea).text
            assert "<<<<<<< shown (winner)\n" in merged and ">>>>>>> other device\n" in merged

            revisions = a.engine.revisions(a.vault_id, rid)
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            question = static_text(app.screen.query_one("#confirm-text", Static))
            assert question == ("The text still has conflict markers (<<<<<<< … >>>>>>>). Save it with them "
                                "anyway?")
            await pilot.press("enter")  # Keep editing
            await wait_for(pilot, lambda: app.screen is editor)
            assert a.engine.conflicts(a.vault_id) and a.engine.revisions(a.vault_id, rid) == revisions

            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.click("#yes")  # Save anyway: saved as it is, the conflict ends
            await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and not records.conflicted)
            assert a.engine.read_record(a.vault_id, rid).body == merged
            assert a.engine.conflicts(a.vault_id) == []
    finally:
        a.close()


async def test_the_editors_own_merge_with_markers_asks_too(tmp_path) -> None:
    """The record changed while it was edited and the same line differs: the editor's merge
    has markers; ctrl+s asks before saving them, and once they are edited out it saves at once."""
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    rid = a.add("Oven", "Bake at 220.\nCrust turns golden.\n")
    app = MemoriesApp(a.engine)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            records = await open_records(pilot, app, a.vault_id)
            editor = await _edit(pilot, app, records, rid)
            area = editor.query_one("#editor-body", TextArea)
            area.text = "Bake at 220.\nCrust turns dark.\n"
            a.edit(rid, "Bake at 220.\nCrust turns black.\n")  # meanwhile
            await pilot.press("ctrl+s")
            error = editor.query_one("#editor-error", Static)
            await wait_for(pilot, lambda: "Not saved" in static_text(error))
            assert "<<<<<<< your edit\n" in area.text
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("escape")  # no
            await wait_for(pilot, lambda: app.screen is editor)
            assert a.engine.revisions(a.vault_id, rid) == [1, 2]
            area.text = "Bake at 220.\nCrust turns dark brown.\n"
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: app.screen is records)
            assert a.engine.read_record(a.vault_id, rid).body == "Bake at 220.\nCrust turns dark brown.\n"
    finally:
        a.close()


def test_what_counts_as_a_conflict_marker() -> None:
    from memories_tui.tui.screens.editor import has_conflict_markers

    assert has_conflict_markers("a\n<<<<<<< your edit\nb\n")
    assert has_conflict_markers("a\n=======\nb")
    assert has_conflict_markers("a\n>>>>>>> revision 3")
    assert not has_conflict_markers("<<<<<<<< eight\n======== eight\nx >>>>>>> y\n a <<<<<<< b\n")
