"""Status for people: sections with units, usage beside its limit, the model
problem in full."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from memories_tui.engine import Engine, NewRecord
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.status import StatusScreen, render_sections
from memories_tui.tui.status_view import sections
from tests.helpers.pilot import PASS, wait_for
from tests.tui.test_keys import unlock_to_records, vault_with_notes


def rendered(screen: StatusScreen, width: int = 76) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(render_sections(screen.view))
    return console.export_text()


async def test_status_sections_with_units_and_the_full_problem(engine: Engine) -> None:
    vault_id = vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
        text = rendered(app.screen)
        for heading in ("Vault", "Index (in memory while unlocked)", "Embedding model", "Limits",
                        "Sharing (CLI and AI clients)"):
            assert heading in text, heading
        assert "records indexed" in text and "2 records" in text
        assert "chunks" in text and "of 10,000 chunks" in text and "MiB" in text and "of 2 vaults" in text
        # "took N s" follows only when this process built the index; a restored snapshot has no
        # build time (whether the background save won the race decides which), so only the row is checked
        assert "last built" in text
        assert "not installed" in text and "press m on the records screen, or F2 anywhere" in text
        problem = engine.status(vault_id).problem or ""
        assert "".join(problem.split()) in "".join(text.split())  # wrapped (long paths fold), never cut


def test_sections_for_an_installed_model_show_embedded_share() -> None:
    status = {"installed": True, "model": "EmbeddingGemma 300M Q4 (pinned build)", "chunks": 10, "embedded": 7,
              "missing": 3, "truncated": 1, "dimensions": 768, "max_tokens": 2048, "records_indexed": 4,
              "limits": {"chunks": 10000, "source_mib": 16, "vector_mib": 32, "cached_vaults": 2},
              "usage": {"chunks": 10, "source_mib": 0.01, "vector_mib": 0.02, "cached_vaults": 1},
              "last_build": 0, "last_build_seconds": 0.0, "profile": "embeddinggemma", "directory": "/m"}
    view = sections(name="n", vault_id="v", device_only=True, status=status, home="/h", config="/h/c.toml",
                    idle_lock_minutes=0)
    rows = {(s.title, r.label): r for s in view for r in s.rows}
    assert rows[("Embedding model", "embedded")].value == "7 of 10 chunks, 3 waiting"
    assert rows[("Embedding model", "embedded")].warn
    assert rows[("Embedding model", "max tokens")].value == "2048 per chunk (1 chunk was cut to fit)"
    assert rows[("Vault", "idle lock")].value == "off"
    assert rows[("Vault", "device-only")].value.startswith("yes")
    assert rows[("Index (in memory while unlocked)", "last built")].value == "not built yet"


async def test_sources_show_in_status_and_gone_cards_are_marked_in_the_list(engine: Engine, tmp_path) -> None:
    from memories_tui.tui.screens.records import RecordsScreen

    vault_id = vault_with_notes(engine)
    notes = tmp_path / "Notes"
    notes.mkdir()
    (notes / "kept.md").write_text("# Kept\n", encoding="utf-8")
    (notes / "old.md").write_text("# Old plan\n", encoding="utf-8")
    (notes / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    engine.unlock(vault_id, PASS)
    engine.add_source(vault_id, notes)
    engine.sync_sources(vault_id)
    (notes / "old.md").unlink()
    engine.sync_sources(vault_id)
    engine.lock()
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await unlock_to_records(pilot, app)
        assert isinstance(screen, RecordsScreen)
        table = screen.query_one("#records")
        titles = [str(table.get_cell_at((row, 1))) for row in range(table.row_count)]
        assert "⚠ Old plan" in titles and "Kept" in titles  # only the card whose file is gone is marked
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
        text = " ".join(rendered(app.screen, width=100).split())  # the folder's path decides where lines wrap
        assert "Sources (memories source)" in text and "1 source gone" in text and "2 cards" in text
        assert "1 file skipped" in text and "last synced 20" in text  # the last sync's time and skips


def synced_vault(engine: Engine, tmp_path: Path) -> tuple[str, Path]:
    """The notes vault, unlocked and synced once with the folder tmp_path/Sync: (its id, the folder)."""
    vault_id = vault_with_notes(engine)
    folder = tmp_path / "Sync"
    folder.mkdir()
    engine.unlock(vault_id, PASS)
    engine.sync_add(vault_id, str(folder), PASS)
    engine.sync_now(vault_id)
    return vault_id, folder


async def test_sync_state_shows_in_status(engine: Engine, tmp_path) -> None:
    vault_id, folder = synced_vault(engine, tmp_path)
    folder.rename(tmp_path / "Gone")  # the next sync fails: its error shows
    try:
        engine.sync_now(vault_id)
    except Exception:  # noqa: BLE001 - the failure is what this test shows
        pass
    engine.add_records(vault_id, [NewRecord("memory", f"after the sync {n}", "waits to be pushed") for n in (1, 2)])
    engine.lock(vault_id)
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
        rows = {(s.title, r.label): r for s in app.screen.view for r in s.rows}
        title = "Sync (in the background while unlocked)"
        assert rows[(title, "target")].value.endswith("Sync")
        assert rows[(title, "last sync")].value.startswith("20")
        assert rows[(title, "last error")].warn and rows[(title, "last error")].value.startswith("sync_")
        assert "s syncs now and shows what went wrong" in rows[(title, "last error")].value
        assert rows[(title, "conflicts")].value == "none"
        assert rows[(title, "pending")].value == "2 records to push"  # one write, two records: counted here
        assert "d lists them" in rows[(title, "devices")].value
        await pilot.press("d")  # the key the row names
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SyncDevicesScreen")


async def test_the_vault_picker_shows_each_vaults_last_sync(engine: Engine, tmp_path) -> None:
    """No passphrase needed: a synced vault's time, a failing one's error code, "-" for one that
    does not sync."""
    from textual.widgets import DataTable

    from memories_tui.tui.screens.vaults import VaultPickerScreen

    synced_id, _folder = synced_vault(engine, tmp_path)
    failing_id = vault_with_notes(engine, "Work")
    (tmp_path / "Other").mkdir()
    engine.unlock(failing_id, PASS)
    engine.sync_add(failing_id, str(tmp_path / "Other"), PASS)
    (tmp_path / "Other").rename(tmp_path / "Moved")
    try:
        engine.sync_now(failing_id)
    except Exception:  # noqa: BLE001 - the failure is what the picker shows
        pass
    plain_id = vault_with_notes(engine, "Plain")
    engine.lock()
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, VaultPickerScreen) and len(app.screen.vaults) == 3)
        table = app.screen.query_one("#vaults", DataTable)
        shown = {str(table.get_row(vault_id)[3]): str(table.get_row(vault_id)[2])
                 for vault_id in (synced_id, failing_id, plain_id)}
        assert shown[synced_id].startswith("20") and shown[plain_id] == "-", shown
        assert shown[failing_id].startswith("sync_"), shown
