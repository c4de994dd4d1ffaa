"""Quitting the TUI while its "sync now" waits on a server that stopped answering: the sync's
worker thread ends at once, so the process can exit (asyncio waits for worker threads at exit).
When the TUI hosts the home's socket, the lock at quit already ends the read; here a separate
daemon serves the home, so nothing is locked as the app ends, and only the app's stop event
(passed as the sync's cancel) ends it. Nor does quitting wait long for a background sync whose
upload the server holds back. A real WebDAV server held back on cue (tests/helpers/dav.py)."""

from __future__ import annotations

import threading
import time

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.status import StatusScreen
from tests.helpers.daemon import daemon
from tests.helpers.pilot import PASS, wait_for
from tests.integration.test_sync_slow_target import WAIT, _when_held, dav, slow  # noqa: F401 - the fixtures
from tests.tui.test_keys import unlock_to_records, vault_with_notes

QUIT_WITHIN = 15  # seconds: the 2 s given to a background sync's upload, and the app's own exit under load


async def test_quitting_ends_a_sync_now_waiting_on_the_server(engine: Engine, slow) -> None:  # noqa: F811
    from tests.helpers.dav import PASSWORD, USER

    url, hold, waiting = slow
    vault_id = vault_with_notes(engine)
    engine.unlock(vault_id, PASS)
    engine.sync_add(vault_id, url, PASS)
    engine.sync_now(vault_id)
    engine.lock(vault_id)
    returned = threading.Event()
    real_sync_now = engine.sync_now

    def sync_now(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - the real one, telling when it returned
        try:
            return real_sync_now(*args, **kwargs)
        finally:
            returned.set()

    engine.sync_now = sync_now  # type: ignore[method-assign]
    env = {"MEMORIES_WEBDAV_USERNAME": USER, "MEMORIES_WEBDAV_PASSWORD": PASSWORD}
    (engine.home / "config.toml").write_text("[daemon]\nidle_lock_minutes = 0\n", encoding="utf-8")
    with daemon(engine.home, env=env):
        app = MemoriesApp(engine)
        async with app.run_test(size=(100, 30)) as pilot:
            await unlock_to_records(pilot, app)
            assert app.daemon_link.remote is not None, "the TUI hosts the socket: the lock at quit would end the read"
            hold("stall")
            await pilot.press("t")
            await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
            await pilot.press("s")
            _when_held(waiting)
            app.exit()
        assert returned.wait(WAIT), "the TUI's sync still waits for the server after the app ended"


async def test_quitting_does_not_wait_for_an_upload_the_server_holds_back(engine: Engine, slow) -> None:  # noqa: F811
    """The background sync at unlock is uploading a note added before and the server holds the
    upload back: quitting leaves within STOP_WAIT_SECONDS (engine/sync_watch.py), as a second
    ctrl+c does in the CLI (the note stays in the vault's outbox and goes at the next sync),
    instead of 30 s or the client's timeouts."""
    url, hold, waiting = slow
    vault_id = vault_with_notes(engine)
    engine.unlock(vault_id, PASS)
    engine.sync_add(vault_id, url, PASS)
    engine.sync_now(vault_id)
    engine.add_record(vault_id, kind="memory", title="Held back", body="sent at the next sync")
    engine.lock(vault_id)
    hold("stall-put")
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await unlock_to_records(pilot, app)  # the background sync at unlock sends the note
        _when_held(waiting)
        started = time.monotonic()
        app.exit()
    assert time.monotonic() - started < QUIT_WITHIN, "quitting waited for the held-back upload"
    hold("")
    engine.unlock(vault_id, PASS)
    engine.sync_now(vault_id)  # what the quit left behind goes now
    b = Engine.open(engine.home.parent / "b")
    joined = b.sync_join(url, PASS)
    assert "Held back" in {r.title for r in b.list_records(joined.vault_id)}
    b.close()
