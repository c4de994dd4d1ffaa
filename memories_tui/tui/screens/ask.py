"""Ask: a question, a grounded answer with `[S#]` highlighted, citations that open their chunk.

The answer is built as a `Text` object, never a markup string: `[S1]` is Textual markup
syntax (it would vanish) and a source saying `[@click=...]` must never become a live link.
States: working, generated (citations checked), extractive, insufficient evidence, answer
rejected (the model broke the citation contract), error. The ask runs in a thread worker,
is cancelled by a newer question or by leaving the screen, and is dropped on lock.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, OptionList, Select, Static
from textual.widgets.option_list import Option

from ...engine import BM25, DEFAULT_MODE, HYBRID, VECTOR, Answer, Mode, SearchHit, find_citations
from ...engine import MODES as SEARCH_MODES
from ...errors import AnswerRejectedError, MemoriesError
from ...frontend.words import note_text
from ...i18n import N_, _, _n
from ..messages import WorkerMessage
from ..text import HIGHLIGHT, byte_range_to_chars
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from ..wrap import BrokenLines
from .base import VaultScreen
from .chunk import ChunkDetailScreen, TermTextArea

MODES = [("BM25", BM25), (N_("vector"), VECTOR), (N_("hybrid"), HYBRID)]
CHECK_LINE = N_("Citation checks verify references and quotes, not whether the answer is true.")
STATE_TEXT = {
    "answered": (N_("Generated answer — every [S#] is a source that was sent"), "bold green"),
    "extractive": (N_("Extractive answer — sentences copied from your notes, not generated"), "bold cyan"),
    "insufficient_evidence": (N_("Insufficient evidence — nothing in the vault answers this"), "bold yellow"),
    "rejected": (N_("Answer rejected — the model broke the citation rules; nothing of it is shown"), "bold red"),
    "error": (N_("The ask failed"), "bold red"),
    "working": (N_("Retrieving and asking…"), "dim"),
}


@dataclass(eq=False, kw_only=True)
class AskDone(WorkerMessage):
    generation: int
    answer: Answer | None = None
    error: str | None = None
    rejected: bool = False


def answer_text(answer: str) -> Text:
    """The answer as plain text with `[S#]` styled; nothing in it is parsed as markup."""
    out = Text()
    pos = 0
    for span in find_citations(answer):  # the answer check's own finder: every form it accepts
        out.append(answer[pos:span.start])
        out.append(answer[span.start:span.end], style="bold magenta")
        pos = span.end
    out.append(answer[pos:])
    return out


class QuoteDetailScreen(ChunkDetailScreen):
    """The cited chunk in its document, with verified quotes of that source highlighted."""

    def __init__(self, vault_id: str, hit: SearchHit, quote_ranges: list[tuple[int, int]]) -> None:
        super().__init__(vault_id, hit, [], "ask")
        self.quote_ranges = quote_ranges

    def score_line(self) -> Text | None:
        """A source of an answer has no search scores; say what it is instead."""
        count = len(self.quote_ranges)
        line = Text(_("source [{label}] of the answer").format(label=self.hit.citation), style="dim")
        if count:
            line.append(" · " + _n("{n} verified quote highlighted", "{n} verified quotes highlighted", count).format(
                n=count), style=HIGHLIGHT)
        return line

    def on_mount(self) -> None:
        # Textual runs ChunkDetailScreen.on_mount after this one (handlers run down the MRO):
        # paint the quotes once it has loaded the body.
        self.call_after_refresh(self._highlight_quotes)

    def _highlight_quotes(self) -> None:
        if not self.quote_ranges:
            return
        try:
            body = self.engine.read_record(self.vault_id, self.hit.record_id, self.hit.revision).body
        except MemoriesError:
            return
        spans = [byte_range_to_chars(body, a, b) for a, b in self.quote_ranges]
        self.query_one("#detail-body", TermTextArea).set_term_spans(spans)


class AskScreen(VaultScreen):
    BINDINGS = [
        Binding("escape", "back", N_("Back"), id="back"),
        Binding("ctrl+f", "focus_question", N_("Question"), id="ask.question"),
        # digits: not in the question field (it takes them as text), anywhere else on the screen
        Binding("1", "open_source(1)", N_("Open [S1]…[S9]"), key_display="1…9", id="ask.source"),
        *(Binding(str(n), f"open_source({n})", id=f"ask.source.{n}", show=False) for n in range(2, 10)),
    ]
    HELP_TITLE = N_("Ask")
    GUIDE = N_("Type a question and press enter: the answer comes from your notes, each claim followed by the "
             "source it came from, [S1], [S2], … To open a source: press its number (1 opens [S1]) once the "
             "question field has lost the focus (tab), or tab into the list of sources under the answer and press "
             "enter; the source opens inside its document with the quoted words highlighted (esc comes back). "
             "A new question replaces the one in the field: it is selected after each answer. The selector "
             "beside the field chooses BM25, vector or hybrid retrieval.")

    class Shown(Message):
        """Posted after an answer (or state) is shown; tests wait on it."""

    def __init__(self, vault_id: str, limit: int = 10) -> None:
        super().__init__(vault_id)
        self.limit = limit
        self.generation = 0
        self.cancel: threading.Event | None = None
        self.answer: Answer | None = None
        self.state = "idle"

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Vertical(id="ask"):
            with Horizontal(id="ask-row"):
                yield Input(id="question", placeholder=_("Ask a question about your notes and press enter"))
                yield Select([(_(label), mode) for label, mode in MODES], value=DEFAULT_MODE, allow_blank=False, id="ask-mode")
            yield Static(id="ask-state", markup=False)
            with VerticalScroll(id="ask-body"):
                yield Static(id="ask-answer", markup=False)
                yield Static(id="ask-quotes", markup=False)
            yield OptionList(id="ask-citations")
            yield Static(Text(_(CHECK_LINE), style="dim"), id="ask-check")
        yield AppFooter()

    def on_mount(self) -> None:
        self.sub_title = self.engine.vault_name(self.vault_id)
        self.query_one("#question", Input).focus()

    def on_unmount(self) -> None:
        if self.cancel is not None:
            self.cancel.set()

    def action_back(self) -> None:
        self.dismiss()

    def action_focus_question(self) -> None:
        self.query_one("#question", Input).focus()

    @on(Input.Submitted, "#question")
    def _submitted(self) -> None:
        question = self.query_one("#question", Input).value.strip()
        if not question:
            return
        if self.cancel is not None:
            self.cancel.set()
        self.generation += 1
        self.cancel = threading.Event()
        self._show_state("working")
        self.query_one("#ask-answer", Static).update("")
        self.query_one("#ask-quotes", Static).update("")
        self.query_one("#ask-citations", OptionList).clear_options()
        chosen = self.query_one("#ask-mode", Select).value
        mode = next(m for m in SEARCH_MODES if m == chosen)
        self.run_ask(question, mode, self.generation, self.epoch(), self.cancel)
        self.query_one("#question", Input).select_all()  # the next question replaces this one

    @work(thread=True, exclusive=True, group="ask", exit_on_error=False)
    def run_ask(self, question: str, mode: Mode, generation: int, epoch: int, cancel: threading.Event) -> None:
        try:
            answer = self.engine.ask(self.vault_id, question, mode=mode, limit=self.limit, cancel=cancel)
        except MemoriesError as exc:
            self.post_if_live(AskDone(epoch, generation=generation, error=exc.localized(),
                                      rejected=isinstance(exc, AnswerRejectedError)))
            return
        except Exception as exc:  # a bug must not kill the app: show it as a failed ask
            self.post_if_live(AskDone(epoch, generation=generation, error=self.describe(exc)))
            return
        if not cancel.is_set():
            self.post_if_live(AskDone(epoch, generation=generation, answer=answer))

    def on_ask_done(self, message: AskDone) -> None:
        if not self.epoch_live(message.epoch) or message.generation != self.generation:
            return  # locked meanwhile, or a newer question superseded this one
        self.cancel = None
        if message.answer is None:
            self._show_state("rejected" if message.rejected else "error", message.error or "")
            self.post_message(self.Shown())
            return
        answer = self.answer = message.answer
        notes = [note_text(n) for n in answer.notes if n.kind not in ("citation_check", "extractive")]  # shown above
        self._show_state(answer.status, " · ".join(notes))
        self.query_one("#ask-answer", Static).update(BrokenLines(answer_text(answer.answer)))
        quotes = Text()
        for q in answer.quotes:
            mark, style = ("✓ " + _("verified"), "green") if q.verified else ("✗ " + _("not found in its source"), "bold red")
            quotes.append(f"[{q.source}] ", style="bold magenta")
            quotes.append(f"{mark}: ", style=style)
            quotes.append(q.text + "\n", style=HIGHLIGHT if q.verified else "")
        self.query_one("#ask-quotes", Static).update(BrokenLines(quotes))
        options = self.query_one("#ask-citations", OptionList)
        for c in answer.citations:
            label = Text()
            label.append(f"[{c.label}] ", style="bold magenta")
            label.append(c.title)
            label.append("  " + _("{id} r{revision} bytes {start}–{end}").format(
                id=c.record_id, revision=c.revision, start=c.byte_start, end=c.byte_end), style="dim")
            options.add_option(Option(label, id=c.label))
        if options.option_count:
            options.highlighted = 0  # enter opens the first source at once, no ↓ first
        self.post_message(self.Shown())

    def _show_state(self, state: str, detail: str = "") -> None:
        self.state = state
        text, style = STATE_TEXT[state]
        line = Text(_(text), style=style)
        if detail:
            line.append("\n" + detail, style="dim")
        self.query_one("#ask-state", Static).update(line)

    @on(OptionList.OptionSelected, "#ask-citations")
    def _citation_chosen(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.open_source(event.option.id)

    def action_open_source(self, number: int) -> None:
        if self.answer is None:
            return
        if not self.open_source(f"S{number}"):
            self.notify(_("This answer has no source [S{number}].").format(number=number), severity="warning", timeout=3,
                        markup=False)

    def open_source(self, label: str) -> bool:
        """The source `label` (S1, S2, …) inside its document, its verified quotes highlighted."""
        answer = self.answer
        if answer is None:
            return False
        source = next((s for s in answer.sources if s.label == label), None)
        if source is None:
            return False
        hit = SearchHit(citation=source.label, record_id=source.record_id, revision=source.revision,
                        chunk_hash=source.chunk_hash, byte_start=source.byte_start, byte_end=source.byte_end,
                        score=0.0, title=source.title, text=source.text, kind=source.kind)
        ranges = [(q.byte_start, q.byte_end) for q in answer.quotes
                  if q.verified and q.source == label and q.byte_start is not None and q.byte_end is not None]
        self.app.push_screen(QuoteDetailScreen(self.vault_id, hit, ranges))
        return True
