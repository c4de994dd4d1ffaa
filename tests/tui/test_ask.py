"""The ask panel through App.run_test() + Pilot: generated / extractive / insufficient / rejected
states, `[S#]` never eaten as markup, action links never live, citations open their chunk with
verified quotes highlighted, late answers dropped on lock."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input, OptionList, Static

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.ask import CHECK_LINE, QuoteDetailScreen, answer_text
from memories_tui.tui.screens.chunk import TermTextArea
from memories_tui.tui.screens.vaults import UnlockScreen
from tests.helpers.pilot import PASS, ask, static_text, wait_for
from tests.helpers.vaults import open_vault

SIZE = (160, 48)
NOTE = "前言。混合搜尋把 BM25 與向量排名融合 [S1] 並且 [@click=app.quit]不會執行[/]。結尾。"


def make_engine(tmp_path: Path, config: str = "") -> tuple[Engine, str]:
    engine, vault_id = open_vault(tmp_path / "home", config, "Personal", PASS)
    engine.add_record(vault_id, kind="card", title="混合搜尋", body=NOTE)
    return engine, vault_id


def test_answer_text_highlights_citations_without_markup() -> None:
    text = answer_text("A [S1] b [@click=app.quit]x[/] 【S2】")
    assert text.plain == "A [S1] b [@click=app.quit]x[/] 【S2】"
    styled = [text.plain[s.start:s.end] for s in text.spans]
    assert styled == ["[S1]", "【S2】"]


async def test_extractive_state_and_markup_pitfalls(tmp_path: Path) -> None:
    engine, vault_id = make_engine(tmp_path)
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ask(pilot, app, vault_id, "混合搜尋融合什麼")
        assert screen.state == "extractive"
        assert "not generated" in static_text(screen.query_one("#ask-state", Static))
        shown = static_text(screen.query_one("#ask-answer", Static))
        assert "[S1]" in shown and "[@click=app.quit]不會執行[/]" in shown  # literal text, nothing eaten
        assert static_text(screen.query_one("#ask-check", Static)) == CHECK_LINE
        assert screen.query_one("#ask-citations", OptionList).option_count == 1
        await pilot.click("#ask-answer")  # a live action link would quit the app here
        await pilot.pause()
        assert app.is_running
    engine.lock()


async def test_generated_answer_and_citation_opens_chunk_with_quote(tmp_path: Path, srv) -> None:
    srv.chat = lambda s, u: json.dumps({"answer": "它融合 BM25 與向量 [S1]。", "citations": ["S1"],
                                        "quotes": [{"source": "S1", "text": "混合搜寻把 BM25"}]}, ensure_ascii=False)
    engine, vault_id = make_engine(tmp_path, srv.generation_toml())
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ask(pilot, app, vault_id, "混合搜尋")
        assert screen.state == "answered"
        assert "✓ verified" in static_text(screen.query_one("#ask-quotes", Static))
        options = screen.query_one("#ask-citations", OptionList)
        options.focus()
        options.highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, QuoteDetailScreen))
        await wait_for(pilot, lambda: app.screen.is_mounted and bool(app.screen.query(TermTextArea)))
        area = app.screen.query_one("#detail-body", TermTextArea)
        await wait_for(pilot, lambda: area.term_char_spans)  # painted after the screen's first refresh
        spans = area.term_char_spans
        assert [area.text[a:b] for a, b in spans] == ["混合搜尋把 BM25"]
        assert any(area.spans_with_style(row) for row in range(area.document.line_count))
    engine.lock()


async def test_rejected_and_insufficient_states(tmp_path: Path, srv) -> None:
    srv.chat = lambda s, u: json.dumps({"answer": "Made up [S9].", "citations": ["S9"]})
    engine, vault_id = make_engine(tmp_path, srv.generation_toml())
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ask(pilot, app, vault_id, "混合搜尋")
        assert screen.state == "rejected"
        assert static_text(screen.query_one("#ask-answer", Static)) == ""
        assert "S9" in static_text(screen.query_one("#ask-state", Static))
        field = screen.query_one("#question", Input)
        field.focus()
        field.value = "quantum chromodynamics"
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.state == "insufficient_evidence")
    engine.lock()


async def test_lock_during_ask_drops_the_answer(tmp_path: Path, srv) -> None:
    entered, gate = srv.hold_chat(lambda system, user: json.dumps({"answer": "late [S1]", "citations": ["S1"]}))
    engine, vault_id = make_engine(tmp_path, srv.generation_toml())
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ask(pilot, app, vault_id, "混合搜尋", wait=False)
        await wait_for(pilot, entered.is_set)
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        gate.set()
        await pilot.pause(0.3)
        assert screen.state == "working" and screen.answer is None  # the late answer never arrived
        assert isinstance(app.screen, UnlockScreen)
