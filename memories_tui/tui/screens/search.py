"""Search: one query, three panes side by side (BM25 | Vector | Hybrid), and chunk detail.

Vector and hybrid panes pass a cancel Event to the engine (set when a newer query supersedes
them) and show on-demand embedding progress. While the app's background embedding runs they
wait for it instead of embedding the same chunks again, and re-run when it ends.
"""

from __future__ import annotations

import threading
import time

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Footer, Input, Select, Static, TextArea
from textual.widgets.text_area import Document, Selection

from ...engine import MODES, EmbedProgress, Mode, Query, SearchHit, char_to_byte, parse_query
from ...errors import MemoriesError, ModelNotInstalledError
from ..messages import SearchDone, SearchProgress
from ..text import HIGHLIGHT, byte_range_to_chars, human_eta, match_spans
from ..widgets.embed_status import EmbedState, EmbedStatus, progress_text
from ..widgets.header import AppHeader
from ..widgets.results import STAGE_LABELS, ResultsPane
from .base import VaultScreen

clock = time.perf_counter  # the pane's "N ms"; snapshot tests pin it
SEMANTIC: tuple[Mode, ...] = ("vector", "hybrid")
MATCH_MODES = [("any term", "any"), ("all terms", "all"), ("phrase", "phrase")]
STAGES = {"bm25": "bm25", "vector": "vector", "hybrid": "fusion"}  # the score that ranks each pane
NO_MODEL_VECTOR = "Needs the embedding model: F2 installs it (about 200 MiB, once)."
NO_MODEL_HYBRID = "Keyword results: no model yet (F2 installs it)."
EMPTY_QUERY = "The query is empty: type words to search for and press enter."


class SharedQuery:
    """One query typed once, parsed once for all three panes: the first pane worker to need
    it parses it (off the UI thread: the first parse loads the segmenter); the others reuse
    that parse, or its error."""

    def __init__(self, text: str, match_mode: str, limit: int) -> None:
        self.text, self.match_mode, self.limit = text, match_mode, limit
        self._lock = threading.Lock()
        self._parsed: Query | None = None
        self._error: MemoriesError | None = None

    def for_mode(self, mode: str) -> Query:
        with self._lock:
            if self._parsed is None and self._error is None:
                try:
                    self._parsed = parse_query(self.text, mode=mode, match_mode=self.match_mode, limit=self.limit)
                except MemoriesError as exc:
                    self._error = exc
            if self._error is not None:
                raise self._error
            assert self._parsed is not None
            return self._parsed.with_mode(mode)


class SearchScreen(VaultScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="back"),
        Binding("ctrl+f", "focus_query", "Query", id="search.query"),
        Binding("f2", "app.open_model", "Model", tooltip="Install the embedding model for vector search",
                id="search.model"),
    ]

    HELP_TITLE = "Search"
    GUIDE = ("Type a query (English, 中文 or both) and press enter: BM25 (keywords), Vector (meaning) and "
             "Hybrid (both, fused) run side by side. To open a result: tab into a pane, ↑/↓ pick a row, "
             "enter shows that chunk inside its document with the matched terms highlighted (esc comes "
             "back). The selector beside the query switches between any term, all terms and phrase. "
             "Each row shows the score that ranked its pane (bm25, cosine, fusion) and, in green, the other "
             "panes that found the same passage. Without the embedding model Hybrid shows keyword results; "
             "F2 installs the model.")

    def __init__(self, vault_id: str, limit: int = 10) -> None:
        super().__init__(vault_id)
        self.limit = limit
        self.generation: dict[str, int] = dict.fromkeys(MODES, 0)
        self.cancels: dict[str, threading.Event | None] = dict.fromkeys(MODES)
        self.last_query: tuple[str, str] | None = None  # (query, match mode) of the latest search
        self.waiting: set[str] = set()  # panes waiting for the background embedding

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Vertical(id="search"):
            with Horizontal(id="search-row"):
                yield Input(id="query", placeholder="Search (English, 中文, or both) and press enter")
                yield Select(MATCH_MODES, value="any", allow_blank=False, id="match-mode")
            with Horizontal(id="panes"):
                for mode in MODES:
                    yield ResultsPane(mode)
            yield EmbedStatus(id="search-embed-status")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = self.engine.vault_name(self.vault_id)
        self.query_one("#query", Input).focus()
        self.watch(self.app, "embed_state", self._embed_state_changed, init=False)

    def on_unmount(self) -> None:
        for event in self.cancels.values():
            if event is not None:
                event.set()

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

    def pane(self, mode: str) -> ResultsPane:
        return self.query_one(f"#pane-{mode}", ResultsPane)

    def focus_order(self) -> list[Widget]:
        """Tab from the query goes to the first results pane (as F1 says), then the next panes,
        then the match-mode selector."""
        return [self.query_one("#query", Input), *(self.pane(mode).option_list for mode in MODES),
                self.query_one("#match-mode", Select)]

    def run_search(self, query: str | None = None, modes: tuple[Mode, ...] = MODES) -> None:
        query = self.query_one("#query", Input).value if query is None else query
        if not query.strip():
            self.clear_results()
            return
        match_mode = str(self.query_one("#match-mode", Select).value)
        self.last_query = (query, match_mode)
        epoch = self.epoch()
        wait = self.memories.embedding_active(self.vault_id)
        shared = SharedQuery(query, match_mode, self.limit)
        for mode in modes:
            self.generation[mode] += 1
            old = self.cancels[mode]
            if old is not None:
                old.set()  # superseded: stop its on-demand embedding between batches
            self.cancels[mode] = None
            self.waiting.discard(mode)
            pane = self.pane(mode)
            if mode in SEMANTIC and wait:
                self.waiting.add(mode)
                pane.set_waiting(self._waiting_text(self.memories.embed_state))
                continue
            pane.set_busy()
            cancel = threading.Event() if mode in SEMANTIC else None
            self.cancels[mode] = cancel
            worker = {"bm25": self.search_bm25, "vector": self.search_vector, "hybrid": self.search_hybrid}[mode]
            worker(shared, self.generation[mode], epoch, cancel)

    def clear_results(self) -> None:
        """Enter on an empty query: no results (those shown belonged to another query), and why."""
        self.last_query = None
        for mode in MODES:
            self.generation[mode] += 1  # a search still running is dropped when it ends
            old = self.cancels[mode]
            if old is not None:
                old.set()
            self.cancels[mode] = None
            self.waiting.discard(mode)
            self.pane(mode).set_idle(EMPTY_QUERY)

    @staticmethod
    def _waiting_text(state: EmbedState) -> str:
        return f"Waiting for the background embedding ({progress_text(state)})"

    def _embed_state_changed(self, state: EmbedState) -> None:
        if state.active:
            for mode in self.waiting:
                self.pane(mode).set_waiting(self._waiting_text(state))

    def embedding_finished(self) -> None:
        """Background embedding ended (or failed): re-run the semantic panes that waited for it
        or show results from before it."""
        if self.last_query is None:
            return
        modes = tuple(m for m in SEMANTIC if m in self.waiting or self.pane(m).shown)
        if modes:
            self.run_search(self.last_query[0], modes)

    # one exclusive worker group per pane, so BM25 shows at once even when vector is slow or failing
    @work(thread=True, exclusive=True, group="search-bm25", exit_on_error=False)
    def search_bm25(self, query: SharedQuery, generation: int, epoch: int, cancel: threading.Event | None) -> None:
        self._search("bm25", query, generation, epoch, cancel)

    @work(thread=True, exclusive=True, group="search-vector", exit_on_error=False)
    def search_vector(self, query: SharedQuery, generation: int, epoch: int, cancel: threading.Event | None) -> None:
        self._search("vector", query, generation, epoch, cancel)

    @work(thread=True, exclusive=True, group="search-hybrid", exit_on_error=False)
    def search_hybrid(self, query: SharedQuery, generation: int, epoch: int, cancel: threading.Event | None) -> None:
        self._search("hybrid", query, generation, epoch, cancel)

    def _search(self, mode: Mode, query: SharedQuery, generation: int, epoch: int,
                cancel: threading.Event | None) -> None:
        started = clock()

        def progress(p: EmbedProgress) -> None:
            if cancel is None or not cancel.is_set():
                self.post_if_live(SearchProgress(epoch, mode=mode, generation=generation, progress=p))

        stage, note = STAGES[mode], ""
        try:
            try:
                response = self.engine.search(self.vault_id, query.for_mode(mode), mode=mode, progress=progress,
                                              cancel=cancel)
            except ModelNotInstalledError:
                if mode == "vector":
                    self.post_if_live(SearchDone(epoch, mode=mode, generation=generation, no_model=True,
                                                 error=NO_MODEL_VECTOR, seconds=clock() - started))
                    return
                # hybrid without a model: keyword results (the same parsed query), and one line saying so
                response = self.engine.search(self.vault_id, query.for_mode("bm25"), mode="bm25")
                stage, note = "bm25", NO_MODEL_HYBRID
        except MemoriesError as exc:
            self.post_if_live(SearchDone(epoch, mode=mode, generation=generation, error=exc.message,
                                         seconds=clock() - started))
            return
        except Exception as exc:  # keep one pane's bug from hiding the other panes' results
            self.post_if_live(SearchDone(epoch, mode=mode, generation=generation, error=self.describe(exc),
                                         seconds=clock() - started))
            return
        self.post_if_live(SearchDone(epoch, mode=mode, generation=generation, response=response,
                                     seconds=clock() - started, stage=stage, note=note))
        if mode == "bm25":
            self.engine.save_indexes()  # a freshly built index, saved off the UI thread: ctrl+l never waits

    def on_search_progress(self, message: SearchProgress) -> None:
        if not self.epoch_live(message.epoch) or message.generation != self.generation.get(message.mode):
            return
        p = message.progress
        self.pane(message.mode).set_progress(
            f"Embedding {p.done:,}/{p.total:,} chunks for this search · ETA {human_eta(p.eta_seconds)}…")

    def on_search_done(self, message: SearchDone) -> None:
        if not self.epoch_live(message.epoch) or message.generation != self.generation.get(message.mode):
            return  # locked meanwhile, or a newer query superseded this one
        self.cancels[message.mode] = None
        pane = self.pane(message.mode)
        if message.no_model:
            pane.set_hint(message.error or NO_MODEL_VECTOR)
        elif message.error is not None:
            pane.set_error(message.error)
        elif message.response is not None:
            pane.set_results(message.response, message.seconds, stage=message.stage, note=message.note)
        self.mark_shared()

    def mark_shared(self) -> None:
        """Tag each row with the other panes that found the same chunk, so the panes are easy to compare."""
        found: dict[tuple[str, int, str], list[str]] = {}
        for mode in MODES:
            for key in self.pane(mode).chunk_keys():
                found.setdefault(key, []).append(mode)
        for mode in MODES:
            self.pane(mode).mark_shared(found)

    @on(ResultsPane.HitChosen)
    def _hit_chosen(self, event: ResultsPane.HitChosen) -> None:
        self.app.push_screen(ChunkDetailScreen(self.vault_id, event.hit, event.terms, event.pane.mode))


def stage_scores(hit: SearchHit) -> Text | None:
    """The scores of the stages that scored this hit, the final one last; None for a hit no
    stage scored (a source opened from an answer): no row of dashes and zeros."""
    scored = [(stage, hit.scores[stage]) for stage in ("bm25", "vector", "fusion", "rerank")
              if hit.scores.get(stage) is not None]
    if not scored:
        return None
    out = Text("scores: ", style="dim")
    for n, (stage, value) in enumerate(scored):
        if n:
            out.append(" · ", style="dim")
        out.append(f"{STAGE_LABELS[stage]} ")
        out.append(f"{value:.4f}", style="cyan")
    out.append(f" · final {hit.score:.4f}", style="bold cyan")
    return out


def _in_word(char: str) -> bool:
    """A letter or digit of a space-separated script (CJK words have no such edges)."""
    return char.isalnum() and ord(char) < 0x2E80


def matched_words(chunk: str, spans: list[tuple[int, int]]) -> Text:
    """How often each matched word occurs in the chunk, as written there ("security ×2, deleted"),
    not the stems the index keeps ("secur, delet")."""
    counts: dict[str, int] = {}
    shown: dict[str, str] = {}
    for a, b in spans:
        while a > 0 and _in_word(chunk[a - 1]):  # a stem match ("Appl") shown as its word ("Apples")
            a -= 1
        while b < len(chunk) and _in_word(chunk[b]):
            b += 1
        word = " ".join(chunk[a:b].split())
        key = word.casefold()
        counts[key] = counts.get(key, 0) + 1
        shown.setdefault(key, word)
    total = len(spans)
    out = Text(f"{total} match{'es' if total != 1 else ''} in the chunk", style=HIGHLIGHT)
    out.append(": " + ", ".join(shown[k] + (f" ×{n}" if n > 1 else "") for k, n in counts.items()), style="dim")
    return out


TERM_HIGHLIGHT = "memories.term"


def _document(area: TextArea) -> Document:
    """The area's document (a plain `Document`: these areas have no syntax highlighting)."""
    doc = area.document
    assert isinstance(doc, Document)
    return doc


class TermTextArea(TextArea):
    """A read-only TextArea that also paints query-term matches over the chunk selection.

    Term spans are character offsets into the text; Textual's highlight map wants per-line
    UTF-8 byte columns and a theme style name, so they are converted here."""

    term_char_spans: list[tuple[int, int]] = []

    def set_term_spans(self, spans: list[tuple[int, int]]) -> None:
        self.term_char_spans = list(spans)
        self._build_highlight_map()
        self.refresh()

    def _set_theme(self, theme: str) -> None:
        super()._set_theme(theme)
        # a copy: the builtin theme objects share their syntax_styles dict
        self._theme.syntax_styles = {**self._theme.syntax_styles, TERM_HIGHLIGHT: Style.parse(HIGHLIGHT)}

    def _build_highlight_map(self) -> None:
        super()._build_highlight_map()
        doc = _document(self)
        for start, end in self.term_char_spans:
            (row0, col0), (row1, col1) = doc.get_location_from_index(start), doc.get_location_from_index(end)
            for row in range(row0, row1 + 1):
                line = doc.get_line(row)
                a = col0 if row == row0 else 0
                b = col1 if row == row1 else len(line)
                if b > a:
                    self._highlights[row].append((char_to_byte(line, a), char_to_byte(line, b), TERM_HIGHLIGHT))


class ChunkDetailScreen(VaultScreen):
    """The chunk inside its document: the record body with the chunk's byte range selected and
    the query terms inside the chunk highlighted."""

    BINDINGS = [Binding("escape", "back", "Back", id="back")]
    HELP_TITLE = "Result in its document"
    GUIDE = ("The whole document, with the result's chunk selected and the query terms in it highlighted. "
             "Arrow keys, page up/down and the mouse scroll; esc goes back to the results.")

    def __init__(self, vault_id: str, hit: SearchHit, terms: list[str], mode: str = "") -> None:
        super().__init__(vault_id)
        self.hit = hit
        self.terms = terms
        self.mode = mode
        self.char_range = (0, 0)
        self.term_matches: list[tuple[int, int]] = []

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Vertical(id="detail"):
            yield Static(id="detail-meta")
            yield TermTextArea(id="detail-body", read_only=True, soft_wrap=True, show_line_numbers=True)
        yield Footer()

    def on_mount(self) -> None:
        hit = self.hit
        meta = self.query_one("#detail-meta", Static)
        area = self.query_one("#detail-body", TermTextArea)
        head = Text()
        head.append(f"[{hit.citation}]", style="bold magenta")
        head.append(f" {hit.title}", style="bold")
        head.append(f"\n{self.mode} · record {hit.asset_id} rev {hit.revision}"
                    f" · bytes {hit.byte_start}–{hit.byte_end} · chunk {hit.chunk_hash[:12]}", style="dim")
        scores = self.score_line()
        if scores is not None:
            head.append("\n")
            head.append_text(scores)
        try:
            record = self.engine.read_record(self.vault_id, hit.asset_id, hit.revision)
        except MemoriesError as exc:
            head.append(f"\n{exc.message}", style="bold red")
            meta.update(head)
            area.text = hit.text
            return
        start, end = byte_range_to_chars(record.body, hit.byte_start, hit.byte_end)
        self.char_range = (start, end)
        chunk = record.body[start:end]
        spans = hit.spans if chunk == hit.text else match_spans(chunk, self.terms)
        self.term_matches = [(start + a, start + b) for a, b in spans]
        head.append(f" · chars {start}–{end} (selected below)", style="dim")
        if spans:
            head.append("\n")
            head.append_text(matched_words(chunk, spans))
        meta.update(head)
        area.load_text(record.body)
        area.set_term_spans(self.term_matches)
        doc = _document(area)
        area.selection = Selection(doc.get_location_from_index(start), doc.get_location_from_index(end))
        area.focus()
        self.call_after_refresh(self._scroll_to_chunk)

    def score_line(self) -> Text | None:
        return stage_scores(self.hit)

    def _scroll_to_chunk(self) -> None:
        area = self.query_one("#detail-body", TextArea)
        start_loc = _document(area).get_location_from_index(self.char_range[0])
        area.scroll_to(y=max(0, area.wrapped_document.location_to_offset(start_loc).y - 1), animate=False)

    def action_back(self) -> None:
        self.dismiss()
