"""A search result inside its document: the record body with the chunk selected, the matched
words highlighted, and the scores of the stages that ranked it."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static, TextArea
from textual.widgets.text_area import Document, Selection

from ...engine import SearchHit, char_to_byte
from ...errors import MemoriesError
from ...frontend.words import score_text
from ...i18n import N_, _, _n
from ..text import HIGHLIGHT, byte_range_to_chars, match_spans
from ..textual_adapter import HighlightArea
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from ..widgets.results import STAGE_LABELS
from .base import VaultScreen


def stage_scores(hit: SearchHit) -> Text | None:
    """The scores of the stages that scored this hit, the final one last; None for a hit no
    stage scored (a source opened from an answer): no row of dashes and zeros."""
    scored = [(stage, hit.scores[stage]) for stage in ("bm25", "vector", "fusion", "rerank")
              if hit.scores.get(stage) is not None]
    if not scored:
        return None
    out = Text(_("scores: "), style="dim")
    for n, (stage, value) in enumerate(scored):
        if n:
            out.append(" · ", style="dim")
        out.append(f"{_(STAGE_LABELS[stage])} ")
        out.append(score_text(value if value is not None else 0.0), style="cyan")
    out.append(" · " + _("final {score}").format(score=score_text(hit.score)), style="bold cyan")
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
    out = Text(_n("{n} match in the chunk", "{n} matches in the chunk", total).format(n=total), style=HIGHLIGHT)
    out.append(": " + ", ".join(shown[k] + (f" ×{n}" if n > 1 else "") for k, n in counts.items()), style="dim")
    return out


def _document(area: TextArea) -> Document:
    """The area's document (a plain `Document`: these areas have no syntax highlighting)."""
    doc = area.document
    assert isinstance(doc, Document)
    return doc


class TermTextArea(HighlightArea):
    """A read-only TextArea that also paints query-term matches over the chunk selection.

    Term spans are character offsets into the text; the area's highlights want per-line UTF-8
    byte columns, so they are converted here."""

    extra_style = Style.parse(HIGHLIGHT)
    term_char_spans: list[tuple[int, int]] = []

    def set_term_spans(self, spans: list[tuple[int, int]]) -> None:
        self.term_char_spans = list(spans)
        self.rebuild_highlights()

    def extra_spans(self) -> list[tuple[int, int, int]]:
        doc = _document(self)
        out = []
        for start, end in self.term_char_spans:
            (row0, col0), (row1, col1) = doc.get_location_from_index(start), doc.get_location_from_index(end)
            for row in range(row0, row1 + 1):
                line = doc.get_line(row)
                a = col0 if row == row0 else 0
                b = col1 if row == row1 else len(line)
                if b > a:
                    out.append((row, char_to_byte(line, a), char_to_byte(line, b)))
        return out


class ChunkDetailScreen(VaultScreen):
    """The chunk inside its document: the record body with the chunk's byte range selected and
    the query terms inside the chunk highlighted."""

    BINDINGS = [Binding("escape", "back", N_("Back"), id="back")]
    HELP_TITLE = N_("Result in its document")
    GUIDE = N_("The whole document, with the result's chunk selected and the query terms in it highlighted. "
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
        yield AppFooter()

    def on_mount(self) -> None:
        hit = self.hit
        meta = self.query_one("#detail-meta", Static)
        area = self.query_one("#detail-body", TermTextArea)
        head = Text()
        head.append(f"[{hit.citation}]", style="bold magenta")
        head.append(f" {hit.title}", style="bold")
        head.append("\n" + _("{mode} · record {id} rev {revision} · bytes {start}–{end} · chunk {chunk}").format(
            mode=self.mode, id=hit.record_id, revision=hit.revision, start=hit.byte_start, end=hit.byte_end,
            chunk=hit.chunk_hash[:12]), style="dim")
        scores = self.score_line()
        if scores is not None:
            head.append("\n")
            head.append_text(scores)
        try:
            record = self.engine.read_record(self.vault_id, hit.record_id, hit.revision)
        except MemoriesError as exc:
            head.append(f"\n{exc.localized()}", style="bold red")
            meta.update(head)
            area.text = hit.text
            return
        start, end = byte_range_to_chars(record.body, hit.byte_start, hit.byte_end)
        self.char_range = (start, end)
        chunk = record.body[start:end]
        spans = hit.spans if chunk == hit.text else match_spans(chunk, self.terms)
        self.term_matches = [(start + a, start + b) for a, b in spans]
        head.append(" · " + _("chars {start}–{end} (selected below)").format(start=start, end=end), style="dim")
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
