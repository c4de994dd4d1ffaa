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
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.style import Style
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.dom import DOMNode
from textual.widgets import Footer, TextArea
from textual.widgets._footer import FooterKey

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
