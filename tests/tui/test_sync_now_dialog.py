"""The TUI's "sync now" dialog (`s` on the status screen, "Sync now" in the palette): what the
sync did, esc cancelling a sync whose server stopped answering, a second esc closing the dialog
while an upload is held back (the outcome then comes as a notice), and a vault with no target.
Real folder and WebDAV targets; another home is the other device."""

from __future__ import annotations

import threading
from pathlib import Path

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.status import StatusScreen
from memories_tui.tui.screens.sync_now import SyncNowScreen
from tests.helpers.pilot import PASS, static_text, wait_for
from tests.integration.test_sync_slow_target import WAIT, _when_held, dav, slow  # noqa: F401 - the fixtures
from tests.tui.test_keys import unlock_to_records, vault_with_notes

QUIET = "[sync]\nbackground = false\n"  # only the dialog's sync runs: the background one would race it


def _home(tmp_path: Path) -> Engine:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(QUIET, encoding="utf-8")
    return Engine.open(home)


def _synced(tmp_path: Path, target: str | None = None) -> tuple[Engine, str, str]:
    """A home with the notes vault, unlocked and synced once with `target` (else a new folder):
    (its engine, the vault's id, the target)."""
    if target is None:
        (tmp_path / "Sync").mkdir()
        target = str(tmp_path / "Sync")
    engine = _home(tmp_path)
    vault_id = vault_with_notes(engine)
    engine.unlock(vault_id, PASS)
    engine.sync_add(vault_id, target, PASS)
    engine.sync_now(vault_id)
    return engine, vault_id, target


def _other_device_wrote(tmp_path: Path, target: str, vault_id: str, title: str) -> Engine:
    """Another home joined to `target`, which wrote a note and synced (left unlocked)."""
    other = Engine.open(tmp_path / "other")
    other.sync_join(target, PASS)
    other.add_record(vault_id, kind="memory", title=title, body="Written on the other device.")
    other.sync_now(vault_id)
    return other


def _dialog_text(app: MemoriesApp) -> str:
    screen = app.screen
    assert isinstance(screen, SyncNowScreen)
    return " ".join(static_text(screen.query_one(f"#sync-{part}")) for part in ("stage", "result"))


async def _open_dialog(pilot, app: MemoriesApp) -> SyncNowScreen:  # noqa: ANN001
    await unlock_to_records(pilot, app)
    await pilot.press("t")
    await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
    await pilot.press("s")
    await wait_for(pilot, lambda: isinstance(app.screen, SyncNowScreen))
    return app.screen


async def test_sync_now_brings_the_other_devices_note_and_says_what_it_did(tmp_path: Path, cheap_kdf) -> None:
    engine, vault_id, folder = _synced(tmp_path)
    engine.lock(vault_id)
    _other_device_wrote(tmp_path, folder, vault_id, "From the laptop").lock()
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        dialog = await _open_dialog(pilot, app)
        await wait_for(pilot, lambda: not dialog.running)
        assert dialog.report is not None and dialog.error is None
        text = _dialog_text(app)
        assert "Synced." in text and "0 change(s) sent, 1 received from 1 other device(s)" in text
        assert "1 record(s) updated here" in text and "esc closes" in text and "⇄" not in text
        assert "From the laptop" in {r.title for r in engine.list_records(vault_id)}
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
    engine.lock()


async def test_esc_cancels_a_sync_whose_server_stopped_answering(slow, tmp_path: Path, cheap_kdf) -> None:  # noqa: F811
    url, hold, waiting = slow
    engine, vault_id, _ = _synced(tmp_path, url)
    engine.lock(vault_id)
    _other_device_wrote(tmp_path, url, vault_id, "Held back").lock()
    before = None
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await unlock_to_records(pilot, app)
        before = sorted(r.title for r in engine.list_records(vault_id))
        hold("stall")
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SyncNowScreen))
        dialog = app.screen
        _when_held(waiting)
        await pilot.press("escape")  # the held read ends at once: "Cancelling…" may be gone already
        await wait_for(pilot, lambda: not dialog.running, timeout=WAIT)
        text = _dialog_text(app)
        assert "Sync cancelled." in text and "nothing was changed here" in text and "[cancelled]" in text
        assert not dialog.query_one("#sync-bar").display  # an unfinished bar went on pulsing under it
        assert sorted(r.title for r in engine.list_records(vault_id)) == before
        hold("")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
    engine.lock()


async def test_a_second_esc_closes_while_an_upload_is_held_and_the_outcome_comes_as_a_notice(
        slow, tmp_path: Path, cheap_kdf) -> None:  # noqa: F811
    url, hold, waiting = slow
    engine, vault_id, _ = _synced(tmp_path, url)
    engine.add_record(vault_id, kind="memory", title="Slow to leave", body="its upload is held back")
    engine.lock(vault_id)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await unlock_to_records(pilot, app)
        hold("stall-put")
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SyncNowScreen))
        dialog = app.screen
        _when_held(waiting)  # committed here, the upload waits on the server
        await pilot.press("escape")
        assert dialog.running and "Cancelling" in _dialog_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        assert dialog.running  # the sync goes on without the dialog
        hold("")
        await wait_for(pilot, lambda: any("Synced with" in str(n.message) and "1 change(s) sent" in str(n.message)
                                          for n in app._notifications), timeout=WAIT)
    other = Engine.open(tmp_path / "other")
    other.sync_join(url, PASS)
    assert "Slow to leave" in {r.title for r in other.list_records(vault_id)}  # it did leave
    other.lock()
    engine.lock()


async def test_sync_now_from_the_palette_on_a_vault_without_a_target_asks_for_one(
        tmp_path: Path, cheap_kdf) -> None:
    from memories_tui.tui.screens.sync_target import SyncTargetScreen

    engine = _home(tmp_path)
    vault_id = vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await unlock_to_records(pilot, app)
        await app.run_action("sync_now")
        await wait_for(pilot, lambda: isinstance(app.screen, SyncTargetScreen))
        await pilot.press("escape")  # nothing added, no sync tried
        await wait_for(pilot, lambda: not isinstance(app.screen, SyncTargetScreen | SyncNowScreen))
    assert engine.sync_status(vault_id) == []
    engine.lock()


def test_either_cancel_is_set_by_esc_or_by_the_app_ending() -> None:
    from memories_tui.tui.screens.sync_now import EitherCancel

    stopping = threading.Event()
    cancel = EitherCancel(stopping)
    assert not cancel.is_set()
    stopping.set()
    assert cancel.is_set()
    mine = EitherCancel(threading.Event())
    mine.set()
    assert mine.is_set()


async def test_the_records_list_shows_what_a_background_sync_brought_without_leaving_it(
        tmp_path: Path, cheap_kdf, monkeypatch) -> None:
    """The note read stays as it was, scrolled where it was, while the list grows above it."""
    from memories_tui.tui import sync_notice

    monkeypatch.setattr(sync_notice, "EVERY_SECONDS", 0.1)
    engine, vault_id, folder = _synced(tmp_path)
    engine.add_record(vault_id, kind="memory", title="Long read",
                      body="\n\n".join(f"Paragraph {n} of a long note." for n in range(200)))
    engine.lock(vault_id)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await unlock_to_records(pilot, app)
        await pilot.pause(0.5)  # the first look at the registry: the sync before is not news
        table = screen.query_one("#records")
        table.move_cursor(row=next(n for n, r in enumerate(screen.records) if r.title == "Long read"))
        await wait_for(pilot, lambda: screen.shown is not None and screen.shown.title == "Long read")
        await wait_for(pilot, lambda: screen.reader.max_scroll_y >= 40)  # laid out
        screen.reader.scroll_to(y=40, animate=False)
        await wait_for(pilot, lambda: screen.reader.scroll_y == 40)
        other = _other_device_wrote(tmp_path, folder, vault_id, "From the laptop")
        engine.sync_now(vault_id)  # as the background scheduler runs it
        await wait_for(pilot, lambda: "From the laptop" in {r.title for r in screen.records})
        await pilot.pause(0.3)
        assert app.screen is screen and screen.shown is not None and screen.shown.title == "Long read"
        assert screen.records[table.cursor_row].title == "Long read" and screen.reader.scroll_y == 40
    other.lock()
    engine.lock()
