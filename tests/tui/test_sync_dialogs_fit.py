"""The sync and passphrase dialogs at 80×24 in Chinese, with an error line shown: every field and
both buttons on the screen, nothing to scroll (their fields go borderless on a short terminal, as
the create form's do). Real vault, real folder target."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from memories_tui.i18n import set_language
from memories_tui.tui.app import MemoriesApp
from tests.helpers.pilot import PASS, open_records, wait_for
from tests.tui.test_cjk_80x24 import screen_text
from tests.tui.test_keys import vault_with_notes
from tests.tui.test_sync_now_dialog import _home

DIALOGS = {  # palette action: (the dialog's error line, the texts that must show)
    "join_vault": ("#join-stage", ("這個保險庫的密碼", "在此處的名稱", "取消", "加入")),
    "set_up_sync": ("#target-error", ("S3 端點網址", "取消", "加入並立即同步")),
    "change_passphrase": ("#passwd-error", ("目前的密碼", "再輸入一次新密碼", "取消", "變更密碼")),
}


@pytest.mark.parametrize("action", list(DIALOGS))
async def test_the_dialog_fits_80_by_24_in_chinese(tmp_path: Path, cheap_kdf, action: str) -> None:
    engine = _home(tmp_path)
    vault_id = vault_with_notes(engine)
    engine.unlock(vault_id, PASS)
    if action == "change_passphrase":  # its longest form: the sync sentence, a weak passphrase's advice
        (tmp_path / "Sync").mkdir()
        engine.sync_add(vault_id, str(tmp_path / "Sync"), PASS)
    set_language("zh-Hant")
    try:
        app = MemoriesApp(engine)
        async with app.run_test(size=(80, 24)) as pilot:
            await open_records(pilot, app, vault_id)
            before = app.screen
            await app.run_action(action)
            await wait_for(pilot, lambda: app.screen is not before and bool(app.screen.query(DIALOGS[action][0])))
            error, texts = DIALOGS[action]
            app.screen.query_one(error, Static).update("同步目標無法連線 the sync target cannot be reached " * 2)
            for weak in app.screen.query("#passwd-new"):
                weak.value = "abc"  # type: ignore[attr-defined]
            await pilot.pause()
            shown = screen_text(app)
            for text in texts:
                assert text in shown, shown
            assert "▄▄▄▄" in shown, shown  # the dialog's bottom border: nothing below it cut off
    finally:
        set_language("en")
    engine.lock()
