"""The status screen counts a source's files changed since its last sync (new, edited, deleted),
and the count goes when a sync takes them in (a real folder changed between syncs)."""

from __future__ import annotations

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.status import StatusScreen
from tests.helpers.pilot import PASS, wait_for
from tests.tui.test_keys import unlock_to_records, vault_with_notes
from tests.tui.test_status_screen import rendered


def _sources_row(screen: StatusScreen) -> str:
    rows = [r for s in screen.view if s.title == "Sources (memories source)" for r in s.rows]
    assert len(rows) == 1
    return rows[0].value


async def test_status_shows_files_changed_but_not_synced_yet(engine: Engine, tmp_path) -> None:
    vault_id = vault_with_notes(engine)
    notes = tmp_path / "Notes"
    notes.mkdir()
    for name in ("edited", "deleted", "steady"):
        (notes / f"{name}.md").write_text(f"# {name}\n", encoding="utf-8")
    (notes / "latin1.md").write_bytes(b"caf\xe9")  # refused by every sync: not pending
    engine.unlock(vault_id, PASS)
    engine.add_source(vault_id, notes)
    engine.sync_sources(vault_id)
    assert engine.list_sources(vault_id)[0].pending == 0
    (notes / "edited.md").write_text("# edited\n\nand a second line\n", encoding="utf-8")
    (notes / "deleted.md").unlink()
    (notes / "new.md").write_text("# new\n", encoding="utf-8")
    engine.lock()
    app = MemoriesApp(engine)
    async with app.run_test(size=(120, 30)) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
        assert isinstance(app.screen, StatusScreen)
        assert "3 files changed, not synced yet" in _sources_row(app.screen)
        assert "3 files changed, not synced yet" in " ".join(rendered(app.screen, width=120).split())
        engine.sync_sources(vault_id)
        shown = app.screen.view
        await pilot.press("r")
        await wait_for(pilot, lambda: app.screen.view is not shown and app.screen.view)
        assert "not synced yet" not in _sources_row(app.screen)
