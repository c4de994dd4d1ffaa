"""A record edited on two devices at once, in the TUI: the list and the reader mark it, c opens
the side-by-side view (the winner and the other revision), and keep other / keep both / merge
end the conflict in the real vault, the way a user presses the keys."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Label, Static, TextArea

from memories_tui.engine import Conflict, ConflictRevision, Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.conflict import ConflictScreen
from memories_tui.tui.screens.editor import RecordEditorScreen
from memories_tui.tui.screens.records import RecordsScreen
from tests.helpers.pilot import PASS, open_records, static_text, wait_for
from tests.helpers.snapshots import check
from tests.helpers.sync import a_note_on_two_devices, first_device, joined_device
from tests.tui.test_snapshots import language, masks_for, pinned_clocks, shot, snap_home  # noqa: F401 - fixtures

DELETION = "deleted on one device while edited on another"  # what the reader says of such a record


@pytest.fixture
def conflicted(tmp_path):
    """Device a's engine with one record whose edits on a and b did not see each other."""
    a, b, rid = a_note_on_two_devices(tmp_path, "Trip plan", "Train at 9.")
    a.edit(rid, "Train at 10.")
    b.edit(rid, "Bus at 8.")
    for device in (a, b, a):
        device.sync()
    b.close()
    winner = a.records()[rid][2]
    yield a, rid, winner, ({"Train at 10.", "Bus at 8."} - {winner}).pop()
    a.close()


async def _open_conflict(pilot, app, a, rid, said: str = "edited on two devices at once") -> ConflictScreen:
    records = await open_records(pilot, app, a.vault_id)
    await wait_for(pilot, lambda: records.records and records.conflicted == {rid})
    row = next(n for n, r in enumerate(records.records) if r.id == rid)
    table = records.query_one("#records", DataTable)
    table.move_cursor(row=row)
    await wait_for(pilot, lambda: records.shown is not None and records.shown.id == rid)
    assert str(table.get_row_at(row)[1]).startswith("⇄ ")
    other_row = 1 - row
    assert not str(table.get_row_at(other_row)[1]).startswith("⇄")
    assert said in static_text(records.query_one("#reader-meta", Static))
    await pilot.press("c")
    await wait_for(pilot, lambda: isinstance(app.screen, ConflictScreen))
    return app.screen


async def test_keep_both_from_the_side_by_side_view(conflicted) -> None:
    a, rid, winner, loser = conflicted
    app = MemoriesApp(a.engine)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_conflict(pilot, app, a, rid)
        assert winner in static_text(screen.query_one("#conflict-winner Static", Static))
        other = static_text(screen.query_one("#conflict-other Static", Static))
        assert loser in other
        # whose the losing edit is (the winner is chosen by the revisions' ids, so either, run to run)
        assert other.startswith("This device's edit" if loser == "Train at 10." else "Other device"), other
        await pilot.press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and not app.screen.conflicted
                       and len(app.screen.records) == 3)
        assert a.engine.conflicts(a.vault_id) == []
        titles = {title: body for _kind, title, body in a.records().values()}
        assert titles["Trip plan"] == winner and titles["Trip plan (conflict copy)"] == loser


async def test_keep_other_and_merge_in_the_editor(conflicted) -> None:
    a, rid, winner, loser = conflicted
    app = MemoriesApp(a.engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_conflict(pilot, app, a, rid)
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordEditorScreen))
        body = app.screen.query_one("#editor-body", TextArea)
        assert body.text.startswith("<<<<<<< ") and winner in body.text and loser in body.text
        assert not any("restored" in str(label.render()) for label in app.screen.query(Label))
        body.text = f"{winner} Or: {loser}"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and not app.screen.conflicted)
        assert a.records()[rid][2] == f"{winner} Or: {loser}"
        assert a.engine.conflicts(a.vault_id) == []


async def test_keep_the_other_revision(conflicted) -> None:
    a, rid, _winner, loser = conflicted
    app = MemoriesApp(a.engine)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await _open_conflict(pilot, app, a, rid)
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and not app.screen.conflicted)
        assert a.records()[rid][2] == loser and a.engine.conflicts(a.vault_id) == []
        whose = "this device's" if loser == "Train at 10." else "the other device's"  # a wrote "Train at 10."
        assert f"Kept {whose} text" in " ".join(str(n.message) for n in app._notifications)


async def test_side_by_side_snapshot(snap_home, pinned_clocks, language) -> None:  # noqa: F811
    """80×24, English and Traditional Chinese: both sides, the summary and the keys fit."""
    engine = Engine.open(snap_home / "home")
    info = engine.create_vault("Personal", PASS)
    engine.unlock(info.vault_id, PASS)
    record = engine.add_record(info.vault_id, kind="memory", title="Trip plan 旅行計畫",
                               body="# Day one\n\nTrain at 10 from the central station.\n\n- pack the 雨傘\n")
    other = ConflictRevision("0" * 24, False, "Trip plan 旅行計畫",
                             "# Day one\n\nBus at 8; it is cheaper.\n\n- pack the 雨傘\n- snacks\n")
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_records(pilot, app, info.vault_id)
        await app.push_screen(ConflictScreen(info.vault_id, record, Conflict(record.id, record.title, [other])))
        await wait_for(pilot, lambda: isinstance(app.screen, ConflictScreen))
        problem = await check(pilot, shot("conflict-side-by-side", language), masks_for(engine, snap_home))
    engine.lock()
    assert problem is None, problem


async def test_merge_puts_markers_only_around_the_part_both_devices_changed(tmp_path) -> None:
    a, b, rid = a_note_on_two_devices(tmp_path, "Trip plan",
                                      "Day one\nTrain at 9.\n\nDay two\nMuseum.\n\nDay three\nHome.\n")
    a.edit(rid, "Day one\nTrain at 10.\n\nDay two\nMuseum.\n\nDay three\nHome by plane.\n")
    b.edit(rid, "Day one\nBus at 8.\n\nDay two\nMuseum and park.\n\nDay three\nHome.\n")
    for device in (a, b, a):
        device.sync()
    b.close()
    winner_line = a.records()[rid][2].splitlines()[1]
    loser_line = ({"Train at 10.", "Bus at 8."} - {winner_line}).pop()
    app = MemoriesApp(a.engine)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await _open_conflict(pilot, app, a, rid)
            await pilot.press("m")
            await wait_for(pilot, lambda: isinstance(app.screen, RecordEditorScreen))
            body = app.screen.query_one("#editor-body", TextArea)
            assert body.text == (f"Day one\n<<<<<<< shown (winner)\n{winner_line}\n=======\n{loser_line}\n"
                                 ">>>>>>> other device\n\nDay two\nMuseum and park.\n\nDay three\nHome by plane.\n")
            body.text = body.text.replace(f"<<<<<<< shown (winner)\n{winner_line}\n=======\n", "").replace(
                ">>>>>>> other device\n", "")
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and not app.screen.conflicted)
            assert a.records()[rid][2] == (f"Day one\n{loser_line}\n\nDay two\nMuseum and park.\n\nDay three\n"
                                           "Home by plane.\n")
            assert a.engine.conflicts(a.vault_id) == []
    finally:
        a.close()


async def test_o_lets_a_deletion_from_another_device_win_after_asking(tmp_path) -> None:
    """The other side is a deletion an edit beat: o said nothing and did nothing; it asks, then
    deletes the record, and the other device deletes it too at its next sync."""
    from memories_tui.tui.screens.confirm import ConfirmScreen

    a, b, rid = a_note_on_two_devices(tmp_path, "Old plan", "Train at 9.")
    a.edit(rid, "Train at 10.")
    b.delete(rid)
    for device in (a, b, a):
        device.sync()
    app = MemoriesApp(a.engine)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_conflict(pilot, app, a, rid, DELETION)
        assert "edited on one device while another deleted it" in static_text(screen.query_one("#conflict-summary",
                                                                                                 Static))
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")  # no: nothing changes
        await wait_for(pilot, lambda: isinstance(app.screen, ConflictScreen))
        assert rid in a.records()
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen.query("#yes"))
        await pilot.click("#yes")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and len(app.screen.records) == 1)
        assert rid not in a.records() and a.engine.conflicts(a.vault_id) == []
        a.sync()
    b.sync()
    assert rid not in b.records() and b.engine.conflicts(b.vault_id) == []
    a.close()
    b.close()


def _deleted_on_a_edited_on_b(tmp_path):
    """A deletes "Kyoto" while b edits it; b syncs, then a: the edit wins, a keeps its own deletion."""
    a, b, rid = a_note_on_two_devices(tmp_path, "Kyoto", "Temples.")
    a.delete(rid)
    b.edit(rid, "Temples and gardens.")
    b.sync()
    a.sync()
    return a, b, rid


async def test_the_device_that_deleted_is_told_its_deletion_lost(tmp_path) -> None:
    """On the deleting device the view said the record was edited here and another device deleted
    it; it says this device deleted it, and o lets that deletion win on every device."""
    from memories_tui.tui.screens.confirm import ConfirmScreen

    a, b, rid = _deleted_on_a_edited_on_b(tmp_path)
    assert [(k.deleted, k.here) for k in a.engine.conflicts(a.vault_id)[0].kept] == [(True, True)]
    b.sync()  # b gets a's deletion: from another device there
    assert [(k.deleted, k.here) for k in b.engine.conflicts(b.vault_id)[0].kept] == [(True, False)]
    app = MemoriesApp(a.engine)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_conflict(pilot, app, a, rid, DELETION)
        summary = static_text(screen.query_one("#conflict-summary", Static))
        assert summary.startswith("“Kyoto” was deleted here while another device edited it; the edit won.")
        assert "(your deletion wins)" in summary and "edited here" not in summary
        other = static_text(screen.query_one("#conflict-other Static", Static))
        assert other == "Your deletion on this device (another device's edit won over it)."
        assert "Temples and gardens." in static_text(screen.query_one("#conflict-winner Static", Static))
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen.query("#yes"))
        assert "Your deletion wins" in " ".join(static_text(s) for s in app.screen.query(Static))
        await pilot.click("#yes")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and len(app.screen.records) == 1)
        assert rid not in a.records() and a.engine.conflicts(a.vault_id) == []
        a.sync()
    b.sync()
    assert rid not in b.records() and b.engine.conflicts(b.vault_id) == []
    a.close()
    b.close()


async def test_keep_both_and_merge_do_not_apply_against_a_deletion(tmp_path) -> None:
    """b acted as "keep shown" and m did nothing, silently: both are gone from the footer, pressed
    anyway they say why and change nothing; w then keeps the edit on every device."""
    from memories_tui.tui.screens.help import screen_keys
    from tests.helpers.pilot import footer_keys

    a, b, rid = _deleted_on_a_edited_on_b(tmp_path)
    app = MemoriesApp(a.engine)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        screen = await _open_conflict(pilot, app, a, rid, DELETION)
        await pilot.pause()
        shown = footer_keys(screen)
        assert "Keep shown" in shown and "Keep other" in shown
        assert "Keep both" not in shown and "Merge" not in shown
        helped = [k.description for k in screen_keys(screen, app)]  # F1 leaves them out too
        assert any(d.startswith("Keep shown") for d in helped)
        assert not any(d.startswith(("Keep both", "Merge")) for d in helped)
        for key in ("b", "m"):
            app.clear_notifications()
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is screen, key
            assert [str(n.message) for n in app._notifications] == [
                "There is no other text to keep or merge: the other side is a deletion. w keeps the edit, o lets "
                "the deletion win."], key
        assert a.engine.conflicts(a.vault_id) != [] and len(a.records()) == 2
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and not app.screen.conflicted)
        assert a.records()[rid][2] == "Temples and gardens." and a.engine.conflicts(a.vault_id) == []
        a.sync()
    b.sync()
    assert b.records()[rid][2] == "Temples and gardens." and b.engine.conflicts(b.vault_id) == []
    a.close()
    b.close()


async def test_m_on_a_file_asset_says_it_cannot_be_merged(tmp_path) -> None:
    """m on two edits of a file asset did nothing, silently: it says why and changes nothing."""
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    scan = tmp_path / "scan.bin"
    scan.write_bytes(bytes(range(256)) * 3)
    rid = a.engine.add_asset(a.vault_id, scan, "scan").id
    a.add("Other note", "untouched")
    a.sync()
    b = joined_device(tmp_path / "b", str(folder))
    a.engine.update_record(a.vault_id, rid, title="scan on a")
    b.engine.update_record(b.vault_id, rid, title="scan on b")
    for device in (a, b, a):
        device.sync()
    b.close()
    app = MemoriesApp(a.engine)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        screen = await _open_conflict(pilot, app, a, rid)
        app.clear_notifications()
        await pilot.press("m")
        await pilot.pause()
        assert app.screen is screen
        assert [str(n.message) for n in app._notifications] == [
            "A file asset cannot be merged: w keeps the shown file, o the other device's, b both."]
        assert len(a.engine.conflicts(a.vault_id)) == 1
    a.close()
