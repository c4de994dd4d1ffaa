"""The TUI uses Textual's public API except in textual_adapter.py; these tests fail when a
Textual upgrade changes what that adapter relies on, or when another TUI module starts using
private Textual names."""

from __future__ import annotations

import inspect
import re
from collections import defaultdict
from pathlib import Path

from rich.style import Style
from textual.app import App
from textual.binding import Binding
from textual.message_pump import MessagePump
from textual.widgets import TextArea

import memories_tui.tui
from memories_tui.tui.textual_adapter import EXTRA_HIGHLIGHT, HighlightArea, node_bindings

TUI = Path(memories_tui.tui.__file__).parent
PRIVATE_NAMES = ("_handle_exception", "_set_theme", "_build_highlight_map", "_highlights", "_theme", "_bindings",
                 "_keymap", "_render_chops", "_start_no_matches_countdown", "_cells")


def test_no_tui_module_but_the_adapter_uses_private_textual_names() -> None:
    offenders = []
    for path in sorted(TUI.rglob("*.py")):
        if path.name == "textual_adapter.py":
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"from textual(\.\w+)*\._\w+ import|import textual(\.\w+)*\._", text):
            offenders.append(f"{path.name}: imports a private textual module")
        offenders += [f"{path.name}: {name}" for name in PRIVATE_NAMES if re.search(rf"\b{name}\b", text)]
    assert not offenders, offenders


def test_textual_still_has_what_the_adapter_overrides() -> None:
    assert list(inspect.signature(App._handle_exception).parameters) == ["self", "error"]
    assert list(inspect.signature(TextArea._set_theme).parameters) == ["self", "theme"]
    assert list(inspect.signature(TextArea._build_highlight_map).parameters) == ["self"]
    # closing_mount knows a mount error by the frame that hands it to _handle_exception
    assert "self.app._handle_exception(error)" in inspect.getsource(MessagePump._pre_process)


def test_textual_still_has_what_the_wide_character_and_wording_fixes_replace() -> None:
    from rich.table import Table
    from textual import content, screen
    from textual._compositor import Compositor
    from textual.command import CommandPalette
    from textual.widgets import HelpPanel, KeyPanel
    from textual.widgets._key_panel import BindingsTable

    from memories_tui.tui.textual_adapter import WideCharCompositor, cjk_divide_line

    assert screen.Compositor is WideCharCompositor and content.divide_line is cjk_divide_line
    assert "Compositor()" in inspect.getsource(screen.Screen.__init__)  # each screen makes one by that name
    assert list(inspect.signature(Compositor._render_chops).parameters) == ["self", "crop", "is_rendered_line"]
    # render_partial_update is copied with its chop ends taken from the chops: the rest must match
    assert "chop_ends = [cut_set[1:] for cut_set in self.cuts]" in inspect.getsource(Compositor.render_partial_update)
    assert "divide_line(" in inspect.getsource(content.Content._wrap_and_format)
    assert "No matches found" in inspect.getsource(CommandPalette._start_no_matches_countdown)
    assert "BindingsTable(" in inspect.getsource(KeyPanel.compose)
    assert "KeyPanel(" in inspect.getsource(HelpPanel.compose)
    assert isinstance(BindingsTable.render_bindings_table, type(lambda: None))
    table = Table()
    table.add_column("a")
    table.add_row("x")
    assert table.columns[0]._cells == ["x"]


async def test_highlight_area_paints_its_spans_through_the_theme() -> None:
    class Area(HighlightArea):
        extra_style = Style(bgcolor="yellow")

        def extra_spans(self) -> list[tuple[int, int, int]]:
            return [(1, 2, 5)]

    class Host(App):
        def compose(self):
            yield Area("first\nsecond line\n")

    app = Host()
    async with app.run_test(size=(40, 6)) as pilot:
        area = app.query_one(Area)
        area.rebuild_highlights()
        await pilot.pause()
        assert isinstance(area._highlights, defaultdict)  # rows → [(start byte, end byte, style name)]
        assert area.spans_with_style(1) == [(2, 5)] and area.spans_with_style(0) == []
        assert area._theme is not None and area._theme.syntax_styles[EXTRA_HIGHLIGHT] == Style(bgcolor="yellow")
        painted = "".join(seg.text for seg in area.render_line(1) if seg.style and seg.style.bgcolor
                          and seg.style.bgcolor.name == "yellow")
        assert painted == "con"


async def test_node_bindings_lists_each_binding_of_the_node_with_the_keymap_applied() -> None:
    class Host(App):
        BINDINGS = [Binding("x", "bell", "Ring", id="host.ring"), Binding("y,z", "bell", "Ring too")]

    app = Host()
    async with app.run_test(size=(40, 6)):
        assert [(key, b.description) for key, b in node_bindings(app) if b.action == "bell"] == [
            ("x", "Ring"), ("y", "Ring too"), ("z", "Ring too")]
        app.set_keymap({"host.ring": "f5"})
        assert [key for key, b in node_bindings(app) if b.id == "host.ring"] == ["f5"]
