"""The only place the TUI reaches into Textual's private API, for two things it has no public
switch for. tests/tui/test_textual_adapter.py fails when a Textual upgrade changes any name
used here, and checks no other TUI module uses private Textual names.

- Uncaught errors: Textual prints a traceback with every frame's local variables (passphrases,
  note text) and has one hook for such errors, `App._handle_exception`. `SafeExceptions`
  hands the error to the app's public `replace_uncaught` first, and drops the errors of a
  screen still mounting when the app closes (`MessagePump._pre_process`, see `closing_mount`).
- The keys bound on one screen or the app (for the help): Textual's public `active_bindings`
  keeps one binding per key across the focus chain, the help wants every binding of a node
  with the keymap applied: `node._bindings` and `app._keymap`.
- The footer's keys in the reader's language: a binding's description is English marked for
  the catalog and translated where it is shown; the footer's key widget (`FooterKey`) is not
  public, `RelabelledFooter` relabels it as the footer makes it.
- Extra highlights in a TextArea: highlights come only from tree-sitter syntax queries. A
  `HighlightArea` adds its own spans (per-line UTF-8 byte columns, as Textual keeps them)
  under one theme style, through `_build_highlight_map`, `_highlights` and `_set_theme`.
- Double-width characters in layered widgets (notifications, tooltips): the compositor cuts
  every screen line at the edges of all widgets on it, also the ones hidden below a toast, and
  a character split by such a cut is drawn as two blanks ("介面語言" read "␣␣␣語言" over the
  reader). `WideCharCompositor` keeps such a character whole by joining the two pieces
  (`Compositor._render_chops`, `render_partial_update`); `screen.Compositor` is replaced so
  every screen, Textual's own too, uses it.
- Lines of text with double-width characters: Textual's `Content` divides a line with
  `rich._wrap.divide_line`, which folds a run of CJK characters at any cell, so a Markdown
  paragraph could start a line with "，" or cut "hybrid" into "hybri" and "d". `textual.content`'s
  `divide_line` is replaced by `cjk_divide_line` (the rules of wrap.py) for such lines.
- The key panel (palette → Keys) writes each binding's description as it is declared: our
  descriptions are English marked for the catalog. `WordedHelpPanel` → `WordedKeyPanel` →
  `WordedBindingsTable` relabels the table's description cells (Rich's `Column._cells`).
- The palette's "No matches found" is a literal in `CommandPalette._start_no_matches_countdown`:
  `WordedPalette` shows `no_matches_text()` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from rich.align import Align
from rich.cells import cell_len
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import content as textual_content
from textual import screen as textual_screen
from textual._compositor import ChopsUpdate, Compositor
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import CommandList, CommandPalette
from textual.dom import DOMNode
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import Footer, HelpPanel, KeyPanel, Markdown, TextArea
from textual.widgets._footer import FooterKey
from textual.widgets._key_panel import BindingsTable
from textual.widgets.option_list import Option

from .wrap import line_ranges

EXTRA_HIGHLIGHT = "memories.term"  # the theme style name of a HighlightArea's own spans


def node_bindings(node: DOMNode) -> Iterator[tuple[str, Binding]]:
    """(key, binding) for every binding of `node` itself, in the order they were declared, with
    the app's keymap applied (as Textual applies it to a copy while it routes a key)."""
    bindings = node._bindings.copy()
    if node.app._keymap:
        bindings.apply_keymap(node.app._keymap)
    for key, key_bindings in bindings.key_to_bindings.items():
        for binding in key_bindings:
            yield key, binding


class SafeExceptions(App):
    """Mixed into the app (before App)."""

    def replace_uncaught(self, error: Exception) -> Exception:
        """The exception Textual goes on with (and prints) instead of `error`."""
        return error

    def _handle_exception(self, error: Exception) -> None:
        if self.closing_mount(error):
            return
        super()._handle_exception(self.replace_uncaught(error))

    def closing_mount(self, error: BaseException) -> bool:
        """True for an error raised by a node's compose or mount handlers after the app began
        to close. Textual closes the widgets of a screen pushed just before a quit before that
        screen's mount handlers run, and resets their reactives: a query there for a widget the
        screen composed finds nothing, a Select reads blank, in our screens and in Textual's own
        widgets alike. The app ends anyway; stopping it "after an error" would report a bug the
        user never met. Errors of a running app, or of other handlers while it closes, stay."""
        frame = error.__traceback__
        return not self.is_running and frame is not None and frame.tb_frame.f_code.co_name == "_pre_process"


class RelabelledFooter(Footer):
    """A Footer whose keys show `relabel(description)` and `relabel(tooltip)`."""

    def relabel(self, text: str) -> str:
        return text

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                if widget.description:
                    widget.description = self.relabel(widget.description)
                if isinstance(widget.tooltip, str) and widget.tooltip:
                    widget.tooltip = self.relabel(widget.tooltip)
            yield widget


class HighlightArea(TextArea):
    """A TextArea that paints `extra_spans()` (row, start byte, end byte) in `extra_style`."""

    extra_style: Style = Style()

    def extra_spans(self) -> list[tuple[int, int, int]]:
        return []

    def rebuild_highlights(self) -> None:
        """Call after `extra_spans()` changed."""
        self._build_highlight_map()
        self.refresh()

    def spans_with_style(self, row: int, name: str = EXTRA_HIGHLIGHT) -> list[tuple[int, int | None]]:
        """The byte spans of `row` painted with the style `name` (what the area draws)."""
        return [(a, b) for a, b, style in self._highlights[row] if style == name]

    def _set_theme(self, theme: str) -> None:
        super()._set_theme(theme)
        if self._theme is not None:  # a copy: the builtin theme objects share their syntax_styles dict
            self._theme.syntax_styles = {**self._theme.syntax_styles, EXTRA_HIGHLIGHT: self.extra_style}

    def _build_highlight_map(self) -> None:
        super()._build_highlight_map()
        for row, start, end in self.extra_spans():
            self._highlights[row].append((start, end, EXTRA_HIGHLIGHT))


def second_halves(strip: Strip) -> set[int]:
    """The cells of `strip` that hold the right half of a double-width character."""
    found: set[int] = set()
    position = 0
    for text, _style, control in strip:
        if control:
            continue
        if len(text) == cell_len(text):
            position += len(text)
            continue
        for char in text:
            width = cell_len(char)
            if width == 2:
                found.add(position + 1)
            position += width
    return found


class WideCharCompositor(Compositor):
    """Textual's compositor, except that a cut through a double-width character of the widget
    drawn on top is dropped (its two pieces become one chop), so the character is drawn whole."""

    def _render_chops(self, crop: Region,
                      is_rendered_line: Callable[[int], bool]) -> Sequence[Mapping[int, Strip]]:
        cuts = self.cuts
        chops: list[dict[int, Strip | None]] = [dict.fromkeys(cut_set[:-1]) for cut_set in cuts]
        joined: dict[int, set[int]] = {}  # line → cuts dropped there
        for region, clip, strips in self._get_renders(crop):
            render_region = region.intersection(clip)
            render_x = render_region.x
            first_cut, last_cut = render_region.column_span
            for y, strip in zip(render_region.line_range, strips, strict=False):
                if not is_rendered_line(y):
                    continue
                line, dropped = chops[y], joined.setdefault(y, set())
                region_cuts = [cut for cut in cuts[y] if last_cut >= cut >= first_cut]
                halves = second_halves(strip) if strip.cell_length != len(strip.text) else set()
                kept = [region_cuts[0]] if region_cuts else []
                for cut in region_cuts[1:]:
                    previous = kept[-1]
                    if (cut - render_x in halves and cut != last_cut and line.get(cut, 0) is None
                            and cut not in dropped and line.get(previous, 0) is None and previous not in dropped):
                        dropped.add(cut)  # drawn as part of the previous piece
                    else:
                        kept.append(cut)
                for cut, piece in zip(kept, strip.divide([cut - render_x for cut in kept[1:]]), strict=False):
                    if cut not in dropped and line.get(cut) is None:
                        line[cut] = piece
        for y, dropped in joined.items():
            if dropped:
                chops[y] = {cut: piece for cut, piece in chops[y].items() if cut not in dropped}
        return chops  # type: ignore[return-value]

    def render_partial_update(self) -> ChopsUpdate | None:
        update_regions = self._dirty_regions.copy()
        self._dirty_regions.clear()
        if not update_regions:
            return None
        crop = Region.from_union(list(update_regions)).intersection(self.size.region)
        spans = list(self._regions_to_spans(update_regions))
        chops = self._render_chops(crop, {y for y, _, _ in spans}.__contains__)
        width = self.size.width
        chop_ends = [[*list(line)[1:], width] for line in chops]  # the ends of the chops left after joins
        return ChopsUpdate(chops, spans, chop_ends)


textual_screen.Compositor = WideCharCompositor  # type: ignore[misc]


class WordedPalette(CommandPalette):
    """Textual's command palette saying `no_matches_text()` when nothing matches."""

    def no_matches_text(self) -> str:
        return "No matches found"

    def _start_no_matches_countdown(self, search_value: str) -> None:
        self._stop_no_matches_countdown()

        def show_no_matches() -> None:  # as Textual's, with the text replaced
            if search_value:
                self.query_one(CommandList).add_option(Option(
                    Align.center(Text(self.no_matches_text(), style="not bold")), disabled=True, id=self._NO_MATCHES))
                self._list_visible = True
            else:
                self._list_visible = False

        self._no_matches_timer = self.set_timer(self._NO_MATCHES_COUNTDOWN, show_no_matches)


rich_divide_line = textual_content.divide_line


def cjk_divide_line(text: str, width: int, fold: bool = True) -> list[int]:
    """Where to break one line of text: rich's rule, or for a line with double-width
    characters the CJK rules (no line starts with closing punctuation, Latin words whole)."""
    if not fold or width < 2 or cell_len(text) == len(text):
        return rich_divide_line(text, width, fold)
    return [start for start, _end in line_ranges(text, width)[1:]]


textual_content.divide_line = cjk_divide_line


class WordedBindingsTable(BindingsTable):
    """Textual's key table with every description and tooltip passed through `relabel`."""

    def relabel(self, text: str) -> str:
        return text

    def render_bindings_table(self) -> Table:
        table = super().render_bindings_table()
        style = self.get_component_rich_style("bindings-table--description")
        worded: dict[str, Text] = {}
        for _namespace, binding, _enabled, _tooltip in self.screen.active_bindings.values():
            plain = Text.from_markup(binding.description).plain
            shown = Text(self.relabel(binding.description), style=style, end="")
            if binding.tooltip:
                plain += (" " if plain else "") + binding.tooltip
                shown.append((" " if binding.description else "") + self.relabel(binding.tooltip), "dim")
            worded[plain] = shown
        if len(table.columns) > 1:
            column = table.columns[1]
            column._cells = [worded.get(cell.plain, cell) if isinstance(cell, Text) else cell for cell in column._cells]
        return table


class WordedKeyPanel(KeyPanel):
    table_class: type[WordedBindingsTable] = WordedBindingsTable

    def compose(self) -> ComposeResult:
        yield self.table_class(shrink=True, expand=False)


class WordedHelpPanel(HelpPanel):
    """Textual's help panel (palette → Keys) with a `WordedKeyPanel`."""

    key_panel_class: type[WordedKeyPanel] = WordedKeyPanel

    def compose(self) -> ComposeResult:
        yield Markdown(id="widget-help")
        yield self.key_panel_class(id="keys-help")
