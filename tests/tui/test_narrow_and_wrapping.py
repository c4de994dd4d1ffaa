"""At 80×24 the footer keeps Help and Lock, a help taller than
the screen says there is more, search shows one pane with tabs; snippets without Markdown
markers; cut titles end in "…"; Chinese punctuation never starts a line the TUI wraps."""

from __future__ import annotations

import pytest
from rich.console import Console
from rich.text import Text
from textual.widgets import DataTable, Input, Static, Tabs

from memories_tui import __version__
from memories_tui.engine import Engine, SearchHit
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.help import HelpScreen
from memories_tui.tui.screens.search import SearchScreen
from memories_tui.tui.text import snippet_text
from memories_tui.tui.widgets.results import ResultsPane, hit_row
from memories_tui.tui.wrap import NO_START, BrokenLines, line_ranges, wrap
from tests.helpers.pilot import PASS, static_text, wait_for
from tests.tui.test_keys import unlock_to_records

LONG_TITLE = "A very long title about baking sourdough bread at home in a covered cast-iron pot"
ZH = ("我們先去京都的寺廟看看，之後再去大阪吃東西。然後回家休息（很累），明天再說！"
      "「混合搜尋」把關鍵字與語意結合；結果更好、更快。")


def notes(engine: Engine) -> str:
    info = engine.create_vault("Personal", PASS)
    engine.unlock(info.vault_id, PASS)
    engine.add_record(info.vault_id, kind="memory", title=LONG_TITLE, body="Bake **sourdough** bread at 250 °C.")
    engine.add_record(info.vault_id, kind="card", title="京都", body=ZH)
    engine.lock()
    return info.vault_id


def visible(widget) -> bool:
    """Drawn on screen: displayed, and its region inside the screen."""
    screen = widget.screen.region
    return widget.display and widget.region.width > 0 and screen.contains_region(widget.region)


async def test_80x24_footer_keeps_help_and_lock_and_help_says_there_is_more(engine: Engine) -> None:
    from textual.widgets._footer import FooterKey

    notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        records = await unlock_to_records(pilot, app)
        await pilot.pause()
        shown = {key.description for key in records.query(FooterKey) if visible(key)}
        assert {"Help", "Lock", "Search", "Ask"} <= shown, shown

        # the records table cuts a long title with "…"
        table = records.query_one("#records", DataTable)
        row = next(n for n, r in enumerate(records.records) if r.title == LONG_TITLE)
        cell = table.get_row_at(row)[1]
        assert cell.plain.endswith("…") and LONG_TITLE.startswith(cell.plain[:-1])

        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_screen = app.screen
        foot = help_screen.query_one("#help-foot", Static)
        await wait_for(pilot, lambda: "more line" in static_text(foot))
        assert visible(foot)
        # the whole line fits the box at 80 columns (with the version at its end)
        assert static_text(foot).endswith(f"Memories {__version__}") and len(static_text(foot)) <= foot.size.width
        # a key row that wraps keeps its text's column (Ask's description is longer than the box)
        lines = [strip.text for strip in help_screen._compositor.render_strips()]
        row = next(n for n, line in enumerate(lines) if "Ask: Ask a question" in line)
        column = lines[row].index("Ask:")
        follow = lines[row + 1]
        assert follow[:column].rstrip(" ").endswith("│") and follow[column] != " ", (lines[row], follow)
        await pilot.press("end")
        await wait_for(pilot, lambda: "more line" not in static_text(foot))
        assert static_text(foot) == f"esc closes this help · Memories {__version__}"


async def test_narrow_search_shows_one_pane_with_tabs_and_f3_switches(engine: Engine) -> None:
    notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await unlock_to_records(pilot, app)
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        screen = app.screen
        panes = {mode: screen.query_one(f"#pane-{mode}", ResultsPane) for mode in ("bm25", "vector", "hybrid")}
        screen.query_one("#query", Input).value = "sourdough"
        await pilot.press("enter")
        await wait_for(pilot, lambda: all(p.shown for p in panes.values()), timeout=60)
        await pilot.pause()
        tabs = screen.query_one("#mode-tabs", Tabs)
        assert visible(tabs) and [visible(p) for p in panes.values()] == [True, False, False]
        assert panes["bm25"].size.width > 60  # one wide pane, not three of 24 columns
        assert "BM25 1" in str(tabs.query_one("#tab-bm25").label)
        # the snippet reads as text: no Markdown markers
        row = panes["bm25"].option_list.get_option_at_index(0).prompt.plain
        assert "Bake sourdough bread" in row and "**" not in row

        await pilot.press("tab")  # tab goes to the one pane shown
        assert app.focused is panes["bm25"].option_list
        await pilot.press("f3")
        assert [visible(p) for p in panes.values()] == [False, True, False]
        assert app.focused is panes["vector"].option_list  # the focus followed the pane
        await pilot.press("f3", "f3")
        assert [visible(p) for p in panes.values()] == [True, False, False]

        await pilot.resize_terminal(140, 45)
        await wait_for(pilot, lambda: not screen.narrow)
        await pilot.pause()
        assert not visible(tabs) and all(visible(p) for p in panes.values())
        assert not screen.check_action("next_pane", ())


def test_a_snippet_starts_at_a_word_boundary() -> None:
    text = ("Notes about the process and the access settings of the small server we run at home, "
            "then the part that matters: the search box and search results")
    cut = 0
    for cells in (60, 80, 100, 150):
        start = text.index("search box")
        snippet = snippet_text(text, cells=cells, spans=[(start, start + 6)]).plain
        if snippet.startswith("…"):
            cut += 1
            first = snippet[1:].split(" ")[0]
            assert f" {first} " in f" {text} ", (cells, snippet)  # a whole word, not "ess"
        assert "search" in snippet
    assert cut >= 3, "the narrow snippets were not cut: the word-boundary rule went unchecked"


def test_tiny_bm25_scores_of_a_small_vault_do_not_read_zero(engine: Engine) -> None:
    """Two records: a word in one of them has idf ln(1.5 / 1.5) = 0, floored to 1e-6, so its
    score is about a millionth; the pane shows it in two significant digits."""
    info = engine.create_vault("Two", PASS)
    engine.unlock(info.vault_id, PASS)
    engine.add_record(info.vault_id, kind="memory", title="bread", body="Bake sourdough bread at 250 °C.")
    engine.add_record(info.vault_id, kind="memory", title="coffee", body="Pour-over coffee at 92 °C.")
    hits = engine.search(info.vault_id, "bread", mode="bm25").results
    assert hits and 0 < hits[0].scores["bm25"] < 0.001
    line = hit_row(hits[0], 150, stage="bm25").plain.split("\n")[1]
    assert line.startswith("bm25 ") and "0.0000" not in line and "e-06" in line, line


def test_snippet_rows_leave_out_markdown_markers() -> None:
    text = "# Oven\n\nBake sourdough **bread** at 250 °C, see [the notes](http://x) and `code`."
    hit = SearchHit(citation="S1", record_id="r", revision=1, chunk_hash="h", byte_start=0, byte_end=len(text),
                    score=1.0, title="Oven", text=text, kind="card", terms=("bread",))
    assert hit.spans  # the engine's matching found "bread" in the raw text
    row = hit_row(hit, 150, stage="bm25")
    assert "Bake sourdough bread at 250 °C, see the notes and code." in row.plain
    assert "**" not in row.plain and "# Oven" not in row.plain and "http" not in row.plain
    highlighted = [row.plain[s.start:s.end] for s in row.spans if "yellow" in str(s.style)]
    assert highlighted == ["bread"]


@pytest.mark.parametrize("width", range(6, 41))
def test_chinese_punctuation_never_starts_a_line(width: int) -> None:
    lines = [ZH[a:b] for a, b in line_ranges(ZH, width)]
    assert "".join(lines) == ZH  # nothing lost, nothing added
    for line in lines:
        assert line and line[0] not in NO_START, (width, lines)
        assert line[-1] not in "（「『【《", (width, lines)
        assert Text(line).cell_len <= width, (width, lines)


def test_latin_words_break_at_spaces_and_styles_are_kept() -> None:
    text = Text("The quick brown fox jumps over the lazy dog.")
    text.stylize("bold", 4, 9)  # "quick"
    wrapped = wrap(text, 12)
    assert wrapped.plain.split("\n") == ["The quick", "brown fox", "jumps over", "the lazy", "dog."]
    assert [wrapped.plain[s.start:s.end] for s in wrapped.spans] == ["quick"]
    assert wrap(Text("supercalifragilistic"), 8).plain.split("\n") == ["supercal", "ifragili", "stic"]


def test_broken_lines_render_at_the_drawn_width() -> None:
    console = Console(width=13, record=True, color_system=None)
    console.print(BrokenLines(Text(ZH[:30])))
    lines = console.export_text().rstrip("\n").split("\n")
    assert all(line.rstrip() and line[0] not in NO_START for line in lines), lines
    assert "".join(line.rstrip() for line in lines) == ZH[:30]
    assert str(BrokenLines(Text("[S1] x"))) == "[S1] x"


async def test_the_markdown_reader_breaks_chinese_by_the_cjk_rules(engine: Engine) -> None:
    """Textual folds a run of CJK characters at any cell; the reader's paragraphs follow the CJK
    rules instead: no line starts with closing punctuation, a Latin word stays whole."""
    body = "# 京都\n\n" + ZH + "加上語意向量的混合排序（hybrid search），" + ZH + "\n"
    info = engine.create_vault("Personal", PASS)
    engine.unlock(info.vault_id, PASS)
    engine.add_record(info.vault_id, kind="card", title="京都", body=body)
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        app.vault_unlocked(engine.resolve_vault(info.vault_id))
        await wait_for(pilot, lambda: bool(app.screen.query("#reader-markdown MarkdownParagraph")))
        paragraph = app.screen.query_one("#reader-markdown MarkdownParagraph")
        for width in range(80, 100, 3):
            await pilot.resize_terminal(width, 40)
            await pilot.pause(0.1)
            lines = [strip.text.strip() for strip in paragraph.render_lines(paragraph.content_region.reset_offset)]
            lines = [line for line in lines if line]
            assert lines and "".join(lines).replace(" ", "") == (ZH + "加上語意向量的混合排序（hybridsearch），" + ZH)
            assert not [line for line in lines if line[0] in NO_START], (width, lines)
            assert not any(line.endswith("hybri") for line in lines), (width, lines)
    engine.lock()
