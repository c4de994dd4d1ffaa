"""Every citation form the validator accepts is highlighted and linked in the Ask screen: the
screen calls the answer check's own finder (answer/citation_finder.py), so `【S1、S2】` and `[s1; S2]`,
which a Chinese model writes, are styled and open their chunks like `[S1]`."""

from __future__ import annotations

import json
from pathlib import Path

from rich.text import Text
from textual.widgets import OptionList, Static

from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.ask import QuoteDetailScreen, answer_text
from memories_tui.tui.wrap import BrokenLines
from tests.helpers.model_server import ModelServer
from tests.helpers.pilot import PASS, ask, wait_for
from tests.helpers.vaults import open_vault

ANSWER = "混合搜尋融合兩種排名【S1、S2】，英文筆記也這樣說 [s1; S2]。"


def test_answer_text_styles_every_accepted_form() -> None:
    forms = ["[s1]", "[S1; S2]", "[S1、S2]", "【S1, S2】", "[ S1 ]", "[S 1]", "［S2］", "[S1-S2]", "[S\u200b2]"]
    text = answer_text("前 " + " 中 ".join(forms) + " 後 [@click=app.quit]x[/]")
    assert [text.plain[s.start:s.end] for s in text.spans] == forms
    assert "[@click=app.quit]x[/]" in text.plain  # still plain text, never markup


async def test_chinese_and_lowercase_citation_lists_are_highlighted_and_linked(tmp_path: Path) -> None:
    with ModelServer() as srv:
        srv.chat = lambda system, user: json.dumps({"answer": ANSWER, "citations": []}, ensure_ascii=False)
        engine, vault_id = open_vault(tmp_path / "home", srv.generation_toml(), "Personal", PASS)
        engine.add_record(vault_id, kind="card", title="混合搜尋", body="混合搜尋把 BM25 與向量排名融合。")
        engine.add_record(vault_id, kind="card", title="Hybrid", body="混合搜尋 hybrid search fuses two rankings.")
        app = MemoriesApp(engine)
        async with app.run_test(size=(160, 48)) as pilot:
            screen = await ask(pilot, app, vault_id, "混合搜尋")
            assert screen.state == "answered"
            content = screen.query_one("#ask-answer", Static).content
            assert isinstance(content, BrokenLines)  # wrapped at draw time, its text styled as answer_text made it
            shown = content.text
            assert isinstance(shown, Text) and shown.plain == ANSWER
            styled = [(shown.plain[s.start:s.end], str(s.style)) for s in shown.spans]
            assert styled == [("【S1、S2】", "bold magenta"), ("[s1; S2]", "bold magenta")]
            options = screen.query_one("#ask-citations", OptionList)
            assert [options.get_option_at_index(i).id for i in range(options.option_count)] == ["S1", "S2"]
            options.focus()
            options.highlighted = 1
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, QuoteDetailScreen))
            detail = app.screen
            assert isinstance(detail, QuoteDetailScreen)
            source = next(s for s in screen.answer.sources if s.label == "S2")
            assert detail.hit.citation == "S2" and detail.hit.record_id == source.record_id
        engine.lock()
