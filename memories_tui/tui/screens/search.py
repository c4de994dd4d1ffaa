"""Search: one query, three panes side by side (BM25 | Vector | Hybrid), and chunk detail."""

from __future__ import annotations

import time

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header, Input, Select, Static, TextArea

from ...errors import MemoriesError
from ..messages import SearchDone
from ..text import byte_range_to_chars
from ..widgets.results import ResultsPane
from .base import VaultScreen

MODES = ("bm25", "vector", "hybrid")
MATCH_MODES = [("any term", "any"), ("all terms", "all"), ("phrase", "phrase")]


class SearchScreen(VaultScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="back"),
        Binding("ctrl+f", "focus_query", "Query", id="search.query"),
    ]

    def __init__(self, vault_id: str, limit: int = 10) -> None:
        super().__init__(vault_id)
        self.limit = limit
        self.generation = dict.fromkeys(MODES, 0)

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="search"):
            with Horizontal(id="search-row"):
                yield Input(id="query", placeholder="Search (English, 中文, or both) and press enter")
                yield Select(MATCH_MODES, value="any", allow_blank=False, id="match-mode")
            with Horizontal(id="panes"):
                for mode in MODES:
                    yield ResultsPane(mode)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = self.engine.vault_name(self.vault_id)
        self.query_one("#query", Input).focus()

    def action_back(self) -> None:
        self.dismiss()

    def action_focus_query(self) -> None:
        self.query_one("#query", Input).focus()

    @on(Input.Submitted, "#query")
    def _submitted(self) -> None:
        self.run_search()

    @on(Select.Changed, "#match-mode")
    def _match_changed(self) -> None:
        if self.query_one("#query", Input).value.strip():
            self.run_search()

    def run_search(self, query: str | None = None) -> None:
        query = self.query_one("#query", Input).value if query is None else query
        if not query.strip():
            return
        match_mode = str(self.query_one("#match-mode", Select).value)
        epoch = self.epoch()
        for mode in MODES:
            self.generation[mode] += 1
            self.query_one(f"#pane-{mode}", ResultsPane).set_busy()
        self.search_bm25(query, match_mode, self.generation["bm25"], epoch)
        self.search_vector(query, match_mode, self.generation["vector"], epoch)
        self.search_hybrid(query, match_mode, self.generation["hybrid"], epoch)

    # one exclusive worker group per pane, so BM25 shows at once even when vector is slow or failing
    @work(thread=True, exclusive=True, group="search-bm25", exit_on_error=False)
    def search_bm25(self, query: str, match_mode: str, generation: int, epoch: int) -> None:
        self._search("bm25", query, match_mode, generation, epoch)

    @work(thread=True, exclusive=True, group="search-vector", exit_on_error=False)
    def search_vector(self, query: str, match_mode: str, generation: int, epoch: int) -> None:
        self._search("vector", query, match_mode, generation, epoch)

    @work(thread=True, exclusive=True, group="search-hybrid", exit_on_error=False)
    def search_hybrid(self, query: str, match_mode: str, generation: int, epoch: int) -> None:
        self._search("hybrid", query, match_mode, generation, epoch)

    def _search(self, mode: str, query: str, match_mode: str, generation: int, epoch: int) -> None:
        started = time.perf_counter()
        try:
            response = self.engine.search(self.vault_id, query, mode=mode, match_mode=match_mode, limit=self.limit)
        except MemoriesError as exc:
            self.post_if_live(SearchDone(epoch, mode=mode, generation=generation, error=exc.message,
                                         seconds=time.perf_counter() - started))
            return
        except Exception as exc:  # keep one pane's bug from hiding the other panes' results
            self.post_if_live(SearchDone(epoch, mode=mode, generation=generation,
                                         error=f"Internal error in {mode} search: {type(exc).__name__}: {exc}",
                                         seconds=time.perf_counter() - started))
            return
        self.post_if_live(SearchDone(epoch, mode=mode, generation=generation, response=response,
                                     seconds=time.perf_counter() - started))

    def on_search_done(self, message: SearchDone) -> None:
        if not self.epoch_live(message.epoch) or message.generation != self.generation.get(message.mode):
            return  # locked meanwhile, or a newer query superseded this one
        pane = self.query_one(f"#pane-{message.mode}", ResultsPane)
        if message.error is not None:
            pane.set_error(message.error)
        else:
            pane.set_results(message.response, message.seconds)

    @on(ResultsPane.HitChosen)
    def _hit_chosen(self, event: ResultsPane.HitChosen) -> None:
        self.app.push_screen(ChunkDetailScreen(self.vault_id, event.hit, event.terms, event.pane.mode))


class ChunkDetailScreen(VaultScreen):
    """The chunk inside its document: the record body with the chunk's byte range selected."""

    BINDINGS = [Binding("escape", "back", "Back", id="back")]

    def __init__(self, vault_id: str, hit: object, terms: list[str], mode: str = "") -> None:
        super().__init__(vault_id)
        self.hit = hit
        self.terms = terms
        self.mode = mode
        self.char_range = (0, 0)

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="detail"):
            yield Static(id="detail-meta")
            yield TextArea(id="detail-body", read_only=True, soft_wrap=True, show_line_numbers=True)
        yield Footer()

    def on_mount(self) -> None:
        hit = self.hit
        meta = self.query_one("#detail-meta", Static)
        area = self.query_one("#detail-body", TextArea)
        head = Text()
        head.append(f"[{hit.citation}]", style="bold magenta")  # type: ignore[attr-defined]
        head.append(f" {hit.title}", style="bold")  # type: ignore[attr-defined]
        head.append(f"\n{self.mode} · score {hit.score:.4f} · record {hit.asset_id} rev {hit.revision}"  # type: ignore[attr-defined]
                    f" · bytes {hit.byte_start}–{hit.byte_end}"  # type: ignore[attr-defined]
                    f" · chunk {hit.chunk_hash[:12]}", style="dim")  # type: ignore[attr-defined]
        try:
            record = self.engine.read_record(self.vault_id, hit.asset_id, hit.revision)  # type: ignore[attr-defined]
        except MemoriesError as exc:
            head.append(f"\n{exc.message}", style="bold red")
            meta.update(head)
            area.text = hit.text  # type: ignore[attr-defined]
            return
        start, end = byte_range_to_chars(record.body, hit.byte_start, hit.byte_end)  # type: ignore[attr-defined]
        self.char_range = (start, end)
        head.append(f" · chars {start}–{end} (selected below)", style="dim")
        meta.update(head)
        area.load_text(record.body)
        doc = area.document
        area.selection = self._selection(doc, start, end)
        area.focus()
        self.call_after_refresh(self._scroll_to_chunk)

    @staticmethod
    def _selection(doc: object, start: int, end: int) -> object:
        from textual.widgets.text_area import Selection

        return Selection(doc.get_location_from_index(start), doc.get_location_from_index(end))  # type: ignore[attr-defined]

    def _scroll_to_chunk(self) -> None:
        area = self.query_one("#detail-body", TextArea)
        start_loc = area.document.get_location_from_index(self.char_range[0])
        area.scroll_to(y=max(0, area.wrapped_document.location_to_offset(start_loc).y - 1), animate=False)

    def action_back(self) -> None:
        self.dismiss()
