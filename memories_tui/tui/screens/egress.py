"""The egress log of the unlocked vault: every request that sent its content out (`g` on the
records screen, or "Egress log" in the command palette).

One row per request (time, purpose, endpoint with loopback marked, chunks, bytes, outcome,
the MCP client that caused it); below the table, the highlighted request's records, revisions
and chunk hashes. The log never holds the content, so neither does this screen.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Footer, Static

from ...engine import EgressEntry, EgressReport
from ...errors import MemoriesError
from ...i18n import N_, _, _n
from ..messages import WorkerMessage
from ..text import plain
from ..widgets.header import AppHeader
from .base import VaultScreen


@dataclass(eq=False, kw_only=True)
class EgressLoaded(WorkerMessage):
    report: EgressReport | None = None
    error: str | None = None


class EgressScreen(VaultScreen):
    BINDINGS = [
        Binding("escape", "back", N_("Back"), id="back"),
        Binding("r", "reload", N_("Reload"), id="egress.reload"),
    ]
    HELP_TITLE = N_("Egress log")
    GUIDE = N_("Every request that sent this vault's content out of Memories (remote embedding, generation, "
             "rerank; loopback services too), newest last. ↑/↓ pick one: below the table are the records, "
             "revisions and chunk hashes it carried. The log is encrypted inside the vault and never holds "
             "the text itself. r reloads, esc goes back.")
    DEFAULT_CSS = """
    #egress-box { height: 1fr; }
    #egress-intro { height: auto; padding: 0 1; }
    #egress-table { height: 1fr; }
    #egress-detail { height: auto; max-height: 8; padding: 0 1; }
    """

    def __init__(self, vault_id: str) -> None:
        super().__init__(vault_id)
        self.entries: list[EgressEntry] = []

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Vertical(id="egress-box"):
            yield Static(Text(_("Loading the egress log…")), id="egress-intro")
            yield DataTable(id="egress-table", cursor_type="row", zebra_stripes=True)
            yield Static(id="egress-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#egress-table", DataTable).add_columns(
            _("Time (UTC)"), _("Purpose"), _("Endpoint"), _("Chunks"), _("Bytes"), _("Outcome"), _("Client"))
        self.load()

    @work(thread=True, exclusive=True, group="egress")
    def load(self) -> None:
        epoch = self.epoch()
        try:
            self.post_if_live(EgressLoaded(epoch, report=self.engine.egress_log(self.vault_id)))
        except MemoriesError as exc:
            self.post_if_live(EgressLoaded(epoch, error=exc.localized()))

    def on_egress_loaded(self, message: EgressLoaded) -> None:
        if not self.epoch_live(message.epoch):
            return
        intro = self.query_one("#egress-intro", Static)
        if message.report is None:
            intro.update(Text(message.error or "", style="bold red"))
            return
        report = message.report
        self.entries = report.entries
        table = self.query_one("#egress-table", DataTable)
        table.clear()
        for e in self.entries:
            where = e.host + (" " + _("(loopback)") if e.loopback else "")
            table.add_row(plain(e.time.replace("T", " ").rstrip("Z")), plain(e.purpose), plain(where),
                          plain(_n("{n} object", "{n} objects", e.objects).format(n=e.objects) if e.objects
                                else len(e.chunks)), plain(f"{e.bytes_sent:,}"),  # a sync push sends objects
                          plain(e.outcome + (f" ×{e.attempts}" if e.attempts > 1 else "")), plain(e.client or ""))
        remote = sum(1 for e in self.entries if not e.loopback)
        parts = [_n("{n} request sent content out; {remote} to non-loopback services.",
                    "{n} requests sent content out; {remote} to non-loopback services.", len(self.entries)).format(
                        n=len(self.entries), remote=remote)
                 if self.entries else _("Nothing from this vault has been sent out.")]
        if report.damaged:
            parts.append(_("Entries {numbers} failed their integrity check.").format(numbers=report.damaged))
        if report.missing:
            parts.append(_("Entries {numbers} are missing (deleted from the file).").format(numbers=report.missing))
        intro.update(Text("  ".join(parts), style="bold red" if report.damaged or report.missing else ""))
        if self.entries:
            table.move_cursor(row=len(self.entries) - 1)
            table.focus()
            self.show_detail(len(self.entries) - 1)

    @on(DataTable.RowHighlighted, "#egress-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail(event.cursor_row)

    def show_detail(self, row: int) -> None:
        if not 0 <= row < len(self.entries):
            return
        entry = self.entries[row]
        lines = [_("#{seq} {purpose} to {host}: {sent:,} bytes sent, {received:,} received, {attempts} attempt(s), "
                   "{outcome}").format(seq=entry.seq, purpose=entry.purpose, host=entry.host, sent=entry.bytes_sent,
                                       received=entry.bytes_received, attempts=entry.attempts, outcome=entry.outcome)]
        for chunk in entry.chunks[:5]:
            owner = (_("{id} rev {revision}").format(id=chunk.record_id, revision=chunk.revision) if chunk.record_id
                     else _("(no record)"))
            lines.append("  " + _("{owner}  chunk {chunk}…").format(owner=owner, chunk=chunk.chunk_hash[:16]))
        if len(entry.chunks) > 5:
            lines.append("  " + _("… and {n} more chunks (`memories rag egress --json` lists all)").format(
                n=len(entry.chunks) - 5))
        self.query_one("#egress-detail", Static).update(Text("\n".join(lines)))

    def action_reload(self) -> None:
        self.load()

    def action_back(self) -> None:
        self.app.pop_screen()
