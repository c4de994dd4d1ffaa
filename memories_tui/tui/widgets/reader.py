"""The record reader: a header, then the body as rendered Markdown or as raw text.

Markdown is parsed by Textual's Markdown widget, which builds `Content` from the parse tree and
never reads the text as Textual markup: `[b]`, `[S1]` or `[@click=app.quit]` show literally.
Links are not opened on click (`open_links=False`); a click only names the target. Very long
bodies are shown raw: the Markdown widget mounts one widget per block.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static

from ...i18n import _
from ..wrap import BrokenLines

MARKDOWN_MAX_CHARS = 64_000  # above this the reader shows raw text (one widget per block gets slow)
WRAP_MAX_CHARS = 20_000  # raw text up to this size is broken into lines by wrap.py at every redraw


class RecordReader(VerticalScroll):
    """Shows one record; `raw` switches between rendered Markdown and the literal text."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.raw = False
        self.body = ""
        self.rendered_body: str | None = None  # what the Markdown widget currently holds

    def compose(self) -> ComposeResult:
        yield Static(id="reader-meta")
        markdown = Markdown(id="reader-markdown", open_links=False)
        markdown.display = False  # hidden from the start: a query in on_mount can race a closing screen
        yield markdown
        yield Static(id="reader-body")

    def show_message(self, message: Text) -> None:
        self.body = ""
        self.query_one("#reader-meta", Static).update(message)
        self._show_body(Text(""), markdown=False)

    def show(self, meta: Text, body: str, *, literal: Text | None = None) -> None:
        """`meta` above `body`; `literal` replaces the body for records that are not text (assets)."""
        self.body = body
        self.query_one("#reader-meta", Static).update(meta)
        if literal is not None:
            self._show_body(literal, markdown=False)
        elif self.raw or len(body) > MARKDOWN_MAX_CHARS:
            # Chinese punctuation never starts a line (wrap.py); a very long body is left to Textual
            self._show_body(BrokenLines(Text(body)) if len(body) <= WRAP_MAX_CHARS else Text(body), markdown=False)
        else:
            self._show_body(None, markdown=True)
        self.scroll_home(animate=False)

    @property
    def showing_markdown(self) -> bool:
        return bool(self.query_one("#reader-markdown", Markdown).display)

    def _show_body(self, text: Text | BrokenLines | None, *, markdown: bool) -> None:
        view = self.query_one("#reader-markdown", Markdown)
        raw = self.query_one("#reader-body", Static)
        view.display = markdown
        raw.display = not markdown
        if markdown:
            raw.update("")
            if self.rendered_body != self.body:
                self.rendered_body = self.body
                view.update(self.body)
        else:
            raw.update(text if text is not None else Text(""))

    def toggle_raw(self) -> bool:
        """Switch raw ⇄ Markdown for this and later records; returns the new `raw`."""
        self.raw = not self.raw
        return self.raw

    @on(Markdown.LinkClicked)
    def _link(self, event: Markdown.LinkClicked) -> None:
        event.stop()
        self.notify(event.href, title=_("Link (not opened)"), timeout=6, markup=False)
