"""A background sync that starts failing is told in a notice, not only on the status screen,
and so is the first one that works again (a real folder target made unreachable and back)."""

from __future__ import annotations

from memories_tui.engine import Engine
from memories_tui.tui import sync_notice
from memories_tui.tui.app import MemoriesApp
from tests.helpers.pilot import unlock_with, wait_for
from tests.tui.test_keys import unlock_to_records
from tests.tui.test_status_screen import synced_vault


def _notices(app: MemoriesApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_a_failing_background_sync_and_its_recovery_are_notified(engine: Engine, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(sync_notice, "EVERY_SECONDS", 0.1)
    vault_id, folder = synced_vault(engine, tmp_path)
    engine.lock(vault_id)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.pause(0.5)
        assert not [n for n in _notices(app) if "Syncing with" in n]  # a good last sync says nothing
        folder.rename(tmp_path / "Unmounted")
        try:
            engine.sync_now(vault_id)  # as the background scheduler runs it: the registry keeps the error
        except Exception:  # noqa: BLE001 - the failure is what this test shows
            pass
        await wait_for(pilot, lambda: any("failed (sync_target_missing)" in n for n in _notices(app)))
        failed = [n for n in _notices(app) if "failed (" in n]
        assert len(failed) == 1 and "nothing was lost" in failed[0] and "Sync" in failed[0]
        await pilot.pause(0.5)
        assert len([n for n in _notices(app) if "failed (" in n]) == 1  # said once, not at every look
        (tmp_path / "Unmounted").rename(folder)
        engine.sync_now(vault_id)
        await wait_for(pilot, lambda: any("works again" in n for n in _notices(app)))


async def test_s_on_the_status_screen_syncs_now_and_says_how_it_went(tmp_path) -> None:
    """Another device's change arrives at once (the background sync would pull it only at
    `every_minutes`); an unreachable target is a notice, the screen stays usable."""
    from memories_tui.tui.screens.status import StatusScreen
    from memories_tui.tui.screens.sync_now import SyncNowScreen
    from tests.helpers.sync import SYNC_PASS, news_for_a_joined_device
    from tests.tui.test_sync_now_dialog import _dialog_text

    a, folder = news_for_a_joined_device(tmp_path)
    (tmp_path / "b" / "config.toml").write_text("[sync]\nbackground = false\n", encoding="utf-8")  # only `s` syncs
    engine = Engine.open(tmp_path / "b")
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await unlock_with(pilot, app, SYNC_PASS)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
        await pilot.press("s")  # the sync dialog (screens/sync_now.py) says how it went
        await wait_for(pilot, lambda: isinstance(app.screen, SyncNowScreen) and not app.screen.running)
        done = _dialog_text(app)
        assert "1 received" in done and "1 record(s) updated here" in done, done
        assert "Medlar tart" in {r.title for r in engine.list_records(app.vault.vault_id)}
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        folder.rename(tmp_path / "Unmounted")
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SyncNowScreen) and not app.screen.running)
        assert "does not exist" in _dialog_text(app) and "[sync_target_missing]" in _dialog_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
    engine.close()
    a.close()


async def test_the_list_shows_what_a_sync_brought_before_the_app_first_looked(tmp_path) -> None:
    """A fresh start: the sync the unlock starts can end before the app's first look at the
    target, and the list stayed as it was before that sync until it was left. (Here the sync
    runs beside the app, as another process's would, before its first look 5 s in.)"""
    import asyncio

    from tests.helpers.pilot import open_records
    from tests.helpers.sync import SYNC_PASS, news_for_a_joined_device

    a, _folder = news_for_a_joined_device(tmp_path)  # b has not fetched "Medlar tart" yet
    (tmp_path / "b" / "config.toml").write_text("[sync]\nbackground = false\n", encoding="utf-8")
    engine = Engine.open(tmp_path / "b")
    engine.unlock(a.vault_id, SYNC_PASS)
    app = MemoriesApp(engine)
    async with app.run_test(size=(120, 40)) as pilot:
        records = await open_records(pilot, app, a.vault_id)
        await wait_for(pilot, lambda: bool(records.records))
        assert "Medlar tart" not in {r.title for r in records.records}
        await asyncio.to_thread(engine.sync_now, a.vault_id)
        await wait_for(pilot, lambda: "Medlar tart" in {r.title for r in records.records}, 30)
    a.close()
