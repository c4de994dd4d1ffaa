"""One search pane: a header, a state line and the hits as an OptionList of literal Text rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...engine import BM25, HYBRID, VECTOR, SearchHit, SearchResponse
from ...frontend.words import kind_name, note_text, score_text
from ...i18n import N_, _, _n
from ..text import snippet_text
from ..wrap import BrokenLines

MODE_TITLES: dict[str, str] = {BM25: "BM25", VECTOR: N_("Vector"), HYBRID: N_("Hybrid")}
STAGE_LABELS = {"bm25": "bm25", "vector": N_("cosine"), "fusion": N_("fusion"), "rerank": N_("rerank")}


def stage_score(hit: SearchHit, stage: str) -> tuple[str, float]:
    """The score that ranked this pane (BM25, cosine or fusion), falling back to the final score."""
    value = hit.scores.get(stage)
    if value is None:
        return _("score"), float(hit.score)
    return _(STAGE_LABELS.get(stage, stage)), float(value)


def hit_row(hit: SearchHit, cells: int = 150, *, stage: str = "", also_in: list[str] | None = None) -> Text:
    """Citation label, title, the ranking stage's score, byte range, other panes with this chunk, snippet."""
    row = Text()
    row.append(f"[{hit.citation}]", style="bold magenta")
    row.append(" ")
    row.append(hit.title, style="bold")
    row.append("\n")
    label, value = stage_score(hit, stage) if stage else (_("score"), float(hit.score))
    row.append(f"{label} {score_text(value)}", style="cyan")
    row.append("  " + _("bytes {start}–{end}").format(start=hit.byte_start, end=hit.byte_end), style="dim")
    if hit.kind != "card":
        row.append(f"  {kind_name(hit.kind)}", style="dim")
    if also_in:
        row.append("  " + _("also in") + " ", style="green")
        row.append("+".join(_(MODE_TITLES[m]) for m in also_in), style="bold green")
    row.append("\n")
    row.append_text(snippet_text(hit.text, cells=cells, spans=hit.spans))
    return row


def chunk_key(hit: SearchHit) -> tuple[str, int, str]:
    return (hit.record_id, hit.revision, hit.chunk_hash)


class ResultsPane(Vertical):
    """Results of one search mode."""

    @dataclass(eq=False)
    class HitChosen(Message):
        pane: ResultsPane
        hit: SearchHit
        terms: list[str]

    def __init__(self, mode: str, **kwargs: Any) -> None:  # Vertical's own keyword arguments
        super().__init__(id=f"pane-{mode}", classes="pane", **kwargs)
        self.mode = mode
        self.hits: list[SearchHit] = []
        self.terms: list[str] = []
        self.stage = ""
        self.shared: dict[int, list[str]] = {}  # row → other panes holding the same chunk
        self.shown = False  # showing results or an error (not idle, busy or waiting)
        self._rows_width = 0  # the width the rows were built for

    def compose(self) -> ComposeResult:
        yield Static(Text(_(MODE_TITLES.get(self.mode, self.mode)), style="bold"), classes="pane-title")
        yield Static(Text(_("Type a query and press enter."), style="dim"), classes="pane-state")
        yield OptionList(markup=False, classes="pane-hits")

    @property
    def state(self) -> Static:
        return self.query_one(".pane-state", Static)

    @property
    def option_list(self) -> OptionList:
        return self.query_one(".pane-hits", OptionList)

    def set_idle(self, message: str) -> None:
        """No query: no rows, one line saying what to do."""
        self.shown = False
        self.option_list.loading = False
        self._clear_hits()
        self.state.update(BrokenLines(Text(message, style="dim")))

    def set_busy(self) -> None:
        self.shown = False
        self.state.update(Text(_("Searching…"), style="italic"))
        self.option_list.loading = True

    def set_progress(self, message: str) -> None:
        """On-demand embedding inside this pane's search."""
        self.state.update(BrokenLines(Text(message, style="italic")))

    def _clear_hits(self) -> None:
        """No rows: the hits, their "also in" tags and the list go together (a tag left behind
        for a row that is gone made the next redraw index past the end of the list)."""
        self.hits = []
        self.shared = {}
        self.option_list.clear_options()

    def set_waiting(self, message: str) -> None:
        """Waiting for the background embedding before searching (old hits belong to another query)."""
        self.shown = False
        self._clear_hits()
        self.option_list.loading = True
        self.state.update(BrokenLines(Text(message, style="italic")))

    def set_hint(self, message: str) -> None:
        """One short line instead of results (e.g. no model installed for this pane)."""
        self.shown = True
        self.option_list.loading = False
        self._clear_hits()
        self.state.update(BrokenLines(Text(message, style="italic")))

    def set_error(self, message: str) -> None:
        self.shown = True
        self.option_list.loading = False
        self._clear_hits()
        self.state.update(BrokenLines(Text(message, style="bold red")))

    def set_results(self, response: SearchResponse, seconds: float, *, stage: str = "", note: str = "") -> None:
        self.shown = True
        self.option_list.loading = False
        self.hits = list(response.results)
        self.terms = list(response.terms)
        self.stage = stage
        self.shared = {}
        options = self.option_list
        options.clear_options()
        self._rows_width = self.size.width
        options.add_options([Option(BrokenLines(self.row(n)), id=f"{self.mode}-{n}") for n in range(len(self.hits))])
        count = len(self.hits)
        label = _n("{n} result · {ms:.0f} ms", "{n} results · {ms:.0f} ms", count).format(n=count, ms=seconds * 1000)
        if not count:
            label = _("No match · {ms:.0f} ms").format(ms=seconds * 1000)
        state = Text(label, style="dim")
        for line in ([note] if note else []) + [note_text(n) for n in response.notes]:
            state.append(f"\n{line}", style="yellow")
        self.state.update(state)
        if count:
            options.highlighted = 0

    def row(self, n: int) -> Text:
        # about three lines of snippet, whatever the pane's width (80 columns give ~25 per pane)
        cells = max(48, (self.size.width - 6) * 3) if self.size.width else 150
        return hit_row(self.hits[n], min(cells, 150), stage=self.stage, also_in=self.shared.get(n))

    def on_resize(self) -> None:
        """A pane shown later (one pane at a time on a narrow terminal) or resized: the rows'
        snippets follow its width."""
        if self.hits and self.size.width and self.size.width != self._rows_width:
            self._rows_width = self.size.width
            for n in range(min(len(self.hits), self.option_list.option_count)):
                self.option_list.replace_option_prompt_at_index(n, BrokenLines(self.row(n)))

    def chunk_keys(self) -> list[tuple[str, int, str]]:
        return [chunk_key(hit) for hit in self.hits] if self.shown else []

    def mark_shared(self, found: dict[tuple[str, int, str], list[str]]) -> None:
        """Show on each row which other panes found the same chunk; redraw only rows that changed."""
        shared = {n: [m for m in found.get(chunk_key(hit), []) if m != self.mode] for n, hit in enumerate(self.hits)}
        shared = {n: modes for n, modes in shared.items() if modes}
        if shared == self.shared:
            return
        changed = {n for n in set(shared) | set(self.shared) if shared.get(n) != self.shared.get(n)}
        self.shared = shared
        for n in sorted(changed):
            if n >= min(len(self.hits), self.option_list.option_count):
                continue  # a row that is no longer shown
            self.option_list.replace_option_prompt_at_index(n, BrokenLines(self.row(n)))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if 0 <= event.option_index < len(self.hits):
            self.post_message(self.HitChosen(self, self.hits[event.option_index], self.terms))
