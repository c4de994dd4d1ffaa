"""Search: one query, three panes side by side (BM25 | Vector | Hybrid), and chunk detail.

Vector and hybrid panes pass a cancel Event to the engine (set when a newer query supersedes
them) and show on-demand embedding progress. While the app's background embedding runs they
wait for it instead of embedding the same chunks again, and re-run when it ends.
"""

from __future__ import annotations

import threading
import time
from functools import partial

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Input, Select, Tab, Tabs

from ...engine import (
    BM25,
    DEFAULT_MATCH_MODE,
    HYBRID,
    MATCH_ALL,
    MATCH_ANY,
    MATCH_PHRASE,
    MODES,
    SEMANTIC_MODES,
    VECTOR,
    EmbedProgress,
    Mode,
    Query,
    parse_query,
)
from ...errors import MemoriesError, ModelNotInstalledError
from ...i18n import N_, _
from ..messages import SearchDone, SearchProgress
from ..text import human_eta
from ..widgets.embed_status import EmbedState, EmbedStatus, progress_text
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from ..widgets.results import MODE_TITLES, ResultsPane
from .base import VaultScreen
from .chunk import ChunkDetailScreen

clock = time.perf_counter  # the pane's "N ms"; snapshot tests pin it
MATCH_LABELS = [(N_("any term"), MATCH_ANY), (N_("all terms"), MATCH_ALL), (N_("phrase"), MATCH_PHRASE)]
STAGES: dict[str, str] = {BM25: "bm25", VECTOR: "vector", HYBRID: "fusion"}  # the score that ranks each pane
NO_MODEL_VECTOR = N_("Needs the embedding model: F2 installs it (about 200 MiB, once).")
NO_MODEL_HYBRID = N_("Keyword results: no model yet (F2 installs it).")
EMPTY_QUERY = N_("The query is empty: type words to search for and press enter.")
NARROW = 120  # columns: below this the panes are shown one at a time


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
        Binding("escape", "back", N_("Back"), id="back"),
        Binding("ctrl+f", "focus_query", N_("Query"), id="search.query"),
        Binding("f2", "app.open_model", N_("Model"), tooltip=N_("Install the embedding model for vector search"),
                id="search.model"),
        # one pane at a time on a narrow terminal: f3 shows the next one (offered only then)
        Binding("f3", "next_pane", N_("Next pane"), tooltip=N_("BM25 → Vector → Hybrid"), id="search.next_pane"),
    ]

    HELP_TITLE = N_("Search")
    GUIDE = N_("Type a query (English, 中文 or both) and press enter: BM25 (keywords), Vector (meaning) and "
             "Hybrid (both, fused) run side by side. To open a result: tab into a pane, ↑/↓ pick a row, "
             "enter shows that chunk inside its document with the matched terms highlighted (esc comes "
             "back). The selector beside the query switches between any term, all terms and phrase. "
             "Each row shows the score that ranked its pane (bm25, cosine, fusion) and, in green, the other "
             "panes that found the same passage. Without the embedding model Hybrid shows keyword results; "
             "F2 installs the model. On a terminal narrower than 120 columns one pane is shown at a time, "
             "with tabs above it: f3 (or a click on a tab) shows the next one.")

    def __init__(self, vault_id: str, limit: int = 10) -> None:
        super().__init__(vault_id)
        self.limit = limit
        self.generation: dict[str, int] = dict.fromkeys(MODES, 0)
        self.cancels: dict[str, threading.Event | None] = dict.fromkeys(MODES)
        self.last_query: tuple[str, str] | None = None  # (query, match mode) of the latest search
        self.waiting: set[str] = set()  # panes waiting for the background embedding
        self.narrow = False  # one pane at a time, with tabs (see on_resize)
        self.shown_mode: Mode = MODES[0]  # the pane shown when narrow

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Vertical(id="search"):
            with Horizontal(id="search-row"):
                yield Input(id="query", placeholder=_("Search (English, 中文, or both) and press enter"))
                yield Select([(_(label), mode) for label, mode in MATCH_LABELS], value=DEFAULT_MATCH_MODE, allow_blank=False, id="match-mode")
            yield Tabs(*(Tab(_(MODE_TITLES[mode]), id=f"tab-{mode}") for mode in MODES), id="mode-tabs")
            with Horizontal(id="panes"):
                for mode in MODES:
                    yield ResultsPane(mode)
            yield EmbedStatus(id="search-embed-status")
        yield AppFooter()

    def on_mount(self) -> None:
        self.sub_title = self.engine.vault_name(self.vault_id)
        self.query_one("#query", Input).focus()
        self.query_one("#mode-tabs", Tabs).can_focus = False  # f3 and clicks switch; tab skips it
        self.watch(self.app, "embed_state", self._embed_state_changed, init=False)

    # -- narrow terminals: one pane, tabs above it --------------------------------------------------
    def on_resize(self) -> None:
        """Three panes need about 40 columns each; below 120, one pane at a time (each row
        readable instead of 1.5 results in 24 columns)."""
        narrow = self.size.width < NARROW
        if narrow != self.narrow:
            self.narrow = narrow
            self.set_class(narrow, "-narrow")
            self.show_pane(self.shown_mode)
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "next_pane":
            return self.narrow
        return super().check_action(action, parameters)

    def action_next_pane(self) -> None:
        self.show_pane(MODES[(MODES.index(self.shown_mode) + 1) % len(MODES)])

    @on(Tabs.TabActivated, "#mode-tabs")
    def _tab_clicked(self, event: Tabs.TabActivated) -> None:
        mode = next((m for m in MODES if event.tab.id == f"tab-{m}"), None)
        if mode is not None and mode != self.shown_mode:
            self.show_pane(mode)

    def show_pane(self, mode: Mode) -> None:
        """The pane of `mode` is the one shown when narrow; the focus follows it out of a hidden one."""
        previous, self.shown_mode = self.shown_mode, mode
        for each in MODES:
            self.pane(each).set_class(each == mode, "-active")
        tabs = self.query_one("#mode-tabs", Tabs)
        if tabs.active != f"tab-{mode}":
            tabs.active = f"tab-{mode}"
        if self.narrow and previous != mode and self.focused is self.pane(previous).option_list:
            self.set_focus(self.pane(mode).option_list)

    def _label_tab(self, mode: str) -> None:
        pane = self.pane(mode)
        count = f" {len(pane.hits)}" if pane.shown and pane.hits else ""
        self.query_one("#mode-tabs", Tabs).query_one(f"#tab-{mode}", Tab).label = _(MODE_TITLES[mode]) + count

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
        modes = [self.shown_mode] if self.narrow else list(MODES)
        return [self.query_one("#query", Input), *(self.pane(mode).option_list for mode in modes),
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
            if mode in SEMANTIC_MODES and wait:
                self.waiting.add(mode)
                pane.set_waiting(self._waiting_text(self.memories.embed_state))
                continue
            pane.set_busy()
            self._label_tab(mode)
            cancel = threading.Event() if mode in SEMANTIC_MODES else None
            self.cancels[mode] = cancel
            self.start_pane_search(mode, shared, self.generation[mode], epoch, cancel)

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
            self.pane(mode).set_idle(_(EMPTY_QUERY))
            self._label_tab(mode)

    @staticmethod
    def _waiting_text(state: EmbedState) -> str:
        return _("Waiting for the background embedding ({progress})").format(progress=progress_text(state))

    def _embed_state_changed(self, state: EmbedState) -> None:
        if state.active:
            for mode in self.waiting:
                self.pane(mode).set_waiting(self._waiting_text(state))

    def embedding_finished(self) -> None:
        """Background embedding ended (or failed): re-run the semantic panes that waited for it
        or show results from before it."""
        if self.last_query is None:
            return
        modes = tuple(m for m in SEMANTIC_MODES if m in self.waiting or self.pane(m).shown)
        if modes:
            self.run_search(self.last_query[0], modes)

    def start_pane_search(self, mode: Mode, query: SharedQuery, generation: int, epoch: int,
                          cancel: threading.Event | None) -> None:
        """One exclusive worker group per pane (a newer search replaces that pane's older one),
        so BM25 shows at once even when vector is slow or failing."""
        self.run_worker(partial(self._search, mode, query, generation, epoch, cancel), thread=True,
                        exclusive=True, group=f"search-{mode}", exit_on_error=False)

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
                self.post_if_live(SearchDone(epoch, mode=mode, generation=generation, no_model=True,
                                             error=_(NO_MODEL_VECTOR), seconds=clock() - started))
                return
            stage = response.fallback or stage  # hybrid without vectors: the engine answered with BM25
            if any(n.kind == "no_embedding_model" for n in response.notes):
                note = _(NO_MODEL_HYBRID)  # said here with the key that installs the model
                response.notes = [n for n in response.notes if n.kind != "no_embedding_model"]
        except MemoriesError as exc:
            self.post_if_live(SearchDone(epoch, mode=mode, generation=generation, error=exc.localized(),
                                         seconds=clock() - started))
            return
        except Exception as exc:  # keep one pane's bug from hiding the other panes' results
            self.post_if_live(SearchDone(epoch, mode=mode, generation=generation, error=self.describe(exc),
                                         seconds=clock() - started))
            return
        self.post_if_live(SearchDone(epoch, mode=mode, generation=generation, response=response,
                                     seconds=clock() - started, stage=stage, note=note))
        if mode == BM25:
            self.engine.save_indexes()  # a freshly built index, saved off the UI thread: ctrl+l never waits

    def on_search_progress(self, message: SearchProgress) -> None:
        if not self.epoch_live(message.epoch) or message.generation != self.generation.get(message.mode):
            return
        p = message.progress
        self.pane(message.mode).set_progress(
            _("Embedding {done:,}/{total:,} chunks for this search · ETA {eta}…").format(
                done=p.done, total=p.total, eta=human_eta(p.eta_seconds)))

    def on_search_done(self, message: SearchDone) -> None:
        if not self.epoch_live(message.epoch) or message.generation != self.generation.get(message.mode):
            return  # locked meanwhile, or a newer query superseded this one
        self.cancels[message.mode] = None
        pane = self.pane(message.mode)
        if message.no_model:
            pane.set_hint(message.error or _(NO_MODEL_VECTOR))
        elif message.error is not None:
            pane.set_error(message.error)
        elif message.response is not None:
            pane.set_results(message.response, message.seconds, stage=message.stage, note=message.note)
        self.mark_shared()
        self._label_tab(message.mode)

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
