"""Record list with a reader pane (Markdown or raw text) and revision browsing.

The list and the reader share the width: the list takes up to 66 columns and at most about
half of a narrow terminal; its columns follow its width (the date column goes first)."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer

from ...errors import MemoriesError
from ...vault.records import Record
from ..messages import WorkerMessage, describe
from ..text import plain
from ..widgets.embed_status import EmbedStatus
from ..widgets.header import AppHeader
from ..widgets.reader import RecordReader
from .base import VaultScreen


class RecordsLoaded(WorkerMessage):
    def __init__(self, epoch: int, records: list[Record] | None = None, error: str | None = None) -> None:
        super().__init__(epoch)
        self.records = records or []
        self.error = error


class RecordsScreen(VaultScreen):
    BINDINGS = [
        Binding("s", "app.open_search", "Search", id="search"),
        Binding("i", "app.open_ingest", "Ingest", id="ingest"),
        Binding("m", "app.open_model", "Model", id="model"),
        Binding("t", "app.open_status", "Status", id="status"),
        Binding("v", "toggle_raw", "Raw / Markdown", id="records.raw", show=False),
        Binding("r", "reload", "Reload", id="records.reload", show=False),
        Binding("left_square_bracket", "revision(-1)", "Older revision", id="records.older", show=False),
        Binding("right_square_bracket", "revision(1)", "Newer revision", id="records.newer", show=False),
    ]

    HELP_TITLE = "Records"
    GUIDE = ("The list shows every record of the vault; ↑/↓ move and the reader beside it shows the "
             "highlighted one. enter moves into the reader (shift+tab comes back); [ and ] step through "
             "older and newer revisions and v switches the reader between rendered Markdown and the raw "
             "text. s searches, i imports text files, m installs the embedding model "
             "for vector search, t shows the vault's status.")

    def __init__(self, vault_id: str) -> None:
        super().__init__(vault_id)
        self.records: list[Record] = []
        self.shown: Record | None = None
        self.revision_list: list[int] = []
        self.signature: frozenset[tuple[str, int]] | None = None  # (id, revision) of the last load
        self.column_widths: tuple[int, ...] = ()
        self._rows_shown: list[tuple[str, int]] | None = None

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Horizontal(id="records-layout"):
            yield DataTable(id="records", cursor_type="row", zebra_stripes=True)
            yield RecordReader(id="reader")
        yield EmbedStatus(id="records-embed-status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#records", DataTable)
        self.fill_table()
        self.call_after_refresh(self.fill_table)
        table.loading = True
        self.sub_title = self.engine.vault_name(self.vault_id)

    def on_screen_resume(self) -> None:
        # first shown, or back from ingest/search: (re)load, picking up new records
        if self.engine.is_unlocked(self.vault_id):
            self.action_reload()

    def action_reload(self) -> None:
        self.load_worker(self.epoch())

    @work(thread=True, exclusive=True, group="records", exit_on_error=False)
    def load_worker(self, epoch: int) -> None:
        try:
            records = self.engine.list_records(self.vault_id)
        except Exception as exc:  # noqa: BLE001 - shown inline, never a hung UI
            self.post_if_live(RecordsLoaded(epoch, error=describe(exc)))
            return
        self.post_if_live(RecordsLoaded(epoch, records))

    def on_records_loaded(self, message: RecordsLoaded) -> None:
        if not self.epoch_live(message.epoch):
            return
        table = self.query_one("#records", DataTable)
        table.loading = False
        if message.error:
            self.reader.show_message(Text(message.error, style="bold red"))
            return
        selected = self.shown.id if self.shown else None
        self.records = message.records
        signature = frozenset((r.id, r.revision) for r in self.records)
        if self.signature is not None and signature != self.signature:
            self.memories.request_embedding()  # records changed (here or by another process)
        self.signature = signature
        self.fill_table()
        if not self.records:
            self.reader.show_message(
                Text("This vault is empty. Press i to import text files, or ctrl+p for every action; F1 lists the keys."))
            return
        index = next((n for n, r in enumerate(self.records) if r.id == selected), 0)
        table.move_cursor(row=index)
        self.show_record(self.records[index])
        table.focus()

    @on(DataTable.RowHighlighted, "#records")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.records):
            self.show_record(self.records[event.cursor_row])

    @on(DataTable.RowSelected, "#records")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.reader.focus()

    @property
    def reader(self) -> RecordReader:
        return self.query_one("#reader", RecordReader)

    def on_resize(self) -> None:
        self.call_after_refresh(self.fill_table)  # the table's new width is known after the layout

    def widths(self) -> tuple[int, ...]:
        """(kind, title[, updated]) column widths for the table's current width."""
        table = self.query_one("#records", DataTable)
        inner = max(table.size.width - 2, 20)  # minus the scrollbar
        kind = max((len(r.kind) for r in self.records), default=4)
        if inner >= 58:
            return kind, inner - kind - 16 - 6, 16
        return kind, max(inner - kind - 4, 8)

    def fill_table(self) -> None:
        """(Re)build the table when the records or the column widths changed."""
        table = self.query_one("#records", DataTable)
        widths = self.widths()
        rows = [(r.id, r.revision) for r in self.records]
        if widths == self.column_widths and rows == self._rows_shown:
            return
        cursor = table.cursor_row
        self.column_widths, self._rows_shown = widths, rows
        table.clear(columns=True)
        for key, label, width in zip(("kind", "title", "updated"), ("Kind", "Title", "Updated"), widths, strict=False):
            table.add_column(label, key=key, width=width)
        for record in self.records:
            cells = [plain(record.kind, "cyan"), plain(record.title), plain(record.updated[:16].replace("T", " "))]
            table.add_row(*cells[:len(widths)], key=record.id)
        if self.records:
            table.move_cursor(row=min(max(cursor, 0), len(self.records) - 1))

    def show_record(self, record: Record) -> None:
        try:
            self.revision_list = self.engine.revisions(self.vault_id, record.id)
        except MemoriesError:
            self.revision_list = [record.revision]
        self.shown = record
        meta = Text()
        meta.append(record.title, style="bold")
        meta.append("\n")
        meta.append(f"{record.kind} · revision {record.revision}", style="dim")
        if len(self.revision_list) > 1:
            meta.append(f" of {len(self.revision_list)} ([ older, ] newer)", style="dim")
        meta.append(f" · updated {record.updated[:16].replace('T', ' ')}", style="dim")
        if record.tags:
            meta.append("\ntags: " + ", ".join(record.tags), style="dim")
        if record.metadata.get("source"):
            meta.append(f"\nsource: {record.metadata['source']}", style="dim")
        meta.append(f"\nid {record.id}", style="dim")
        literal = None
        if record.kind == "asset":
            literal = Text(f"(file asset, {len(record.data or b'')} bytes)", style="italic")
        self.reader.show(meta, record.body, literal=literal)

    def action_toggle_raw(self) -> None:
        raw = self.reader.toggle_raw()
        if self.shown is not None:
            self.show_record(self.shown)
        self.notify("Raw text" if raw else "Rendered Markdown", timeout=2)

    def action_revision(self, step: int) -> None:
        if self.shown is None or len(self.revision_list) < 2:
            return
        try:
            pos = self.revision_list.index(self.shown.revision) + step
        except ValueError:
            return
        if 0 <= pos < len(self.revision_list):
            try:
                self.show_record(self.engine.read_record(self.vault_id, self.shown.id, self.revision_list[pos]))
            except MemoriesError as exc:
                self.notify(exc.message, severity="error")
