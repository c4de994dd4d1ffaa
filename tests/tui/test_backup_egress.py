"""The TUI's backup dialog, the backup taken on lock, and the egress log view."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.backup import BackupScreen
from memories_tui.tui.screens.egress import EgressScreen
from memories_tui.tui.screens.vaults import UnlockScreen, VaultPickerScreen
from memories_tui.vault.header import read_header
from memories_tui.vault.keys import open_keys
from memories_tui.vault.verify import check_vault_file
from tests.helpers.model_server import RERANK, ModelServer
from tests.helpers.pilot import PASS, static_text, wait_for
from tests.tui.test_keys import unlock_to_records, vault_with_notes


def _records_in(path: Path) -> int:
    keys = open_keys(read_header(path), PASS)
    try:
        return check_vault_file(path, keys).records
    finally:
        keys.wipe()


def _write_config(engine: Engine, text: str) -> Engine:
    engine.config.path.write_text(text, encoding="utf-8")
    return Engine.open(engine.home)


async def test_backup_dialog_shows_progress_and_where_the_verified_copy_went(engine: Engine) -> None:
    vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await unlock_to_records(pilot, app)
        await app.run_action("backup_vault")  # "Back up vault" in the command palette
        await wait_for(pilot, lambda: isinstance(app.screen, BackupScreen) and not app.screen.running, timeout=30)
        dialog = app.screen
        assert dialog.error is None and dialog.report is not None
        text = static_text(dialog.query_one("#backup-result", Static))
        assert dialog.report.path.name in text.replace("\n", "")
        assert "every record decrypted" in text and "2 records" in text
        assert static_text(dialog.query_one("#backup-stage", Static)) == "Backup written and verified."
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, BackupScreen))
    assert _records_in(dialog.report.path) == 2
    assert dialog.report.path.parent == engine.home / "backups"


async def test_a_failed_backup_says_why_and_leaves_nothing(tmp_path: Path, engine: Engine) -> None:
    vault_with_notes(engine)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    configured = _write_config(engine, f'[backup]\ndir = "{blocker}"\n')
    app = MemoriesApp(configured)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await unlock_to_records(pilot, app)
            await app.run_action("backup_vault")
            await wait_for(pilot, lambda: isinstance(app.screen, BackupScreen) and not app.screen.running, timeout=30)
            assert app.screen.error is not None and app.screen.error.code == "not_a_folder"
            assert "[not_a_folder]" in static_text(app.screen.query_one("#backup-result", Static))
    finally:
        configured.lock()
    assert blocker.read_text() == "x"


async def test_lock_takes_the_scheduled_backup_only_when_it_is_due(tmp_path: Path, engine: Engine) -> None:
    vault_id = vault_with_notes(engine)
    folder = tmp_path / "auto"
    configured = _write_config(engine, f'[backup]\ndir = "{folder}"\nevery_hours = 24\n')
    app = MemoriesApp(configured)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await unlock_to_records(pilot, app)
            await pilot.press("ctrl+l")
            await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen), timeout=30)
            backups = sorted(folder.glob("*.mvault"))
            assert len(backups) == 1 and _records_in(backups[0]) == 2  # verified in full: keys were there
            assert not configured.is_unlocked(vault_id)  # and the lock went on
            await unlock_to_records(pilot, app)
            await pilot.press("ctrl+l")
            await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen), timeout=30)
            assert sorted(folder.glob("*.mvault")) == backups  # the newest is minutes old: none due
    finally:
        configured.lock()


async def test_backup_from_the_vault_picker_of_a_locked_vault(engine: Engine) -> None:
    vault_with_notes(engine, "One")
    vault_with_notes(engine, "Two")
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, VaultPickerScreen) and app.screen.vaults)
        await pilot.press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, BackupScreen) and not app.screen.running, timeout=30)
        assert app.screen.report is not None and app.screen.report.verified == "structure"
        assert "records not decrypted" in static_text(app.screen.query_one("#backup-result", Static))


async def test_egress_view_lists_what_left_and_which_chunks(engine: Engine) -> None:
    with ModelServer() as srv:
        vault_with_notes(engine)
        configured = _write_config(engine, f'[rag.rerank]\nprotocol = "compatible"\nurl = "{srv.rerank_url}"\n'
                                           'model = "m"\n')
        app = MemoriesApp(configured)
        try:
            async with app.run_test(size=(100, 30)) as pilot:
                records = await unlock_to_records(pilot, app)
                configured.search(records.vault_id, "bread tyre", limit=5)
                await app.run_action("open_egress")  # "Egress log" in the command palette
                await wait_for(pilot, lambda: isinstance(app.screen, EgressScreen) and app.screen.entries, timeout=30)
                screen = app.screen
                table = screen.query_one("#egress-table", DataTable)
                assert table.row_count == 1
                row = [str(c) for c in table.get_row_at(0)]
                assert row[1] == "rerank" and row[2].endswith("(loopback)") and row[5] == "ok"
                detail = static_text(screen.query_one("#egress-detail", Static))
                documents = srv.requests_for(RERANK)[0].json()["documents"]
                import hashlib

                for text in documents:
                    assert hashlib.sha256(text.encode()).hexdigest()[:16] in detail
                assert "Bake bread" not in detail and "tyre" not in detail  # never the content
        finally:
            configured.lock()


async def test_egress_view_shows_a_sync_push_by_the_objects_it_wrote(engine: Engine, tmp_path: Path) -> None:
    vault_with_notes(engine)
    folder = tmp_path / "Sync"
    folder.mkdir()
    app = MemoriesApp(engine)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            records = await unlock_to_records(pilot, app)
            engine.sync_add(records.vault_id, str(folder), PASS)
            pushed = engine.sync_now(records.vault_id).pushed_objects
            await app.run_action("open_egress")
            await wait_for(pilot, lambda: isinstance(app.screen, EgressScreen) and app.screen.entries, timeout=30)
            row = [str(c) for c in app.screen.query_one("#egress-table", DataTable).get_row_at(0)]
            assert row[1] == "sync" and row[3] == f"{pushed} objects" and pushed >= 2
    finally:
        engine.lock()
