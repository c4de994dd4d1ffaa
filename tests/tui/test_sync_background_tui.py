"""The TUI hosting the engine syncs in the background (Pilot): unlocking catches up what
another device pushed, an edit made while it runs is pushed seconds later, and on a clock the
test moves (`MEMORIES_TEST_CLOCK`) it pulls at `[sync] every_minutes`, never while locked."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.vaults import UnlockScreen
from tests.helpers.daemon import Clock, wait_until
from tests.helpers.pilot import unlock_with, wait_for
from tests.helpers.sync import SYNC_PASS, first_device, joined_device, news_for_a_joined_device


async def test_the_tui_syncs_at_unlock_and_after_a_change(tmp_path: Path) -> None:
    a, _folder = news_for_a_joined_device(tmp_path)  # B's TUI must fetch "Medlar tart" itself
    engine = Engine.open(tmp_path / "b")
    app = MemoriesApp(engine)
    async with app.run_test(size=(120, 40)) as pilot:
        await unlock_with(pilot, app, SYNC_PASS)
        vault_id = a.vault_id
        await wait_for(pilot, lambda: "Medlar tart" in {r.title for r in engine.list_records(vault_id)}, 60)
        syncer = app.daemon_link.host._syncer  # the catch-up sync at unlock is over before the edit
        await wait_for(pilot, lambda: syncer is not None and syncer.state.syncs >= 1, 60)
        engine.add_record(vault_id, kind="memory", title="Written in the TUI", body="from b")

        def reached_a() -> bool:
            a.sync()
            return "Written in the TUI" in {title for _k, title, _b in a.records().values()}

        wait_until(reached_a, what="B's change pushed by its TUI")  # the engine thread pushes; the loop need not run
    a.close()


async def test_the_tui_pulls_on_its_schedule_and_not_while_locked(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    a.sync()
    joined_device(tmp_path / "b", str(folder)).close()
    clock = Clock(tmp_path / "clock")
    monkeypatch.setenv("MEMORIES_TEST_CLOCK", str(clock.path))  # read by the TUI's engine, in this process
    engine = Engine.open(tmp_path / "b")
    app = MemoriesApp(engine)
    vault_id = a.vault_id

    async def unlock() -> None:
        await unlock_with(pilot, app, SYNC_PASS)

    def titles() -> set[str]:
        return {r.title for r in engine.list_records(vault_id)}

    async with app.run_test(size=(120, 40)) as pilot:
        await unlock()
        syncer = app.daemon_link.host._syncer
        await wait_for(pilot, lambda: syncer is not None and syncer.state.syncs >= 1, 60)  # the catch-up at unlock
        a.add("Quince jam", "pushed after B's catch-up")
        a.sync()
        await asyncio.sleep(3)  # the scheduler looks every second: nothing is due before the clock moves
        assert "Quince jam" not in titles()
        clock.advance(15 * 60)
        await wait_for(pilot, lambda: "Quince jam" in titles(), 60)
        await wait_for(pilot, lambda: syncer.state.syncs >= 2, 60)  # that sync has ended (its head is up)

        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen), 30)
        done = syncer.state.syncs
        a.add("Medlar tart", "pushed while B is locked")
        a.sync()
        clock.advance(60 * 60)
        await asyncio.sleep(3)
        assert syncer.state.syncs == done and not syncer.state.errors  # locked: nothing ran, nothing failed
        await unlock()  # unlocking catches up at once, before the schedule
        await wait_for(pilot, lambda: "Medlar tart" in titles(), 60)
    a.close()
