"""One search pane: a header, a state line and the hits as an OptionList of literal Text rows."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...engine import SearchHit, SearchResponse
from ..text import snippet_text

MODE_TITLES = {"bm25": "BM25", "vector": "Vector", "hybrid": "Hybrid"}


def hit_row(hit: SearchHit, cells: int = 150) -> Text:
    """Citation label, title, score, byte range, then a highlighted snippet."""
    row = Text()
    row.append(f"[{hit.citation}]", style="bold magenta")
    row.append(" ")
    row.append(hit.title, style="bold")
    row.append("\n")
    row.append(f"score {hit.score:.4f}", style="cyan")
    row.append(f"  bytes {hit.byte_start}–{hit.byte_end}", style="dim")
    if hit.kind != "card":
        row.append(f"  {hit.kind}", style="dim")
    row.append("\n")
    row.append_text(snippet_text(hit.text, cells=cells, spans=hit.spans))
    return row


class ResultsPane(Vertical):
    """Results of one search mode."""

    class HitChosen(Message):
        def __init__(self, pane: ResultsPane, hit: SearchHit, terms: list[str]) -> None:
            super().__init__()
            self.pane = pane
            self.hit = hit
            self.terms = terms

    def __init__(self, mode: str, **kwargs: Any) -> None:  # Vertical's own keyword arguments
        super().__init__(id=f"pane-{mode}", classes="pane", **kwargs)
        self.mode = mode
        self.hits: list[SearchHit] = []
        self.terms: list[str] = []
        self.shown = False  # showing results or an error (not idle, busy or waiting)

    def compose(self) -> ComposeResult:
        yield Static(Text(MODE_TITLES.get(self.mode, self.mode), style="bold"), classes="pane-title")
        yield Static(Text("Type a query and press enter.", style="dim"), classes="pane-state")
        yield OptionList(markup=False, classes="pane-hits")

    @property
    def state(self) -> Static:
        return self.query_one(".pane-state", Static)

    @property
    def option_list(self) -> OptionList:
        return self.query_one(".pane-hits", OptionList)

    def set_busy(self) -> None:
        self.shown = False
        self.state.update(Text("Searching…", style="italic"))
        self.option_list.loading = True

    def set_progress(self, message: str) -> None:
        """On-demand embedding inside this pane's search."""
        self.state.update(Text(message, style="italic"))

    def set_waiting(self, message: str) -> None:
        """Waiting for the background embedding before searching (old hits belong to another query)."""
        self.shown = False
        self.hits = []
        self.option_list.clear_options()
        self.option_list.loading = True
        self.state.update(Text(message, style="italic"))

    def set_error(self, message: str) -> None:
        self.shown = True
        self.option_list.loading = False
        self.hits = []
        self.option_list.clear_options()
        self.state.update(Text(message, style="bold red"))

    def set_results(self, response: SearchResponse, seconds: float) -> None:
        self.shown = True
        self.option_list.loading = False
        self.hits = list(response.results)
        self.terms = list(response.terms)
        options = self.option_list
        options.clear_options()
        options.add_options([Option(hit_row(hit), id=f"{self.mode}-{n}") for n, hit in enumerate(self.hits)])
        count = len(self.hits)
        label = f"{count} result{'s' if count != 1 else ''} · {seconds * 1000:.0f} ms"
        if not count:
            label = f"No match · {seconds * 1000:.0f} ms"
        state = Text(label, style="dim")
        for note in response.notes:
            state.append("\n" + note, style="yellow")
        self.state.update(state)
        if count:
            options.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if 0 <= event.option_index < len(self.hits):
            self.post_message(self.HitChosen(self, self.hits[event.option_index], self.terms))
