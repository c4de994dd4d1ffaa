"""The device-only policy from the TUI ("Device-only policy" in the command palette), as
`memories vault policy VAULT --device-only on|off`: it says what the policy does and asks first;
esc changes nothing; the status screen shows the policy set. (What the policy refuses is the
engine's, tested in tests/integration.)"""

from __future__ import annotations

from pathlib import Path

from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.confirm import ConfirmScreen
from memories_tui.tui.screens.records import RecordsScreen
from memories_tui.tui.screens.status import StatusScreen
from tests.helpers.pilot import open_records, static_text, wait_for
from tests.tui.test_keys import vault_with_notes
from tests.tui.test_sync_now_dialog import _home

PASS = "correct horse battery staple"


async def _ask(pilot, app: MemoriesApp) -> ConfirmScreen:  # noqa: ANN001
    await app.run_action("device_only")
    await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#confirm-text")))
    return app.screen


async def test_device_only_is_turned_on_and_off_after_asking(tmp_path: Path, cheap_kdf) -> None:
    engine = _home(tmp_path)
    vault_id = vault_with_notes(engine)
    engine.unlock(vault_id, PASS)
    app = MemoriesApp(engine)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await open_records(pilot, app, vault_id)
        question = await _ask(pilot, app)
        text = static_text(question.query_one("#confirm-text"))
        assert "Device-only is off." in text and "only with targets on this machine" in text
        await pilot.press("escape")  # no
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        assert engine.device_only(vault_id) is False
        await _ask(pilot, app)
        await pilot.click("#yes")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and engine.device_only(vault_id))
        assert any("device-only is on" in str(n.message) for n in app._notifications)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
        rows = {row.label: row.value for section in app.screen.view for row in section.rows}
        assert rows["device-only"].startswith("yes")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        question = await _ask(pilot, app)
        assert "Device-only is on." in static_text(question.query_one("#confirm-text"))
        await pilot.click("#yes")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and not engine.device_only(vault_id))
    engine.lock()
