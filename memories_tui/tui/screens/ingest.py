"""Ingest: pick text files (typed paths and/or a directory tree), run in a worker, show results."""

from __future__ import annotations

import shlex
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, DataTable, DirectoryTree, Input, ProgressBar, Static

from ...engine import IngestProgress as EngineIngestProgress
from ...frontend.words import reason_text, status_name
from ...i18n import N_, _, _n
from ..language import styled
from ..messages import IngestDone, IngestProgress
from ..paths import PathSuggester, parse_paths
from ..text import plain, tilde
from ..widgets.embed_status import EmbedStatus
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from ..wrap import BrokenLines
from .base import VaultScreen

STATUS_STYLE = {"created": "green", "updated": "yellow", "unchanged": "dim"}


class FileTree(DirectoryTree):
    """A directory tree without hidden (dot) files and folders; backspace goes up a folder, so
    the tree is never stuck in the folder it started in."""

    BINDINGS = [
        Binding("backspace", "up", N_("Up"), tooltip=N_("Show the folder that holds this one"), id="ingest.up"),
        Binding("a", "add", N_("Add"), tooltip=N_("Add the highlighted file or folder to the paths"),
                id="ingest.add"),
    ]

    @dataclass(eq=False)
    class Add(Message):
        path: Path

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        return [path for path in paths if not path.name.startswith(".")]

    async def watch_path(self) -> None:
        """The root is labelled with its whole path as ~/… (Textual shows only the folder's name)."""
        await super().watch_path()
        self.root.set_label(Text(tilde(Path(self.path).resolve())))

    def action_up(self) -> None:
        folder = Path(self.path).resolve()
        if folder.parent != folder:
            self.path = folder.parent

    def action_add(self) -> None:
        node = self.cursor_node
        if node is not None and node.data is not None:
            self.post_message(self.Add(Path(node.data.path)))


class IngestScreen(VaultScreen):
    BINDINGS = [
        Binding("escape", "back", N_("Back"), tooltip=N_("Back (cancels a running import)"), id="back"),
        Binding("ctrl+r", "run", N_("Import"), id="ingest.run"),
        Binding("ctrl+t", "toggle_tree", N_("Files"), tooltip=N_("Into the file tree, or back to the path field"),
                id="ingest.tree"),
    ]
    HELP_TITLE = N_("Ingest")
    GUIDE = N_("Import UTF-8 text and Markdown files as knowledge cards. Type paths in the field (separated by "
             "spaces, quote a path with spaces, ~ is your home folder): the rest of a file or folder name is "
             "suggested in grey, right arrow takes it. ctrl+t moves into the file tree (at the folder typed last, "
             "if it is one): ↑/↓ move, enter opens a folder or adds a file to the field, a adds the highlighted "
             "file or folder, backspace goes up a folder; ctrl+t goes back to the field. enter in the field or "
             "ctrl+r imports. A folder brings every text and Markdown file inside it (dot-folders left out; other "
             "files are listed as skipped, with the reason). All or nothing: a refused file stops the import and "
             "nothing is written.")

    def __init__(self, vault_id: str, root: Path | None = None) -> None:
        super().__init__(vault_id)
        self.root = root or Path.home()
        self.cancel_event: threading.Event | None = None

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with Vertical(id="ingest"):
            yield Static(BrokenLines(Text(_("Text files to import as cards: space-separated, ~ is home, → takes "
                                            "the grey completion; ctrl+t: the file tree. All or nothing. F1: "
                                            "every key."))), id="ingest-help")
            with Horizontal(id="ingest-row"):
                yield Input(id="paths", placeholder=_("notes/a.md \"my notes/b.txt\""), suggester=PathSuggester())
                yield Button(_("Ingest"), id="run", variant="primary")
            with Horizontal(id="ingest-body"):
                with Vertical(id="tree-box"):
                    yield Static(styled(_("{key} goes up a folder"), "dim", key=("backspace", "bold")), id="tree-folder")
                    yield FileTree(self.root, id="tree")
                with Vertical(id="ingest-out"):
                    yield ProgressBar(id="ingest-progress", show_eta=False)
                    yield Static(id="ingest-message")
                    yield DataTable(id="ingest-results", cursor_type="row", zebra_stripes=True)
            yield EmbedStatus(id="ingest-embed-status")
        yield AppFooter()

    def on_mount(self) -> None:
        table = self.query_one("#ingest-results", DataTable)
        table.add_columns(_("File"), _("Status"), _("Chunks"), _("Title"), _("Record"))
        self.query_one("#ingest-progress").display = False
        self.query_one("#paths", Input).focus()
        self.sub_title = self.engine.vault_name(self.vault_id)

    def action_toggle_tree(self) -> None:
        """Into the file tree (at the folder typed last in the field, when it is one), or back to
        the path field when the tree has the focus."""
        tree = self.query_one("#tree", FileTree)
        if tree.has_focus:
            self.query_one("#paths", Input).focus()
            return
        try:
            typed = parse_paths(self.query_one("#paths", Input).value)
        except ValueError:
            typed = []
        if typed and typed[-1].is_dir() and typed[-1].resolve() != Path(tree.path).resolve():
            tree.path = typed[-1].resolve()
        tree.display = True
        tree.focus()

    @on(FileTree.Add)
    def _add(self, event: FileTree.Add) -> None:
        self._add_path(event.path)

    def action_back(self) -> None:
        if self.cancel_event is not None:
            self.cancel_event.set()
            self.query_one("#ingest-message", Static).update(Text(_("Cancelling…")))
            return
        self.dismiss()

    @on(DirectoryTree.FileSelected, "#tree")
    def _file_selected(self, event: DirectoryTree.FileSelected) -> None:
        self._add_path(event.path)

    def _add_path(self, path: Path) -> None:
        field = self.query_one("#paths", Input)
        try:
            current = parse_paths(field.value)
        except ValueError:
            current = []
        if path not in current:
            quoted = shlex.quote(str(path))
            field.value = f"{field.value.rstrip()} {quoted}".lstrip()

    @on(Input.Submitted, "#paths")
    @on(Button.Pressed, "#run")
    def action_run(self) -> None:
        if self.cancel_event is not None:
            return
        message = self.query_one("#ingest-message", Static)
        try:
            paths = parse_paths(self.query_one("#paths", Input).value)
        except ValueError as exc:
            message.update(Text(_("Cannot read the paths: {reason}.").format(reason=exc), style="bold red"))
            return
        if not paths:
            message.update(Text(_("Name at least one file (type a path or pick one in the tree)."), style="bold red"))
            return
        self.cancel_event = threading.Event()
        bar = self.query_one("#ingest-progress", ProgressBar)
        bar.display = True
        bar.update(total=len(paths), progress=0)
        message.update(Text(_n("Reading {n} file…", "Reading {n} files…", len(paths)).format(n=len(paths))))
        self.query_one("#ingest-results", DataTable).clear()
        self.query_one("#run", Button).disabled = True
        self.ingest_worker(paths, self.cancel_event, self.epoch())

    @work(thread=True, exclusive=True, group="ingest", exit_on_error=False)
    def ingest_worker(self, paths: list[Path], cancel: threading.Event, epoch: int) -> None:
        def progress(p: EngineIngestProgress) -> None:
            self.post_if_live(IngestProgress(epoch, stage=p.stage, done=p.done, total=p.total))

        try:
            results = self.engine.ingest(self.vault_id, paths, recursive=True, progress=progress, cancel=cancel)
        except Exception as exc:  # noqa: BLE001 - shown inline, never a hung UI
            self.post_if_live(IngestDone(epoch, error=self.describe(exc)))
            return
        self.post_if_live(IngestDone(epoch, results=results))

    def on_ingest_progress(self, message: IngestProgress) -> None:
        if self.epoch_live(message.epoch):
            self.query_one("#ingest-progress", ProgressBar).update(total=message.total, progress=message.done)

    def on_ingest_done(self, message: IngestDone) -> None:
        self.cancel_event = None
        self.query_one("#run", Button).disabled = False
        if not self.epoch_live(message.epoch):
            return
        out = self.query_one("#ingest-message", Static)
        if message.error:
            self.query_one("#ingest-progress").display = False
            out.update(Text(message.error, style="bold red"))
            return
        table = self.query_one("#ingest-results", DataTable)
        counts: dict[str, int] = {}
        for result in message.results:
            counts[result.status] = counts.get(result.status, 0) + 1
            table.add_row(plain(Path(result.file).name), plain(status_name(result.status), STATUS_STYLE.get(result.status, "")),
                          plain(result.chunks), plain(result.title or reason_text(result.reason), "" if result.title else "dim"),
                          plain(result.id or "", "dim"))
        summary = _(", ").join(f"{n} {status_name(status)}" for status, n in counts.items())
        out.update(Text(_("Done: {summary}.").format(summary=summary), style="bold green"))
        self.query_one("#paths", Input).value = ""
        if counts.get("created") or counts.get("updated"):
            self.memories.request_embedding()  # new text: give it vectors in the background

    def on_unmount(self) -> None:
        if self.cancel_event is not None:
            self.cancel_event.set()

