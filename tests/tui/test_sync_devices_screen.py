"""The TUI's sync devices screen (`d` on the status screen, "Sync devices" in the palette): the
devices the target's heads name, forgetting one after asking (never this device), stopping sync
here after asking, a target that cannot be read said on the screen; and `c` on the records list
finding a record with conflicting edits. Two homes on one folder target are the two devices."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from memories_tui.i18n import set_language
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.confirm import ConfirmScreen
from memories_tui.tui.screens.records import RecordsScreen
from memories_tui.tui.screens.status import StatusScreen
from memories_tui.tui.screens.sync_devices import SyncDevicesScreen
from tests.helpers.pilot import open_records, static_text, wait_for
from tests.helpers.sync import Device, first_device, joined_device
from tests.tui.test_cjk_80x24 import screen_text


@pytest.fixture
def two_devices(tmp_path: Path):
    """Device a (open) and the id of device b, both synced with one folder: (a, b's id, the folder)."""
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    a.add("Trip plan", "Train at 9.")
    a.sync()
    b = joined_device(tmp_path / "b", str(folder))
    b.add("From b", "written on b")
    b.sync()
    other = next(d.device for d in b.engine.sync_devices(b.vault_id) if d.this_device)
    b.close()
    a.sync()
    yield a, other, folder
    a.close()


async def _devices_screen(pilot, app: MemoriesApp, a: Device) -> SyncDevicesScreen:  # noqa: ANN001
    await open_records(pilot, app, a.vault_id)
    await pilot.press("t")
    await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
    await pilot.press("d")
    await wait_for(pilot, lambda: isinstance(app.screen, SyncDevicesScreen) and app.screen.target is not None)
    return app.screen


def _intro(screen: SyncDevicesScreen) -> str:
    return static_text(screen.query_one("#devices-intro", Static))


async def test_lists_both_devices_and_forgets_the_other_one_after_asking(two_devices) -> None:
    a, other, folder = two_devices
    app = MemoriesApp(a.engine)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _devices_screen(pilot, app, a)
        await wait_for(pilot, lambda: len(screen.devices) == 2)
        assert str(folder) in _intro(screen) and "1 other device." in _intro(screen)
        # both homes are on this machine and named after it: the screen says how to tell them apart
        assert "Several devices are named" in _intro(screen) and "device_name" in _intro(screen)
        table = screen.query_one("#devices-table", DataTable)
        mine = next(n for n, d in enumerate(screen.devices) if d.this_device)
        assert "(this device)" in str(table.get_row_at(mine)[0])
        table.move_cursor(row=mine)
        await pilot.press("f")  # this device: said, nothing asked
        await pilot.pause()
        assert isinstance(app.screen, SyncDevicesScreen)
        table.move_cursor(row=1 - mine)
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#yes")))
        await pilot.press("escape")  # no: nothing forgotten
        await wait_for(pilot, lambda: isinstance(app.screen, SyncDevicesScreen))
        assert {d.device for d in a.engine.sync_devices(a.vault_id)} >= {other}
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#yes")))
        await pilot.click("#yes")
        await wait_for(pilot, lambda: isinstance(app.screen, SyncDevicesScreen) and len(screen.devices) == 1)
        assert screen.devices[0].this_device and "No other device is listed" in _intro(screen)
        assert "was forgotten" in _intro(screen) and "Several devices" not in _intro(screen)
        assert "f" not in screen.active_bindings  # nothing left to forget: not offered
        assert other not in {d.device for d in a.engine.sync_devices(a.vault_id)}
        assert "From b" in {title for _kind, title, _body in a.records().values()}  # its changes stay


async def test_x_stops_syncing_here_after_asking_and_s_sets_it_up_again(two_devices) -> None:
    a, _other, folder = two_devices
    app = MemoriesApp(a.engine)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _devices_screen(pilot, app, a)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#yes")))
        await pilot.click("#yes")
        await wait_for(pilot, lambda: isinstance(app.screen, SyncDevicesScreen) and screen.target is None
                       and "does not sync yet" in _intro(screen))
        assert a.engine.sync_status(a.vault_id) == [] and any(folder.iterdir())  # the target is left as it was
        assert "x" not in screen.active_bindings and "f" not in screen.active_bindings and "s" in screen.active_bindings
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))


async def test_a_target_that_cannot_be_read_is_said_on_the_screen(two_devices) -> None:
    a, _other, folder = two_devices
    shutil.rmtree(folder)
    app = MemoriesApp(a.engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_records(pilot, app, a.vault_id)
        await app.run_action("open_sync_devices")  # the palette's "Sync devices"
        await wait_for(pilot, lambda: isinstance(app.screen, SyncDevicesScreen) and "does not exist" in
                       _intro(app.screen))
        assert app.screen.devices == [] and str(folder) in _intro(app.screen)
        await pilot.press("x")  # a target gone for good can still be left
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#yes")))
        await pilot.click("#yes")
        await wait_for(pilot, lambda: isinstance(app.screen, SyncDevicesScreen) and "does not sync yet" in
                       _intro(app.screen))
        assert a.engine.sync_status(a.vault_id) == []


async def test_c_on_a_record_without_a_conflict_goes_to_the_one_with_it(tmp_path: Path) -> None:
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    ids = [a.add(f"Note {n}", f"body {n}") for n in range(5)]
    a.sync()
    b = joined_device(tmp_path / "b", str(folder))
    a.edit(ids[3], "edited on a")
    b.edit(ids[3], "edited on b")
    for device in (a, b, a):
        device.sync()
    b.close()
    app = MemoriesApp(a.engine)
    async with app.run_test(size=(100, 30)) as pilot:
        records = await open_records(pilot, app, a.vault_id)
        await wait_for(pilot, lambda: len(records.records) == 5 and records.conflicted == {ids[3]})
        table = records.query_one("#records", DataTable)
        start = next(n for n, r in enumerate(records.records) if r.id != ids[3])
        table.move_cursor(row=start)
        await wait_for(pilot, lambda: records.shown is not None and records.shown.id != ids[3])
        await pilot.press("c")
        await wait_for(pilot, lambda: records.shown is not None and records.shown.id == ids[3])
        assert isinstance(app.screen, RecordsScreen)  # moved there; a second c compares
    a.close()


async def test_the_screen_fits_80_by_24_in_chinese(two_devices) -> None:
    a, _other, _folder = two_devices
    set_language("zh-Hant")
    try:
        app = MemoriesApp(a.engine)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await _devices_screen(pilot, app, a)
            await wait_for(pilot, lambda: len(screen.devices) == 2)
            await pilot.pause()
            text = screen_text(app)
            for heading in ("裝置", "名稱", "變更包", "此處已讀", "上次寫入（UTC）", "（本裝置）", "另有 1 台裝置。"):
                assert heading in text, text
    finally:
        set_language("en")
