"""A background sync that starts failing is told in a notice, not only on the status screen,
and so is the first one that works again (a real folder target made unreachable and back)."""

from __future__ import annotations

from memories_tui.engine import Engine
from memories_tui.tui import sync_notice
from memories_tui.tui.app import MemoriesApp
from tests.helpers.pilot import PASS, wait_for
from tests.tui.test_keys import unlock_to_records, vault_with_notes


def _notices(app: MemoriesApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_a_failing_background_sync_and_its_recovery_are_notified(engine: Engine, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(sync_notice, "EVERY_SECONDS", 0.1)
    vault_id = vault_with_notes(engine)
    folder = tmp_path / "Sync"
    folder.mkdir()
    engine.unlock(vault_id, PASS)
    engine.sync_add(vault_id, str(folder), PASS)
    engine.sync_now(vault_id)
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
