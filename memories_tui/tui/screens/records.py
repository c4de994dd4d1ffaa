"""Record list with a reader pane (body shown literally) and revision browsing."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Footer, Header, Static

from ...engine import Record
from ...errors import MemoriesError
from ..messages import WorkerMessage, describe
from ..text import plain
from ..widgets.embed_status import EmbedStatus
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
        Binding("r", "reload", "Reload", id="records.reload"),
        Binding("left_square_bracket", "revision(-1)", "Older rev", id="records.older"),
        Binding("right_square_bracket", "revision(1)", "Newer rev", id="records.newer"),
    ]

    def __init__(self, vault_id: str) -> None:
        super().__init__(vault_id)
        self.records: list[Record] = []
        self.shown: Record | None = None
        self.revision_list: list[int] = []
        self.signature: frozenset[tuple[str, int]] | None = None  # (id, revision) of the last load

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="records-layout"):
            yield DataTable(id="records", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="reader"):
                yield Static(id="reader-meta")
                yield Static(id="reader-body")
        yield EmbedStatus(id="records-embed-status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#records", DataTable)
        table.add_column("Kind", key="kind", width=8)
        table.add_column("Title", key="title", width=34)
        table.add_column("Updated", key="updated", width=19)
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
            self.query_one("#reader-meta", Static).update(Text(message.error, style="bold red"))
            return
        selected = self.shown.id if self.shown else None
        self.records = message.records
        signature = frozenset((r.id, r.revision) for r in self.records)
        if self.signature is not None and signature != self.signature:
            self.memories.request_embedding()  # records changed (here or by another process)
        self.signature = signature
        table.clear()
        for record in self.records:
            table.add_row(plain(record.kind, "cyan"), plain(record.title), plain(record.updated[:19].replace("T", " ")),
                          key=record.id)
        if not self.records:
            self.query_one("#reader-meta", Static).update(
                Text("This vault is empty. Press i to ingest text files, or use the command palette (ctrl+p)."))
            self.query_one("#reader-body", Static).update("")
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
        self.query_one("#reader", VerticalScroll).focus()

    def show_record(self, record: Record) -> None:
        try:
            self.revision_list = self.engine.revisions(self.vault_id, record.id)
        except MemoriesError:
            self.revision_list = [record.revision]
        self.shown = record
        meta = Text()
        meta.append(record.title, style="bold")
        meta.append("\n")
        meta.append(f"{record.kind} · {record.id} · revision {record.revision}", style="dim")
        if len(self.revision_list) > 1:
            meta.append(f" of {', '.join(map(str, self.revision_list))} ([ older, ] newer)", style="dim")
        meta.append(f"\ncreated {record.created[:19]} · updated {record.updated[:19]}", style="dim")
        if record.tags:
            meta.append("\ntags: " + ", ".join(record.tags), style="dim")
        if record.metadata.get("source"):
            meta.append(f"\nsource: {record.metadata['source']}", style="dim")
        self.query_one("#reader-meta", Static).update(meta)
        if record.kind == "asset":
            body = Text(f"(file asset, {len(record.data or b'')} bytes)", style="italic")
        else:
            body = Text(record.body)  # literal: never markup
        self.query_one("#reader-body", Static).update(body)
        self.query_one("#reader", VerticalScroll).scroll_home(animate=False)

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
