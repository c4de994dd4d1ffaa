"""Record list with a reader pane (Markdown or raw text) and revision browsing.

The list and the reader share the width: the list takes up to 66 columns and at most about
half of a narrow terminal; its columns follow its width (the date column goes first)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable

from ...engine import Record
from ...errors import MemoriesError
from ...frontend.words import kind_name
from ...i18n import N_, _, _n
from ..messages import WorkerMessage
from ..text import plain
from ..widgets.embed_status import EmbedStatus
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from ..widgets.reader import RecordReader
from .base import VaultScreen
from .confirm import ConfirmScreen
from .editor import RecordEditorScreen, RevisionChoice, RevisionsScreen


@dataclass(eq=False, kw_only=True)
class RecordsLoaded(WorkerMessage):
    records: list[Record] = field(default_factory=list)
    conflicted: set[str] = field(default_factory=set)  # records edited on two devices at once
    against_deletion: set[str] = field(default_factory=set)  # of those, edited on one and deleted on another
    error: str | None = None


class RecordTable(DataTable):
    """The record list; tells its screen when its width changes so the columns can follow."""

    def on_resize(self) -> None:
        screen = self.screen
        if isinstance(screen, RecordsScreen):
            screen.fill_table()


class RecordsScreen(VaultScreen):
    # Priority bindings: a key that opens a screen does so before the keys typed after it are
    # routed (`s京都⏎` in one burst searches for 京都); this screen has no text field of its own.
    BINDINGS = [
        Binding("s", "app.open_search", N_("Search"), id="search", priority=True),
        Binding("a", "app.open_ask", N_("Ask"), tooltip=N_("Ask a question, answered from the vault with citations"),
                id="ask", priority=True),
        Binding("n", "add", N_("New"), tooltip=N_("Write a new memory or card"), id="records.add", priority=True),
        Binding("e", "edit", N_("Edit"), tooltip=N_("Edit the shown record (saves a new revision)"), id="records.edit",
                priority=True),
        Binding("d", "delete", N_("Delete"), tooltip=N_("Delete the shown record, after a confirmation"),
                id="records.delete", priority=True),
        Binding("i", "app.open_ingest", N_("Ingest"), tooltip=N_("Import text or Markdown files"), id="ingest",
                priority=True),
        Binding("h", "history", N_("Revisions"), tooltip=N_("List the shown record's revisions"), id="records.history",
                show=False, priority=True),
        Binding("m", "app.open_model", N_("Model"), tooltip=N_("Install the embedding model for vector search"), id="model",
                show=False, priority=True),
        Binding("t", "app.open_status", N_("Status"), tooltip=N_("Vault, index and model status"), id="status",
                show=False, priority=True),
        Binding("v", "toggle_raw", N_("Raw / Markdown"), id="records.raw", show=False),
        Binding("r", "reload", N_("Reload"), id="records.reload", show=False),
        Binding("c", "conflict", N_("Conflict"), tooltip=N_("Compare the shown record's conflicting revisions, "
                                                                   "or go to the next record that has some"),
                id="records.conflict", show=False, priority=True),
        Binding("left_square_bracket", "revision(-1)", N_("Older revision"), id="records.older", show=False),
        Binding("right_square_bracket", "revision(1)", N_("Newer revision"), id="records.newer", show=False),
    ]

    HELP_TITLE = N_("Records")
    GUIDE = N_("The list shows every record of the vault; ↑/↓ move and the reader beside it shows the "
             "highlighted one. enter moves into the reader (shift+tab comes back); [ and ] step through "
             "older and newer revisions (h lists them) and v switches the reader between rendered Markdown and the raw "
             "text. a asks a question answered from the vault with [S#] citations, n writes a new memory, e edits the shown record (a new revision), d deletes it after asking. s searches, i imports text files, m installs the embedding model "
             "for vector search, t shows the vault's status. A record edited on two devices at once is marked ⇄: c "
             "compares its two texts (on another record, c goes to the next one marked).")

    def __init__(self, vault_id: str) -> None:
        super().__init__(vault_id)
        self.records: list[Record] = []
        self.shown: Record | None = None
        self.revision_list: list[int] = []
        self.signature: frozenset[tuple[str, int]] | None = None  # (id, revision) of the last load
        self.column_widths: tuple[int, ...] = ()
        self._rows_shown: list[tuple[str, int]] | None = None
        self.conflicted: set[str] = set()
        self.against_deletion: set[str] = set()

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Horizontal(id="records-layout"):
            yield RecordTable(id="records", cursor_type="row", zebra_stripes=True)
            yield RecordReader(id="reader")
        yield EmbedStatus(id="records-embed-status")
        yield AppFooter()

    def on_mount(self) -> None:
        table = self.query_one("#records", DataTable)
        self.fill_table()
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
            conflicts = self.engine.conflicts(self.vault_id)
        except Exception as exc:  # noqa: BLE001 - shown inline, never a hung UI
            self.post_if_live(RecordsLoaded(epoch, error=self.describe(exc)))
            return
        self.post_if_live(RecordsLoaded(epoch, records=records, conflicted={c.record_id for c in conflicts},
                                        against_deletion={c.record_id for c in conflicts
                                                          if any(k.deleted for k in c.kept)}))

    def on_records_loaded(self, message: RecordsLoaded) -> None:
        if not self.epoch_live(message.epoch):
            return
        table = self.query_one("#records", DataTable)
        table.loading = False
        if message.error:
            self.reader.show_message(Text(message.error, style="bold red"))
            return
        selected = self.shown.id if self.shown else None
        before, conflicted_before = self.signature, self.conflicted
        self.records = message.records
        self.conflicted, self.against_deletion = message.conflicted, message.against_deletion
        signature = frozenset((r.id, r.revision) for r in self.records)
        unchanged = signature == self.signature
        if self.signature is not None and not unchanged:
            self.memories.request_embedding()  # records changed (here or by another process)
        self.signature = signature
        with table.prevent(DataTable.RowHighlighted):  # rebuilding moves the cursor: below decides what is shown
            self.fill_table()
        if not self.records:
            self.reader.show_message(
                Text(_("This vault is empty. Press i to import text files, or ctrl+p for every action; F1 lists "
                       "the keys.")))
            return
        index = next((n for n, r in enumerate(self.records) if r.id == selected), 0)
        with table.prevent(DataTable.RowHighlighted):
            table.move_cursor(row=index)
        record = self.records[index]
        if not (self.shown is not None and self.shown.id == record.id and before is not None
                and (record.id, record.revision) in before and (record.id in conflicted_before) == (record.id in
                                                                                                    self.conflicted)):
            self.show_record(record)  # else keep what is shown (where it was scrolled to, an older revision)
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

    def widths(self) -> tuple[int, ...]:
        """(kind, title[, updated]) column widths for the table's current width."""
        table = self.query_one("#records", DataTable)
        inner = max(table.size.width - 2, 20)  # minus the scrollbar
        kind = max([cell_len(kind_name(r.kind)) for r in self.records] + [cell_len(_("Kind"))])
        if inner >= 58:
            return kind, inner - kind - 16 - 6, 16
        return kind, max(inner - kind - 4, 8)

    def fill_table(self) -> None:
        """(Re)build the table when the records or the column widths changed."""
        table = self.query_one("#records", DataTable)
        widths = self.widths()
        rows = [(r.id, r.revision + (0 if r.id not in self.conflicted else 1 << 40)) for r in self.records]
        if widths == self.column_widths and rows == self._rows_shown:
            return
        cursor = table.cursor_row
        self.column_widths, self._rows_shown = widths, rows
        table.clear(columns=True)
        for key, label, width in zip(("kind", "title", "updated"), (_("Kind"), _("Title"), _("Updated")), widths,
                                     strict=False):
            table.add_column(label, key=key, width=width)
        for record in self.records:
            marks = ("⚠ " if "source_gone" in record.metadata else "") + ("⇄ " if record.id in self.conflicted else "")
            title = plain(marks + record.title)
            title.truncate(widths[1], overflow="ellipsis")  # a cut title ends in "…" (the table cuts it bare)
            cells = [plain(kind_name(record.kind), "cyan"), title, plain(record.updated[:16].replace("T", " "))]
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
        meta.append(_("{kind} · revision {revision}").format(kind=kind_name(record.kind), revision=record.revision),
                    style="dim")
        if len(self.revision_list) > 1 and record.revision in self.revision_list:  # numbers can skip (a deletion's)
            meta.append(" · " + _("{position} of {count} kept ([ older, ] newer)").format(
                position=self.revision_list.index(record.revision) + 1, count=len(self.revision_list)), style="dim")
        meta.append(" · " + _("updated {time}").format(time=record.updated[:16].replace("T", " ")), style="dim")
        if record.tags:
            meta.append("\n" + _("tags: {tags}").format(tags=", ".join(record.tags)), style="dim")
        if record.metadata.get("source"):
            meta.append("\n" + _("source: {source}").format(source=record.metadata["source"]), style="dim")
        if "source_gone" in record.metadata:
            meta.append("\n" + _("⚠ its file is gone from the source folder (since {time}); kept until "
                                  "`source sync --prune`").format(time=str(record.metadata["source_gone"])[:16]
                                                                 .replace("T", " ")), style="yellow")
        if record.id in self.against_deletion:
            meta.append("\n" + _("⇄ deleted on one device while edited on another; the edit is shown: c asks "
                                  "which wins"), style="bold yellow")
        elif record.id in self.conflicted:
            meta.append("\n" + _("⇄ edited on two devices at once: c compares the two and keeps one, both or "
                                  "a merge"), style="bold yellow")
        meta.append(f"\nid {record.id}", style="dim")
        literal = None
        if record.kind == "asset":
            size = len(record.data or b"")
            literal = Text(_n("(file asset, {size:,} byte)", "(file asset, {size:,} bytes)", size).format(size=size),
                           style="italic")
        self.reader.show(meta, record.body, literal=literal)

    def action_toggle_raw(self) -> None:
        raw = self.reader.toggle_raw()
        if self.shown is not None:
            self.show_record(self.shown)
        self.notify(_("Raw text") if raw else _("Rendered Markdown"), timeout=2)

    def action_revision(self, step: int) -> None:
        if self.shown is None:
            return
        try:
            pos = self.revision_list.index(self.shown.revision) + step
        except ValueError:
            return
        if not 0 <= pos < len(self.revision_list):  # said, as the keys otherwise seem to do nothing
            self.notify(_("This is the only revision kept.") if len(self.revision_list) < 2 else
                        _("This is the oldest revision kept.") if step < 0 else _("This is the newest revision."),
                        timeout=3)
            return
        try:
            self.show_record(self.engine.read_record(self.vault_id, self.shown.id, self.revision_list[pos]))
        except MemoriesError as exc:
            self.notify(exc.localized(), severity="error", markup=False)

    def action_conflict(self) -> None:
        from .conflict import ConflictScreen

        record = self.shown
        if record is None or record.id not in self.conflicted:
            self._next_conflict()
            return
        try:
            conflict = next(c for c in self.engine.conflicts(self.vault_id) if c.record_id == record.id)
            latest = self.engine.read_record(self.vault_id, record.id)
        except (MemoriesError, StopIteration):
            self.action_reload()
            return
        self.app.push_screen(ConflictScreen(self.vault_id, latest, conflict), lambda _done: self.action_reload())

    def _next_conflict(self) -> None:
        """From a record without a conflict, `c` goes to the next one that has one (after the
        highlighted row, wrapping round): a conflict among thousands of notes is found by key."""
        table = self.query_one("#records", DataTable)
        rows = [n for n, r in enumerate(self.records) if r.id in self.conflicted]
        if not rows:
            self.notify(_("No record has a conflict."), severity="information")
            return
        row = next((n for n in rows if n > table.cursor_row), rows[0])
        table.move_cursor(row=row)
        self.notify(_n("{n} record has conflicting edits: c compares the shown one.",
                       "{n} records have conflicting edits: c compares the shown one, c on another goes to the next.",
                       len(rows)).format(n=len(rows)))

    # -- add, edit, delete, revisions -------------------------------------------------------------
    def _editable(self) -> Record | None:
        if self.shown is None:
            self.notify(_("No record is shown."), severity="warning")
            return None
        if self.shown.kind == "asset":
            self.notify(_("File assets cannot be edited here."), severity="warning")
            return None
        return self.shown

    async def action_add(self) -> None:
        await self.app.push_screen(RecordEditorScreen(self.vault_id), self._saved)

    async def action_edit(self) -> None:
        """Edit the latest revision; on an older one, first ask: edit the latest, or restore this one."""
        record = self._editable()
        if record is None:
            return
        try:
            latest = self.engine.read_record(self.vault_id, record.id)
        except MemoriesError as exc:
            self.notify(exc.localized(), severity="error", markup=False)
            return
        if record.revision == latest.revision:
            await self.app.push_screen(RecordEditorScreen(self.vault_id, latest),
                                       lambda saved: self._saved(saved, editing=latest.id))
            return
        question = ConfirmScreen(
            _("Revision {revision} of {latest}").format(revision=record.revision, latest=latest.revision),
            _("You are reading revision {revision}; the latest is revision {latest}. Restore revision {revision} "
              "(it opens in the editor; saving makes it revision {next}), or edit the latest? esc does neither.").format(
                revision=record.revision, latest=latest.revision, next=latest.revision + 1),
            yes=_("Restore revision {revision}").format(revision=record.revision), no=_("Edit the latest"),
            cancellable=True)
        await self.app.push_screen(question, lambda restore: self._edit(latest, record if restore else None)
                                   if restore is not None else None)

    def _edit(self, latest: Record, restore: Record | None) -> None:
        self.app.push_screen(RecordEditorScreen(self.vault_id, latest, restore=restore),
                             lambda saved: self._saved(saved, editing=latest.id))

    def _saved(self, record: Record | None, editing: str | None = None) -> None:
        """`editing`: the record the editor was opened on; another one back is the text saved as a
        new note because that one was deleted meanwhile (editor.py)."""
        if record is None:
            return
        self.shown = record
        if editing is not None and record.id != editing:
            said = _("Saved as a new note.")
        else:
            said = (_("Saved revision {revision}.").format(revision=record.revision) if record.revision > 1
                    else _("Saved."))
        self.notify(said, timeout=3)
        self.action_reload()

    def action_delete(self) -> None:
        record = self.shown
        if record is None:
            return
        count = len(self.revision_list)
        if count > 1:
            body = _("“{title}” ({kind}) and all {count} of its revisions are removed from the vault and from search. "
                     "This cannot be undone.").format(title=record.title, kind=kind_name(record.kind), count=count)
        else:
            body = _("“{title}” ({kind}) is removed from the vault and from search. This cannot be undone.").format(
                title=record.title, kind=kind_name(record.kind))
        question = ConfirmScreen(_("Delete this record?"), body, yes=_("Delete"), no=_("Keep it"), danger=True)
        self.app.push_screen(question, lambda yes: self._delete(record) if yes else None)

    def _delete(self, record: Record) -> None:
        try:
            self.engine.delete_record(self.vault_id, record.id)
        except MemoriesError as exc:
            self.notify(exc.localized(), severity="error", markup=False)
            return
        self.shown = None
        self.notify(_("Deleted."), timeout=3)
        self.action_reload()

    def action_history(self) -> None:
        record = self.shown
        if record is None:
            return
        rows = []
        for revision in self.revision_list[-50:]:
            try:
                old = self.engine.read_record(self.vault_id, record.id, revision)
            except MemoriesError:
                continue
            rows.append((revision, old.updated, old.title))
        self.app.push_screen(RevisionsScreen(record.title, rows, record.revision), self._show_revision)

    def _show_revision(self, choice: RevisionChoice | None) -> None:
        if choice is None or self.shown is None:
            return
        try:
            old = self.engine.read_record(self.vault_id, self.shown.id, choice.revision)
            latest = self.engine.read_record(self.vault_id, self.shown.id)
        except MemoriesError as exc:
            self.notify(exc.localized(), severity="error", markup=False)
            return
        self.show_record(old)
        if choice.restore:
            self._edit(latest, old if old.revision != latest.revision else None)
