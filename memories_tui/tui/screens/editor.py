"""Write a new record or a new revision of one, and browse its revisions.

Saving runs in a worker (encryption and the vault write are quick, but never on the UI
thread). Leaving with unsaved changes asks first. Every text is shown literally.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Select, Static, TextArea
from textual.widgets.option_list import Option

from ...engine import KINDS, Kind, Record, marked_merge
from ...errors import ErrorCode, MemoriesError
from ...frontend.words import kind_name
from ...i18n import N_, _
from ..messages import WorkerMessage
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from .base import VaultScreen
from .confirm import ConfirmScreen

NEW_KINDS = [(N_("memory"), "memory"), (N_("knowledge card"), "card"), (N_("private (never indexed)"), "private")]


@dataclass(eq=False, kw_only=True)
class RecordSaved(WorkerMessage):
    record: Record | None = None
    error: str | None = None
    moved_on: Record | None = None  # not saved: the record is at this newer revision now (record_changed)
    gone: bool = False  # not saved: the record was deleted meanwhile (a sync brought another device's deletion)


MARKER_STARTS = ("<<<<<<< ", ">>>>>>> ")  # and "=======": the lines marked_merge and the conflict view write


def has_conflict_markers(text: str) -> bool:
    """Whether `text` still has a whole conflict-marker line as the merges write them."""
    return any(line.startswith(MARKER_STARTS) or line == "=======" for line in text.splitlines())


@dataclass(frozen=True)
class Draft:
    kind: Kind
    title: str
    tags: tuple[str, ...]
    body: str


def parse_tags(value: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t.strip() for t in value.split(",") if t.strip()))


class NoteTextArea(TextArea):
    """Textual's TextArea has no document start / end keys; an editor for notes needs them."""

    BINDINGS = [
        Binding("ctrl+home", "document_edge(False)", N_("Start of text"), id="editor.text_start", show=False),
        Binding("ctrl+end", "document_edge(True)", N_("End of text"), id="editor.text_end", show=False),
    ]

    def action_document_edge(self, end: bool) -> None:
        self.move_cursor(self.document.end if end else (0, 0))


class RecordEditorScreen(VaultScreen):
    """`record` None: a new record; else a new revision of `record` (the latest revision). With
    `restore`, an older revision of it fills the fields: saving makes it the newest revision.
    Dismisses with the saved record or None."""

    BINDINGS = [
        Binding("ctrl+s", "save", N_("Save"), id="editor.save", priority=True),
        Binding("escape", "back", N_("Cancel"), id="back"),
        VaultScreen.ENTER_BINDING,
    ]
    ENTER_NEXT = {"editor-title": "#editor-tags", "editor-tags": "#editor-body"}
    HELP_TITLE = N_("Edit a record")
    GUIDE = N_("Write the title, optional tags (comma-separated) and the text (Markdown is fine). ctrl+s saves: a "
             "new record, or a new revision of the one you edit (older revisions stay readable with [ and ] "
             "or h in the records screen). esc leaves; with unsaved changes it asks first. Tab and shift+tab "
             "move between the fields; in the text, ctrl+home and ctrl+end go to its start and end.")

    def __init__(self, vault_id: str, record: Record | None = None, *, restore: Record | None = None,
                 label: str | None = None) -> None:
        super().__init__(vault_id)
        self.record = record
        self.restore = restore if record is not None else None
        self.label = label  # says where a prefilled text that is not an older revision comes from (a merge)
        self.merged = label is not None  # the text is a merge that may have conflict markers: saving them asks
        self.saving = False

    def compose(self) -> ComposeResult:
        shown = self.restore or self.record  # what fills the fields
        yield AppHeader()
        with Vertical(id="editor"):
            with Horizontal(id="editor-row"):
                if self.record is None:
                    yield Select([(_(label), kind) for label, kind in NEW_KINDS], value="memory", allow_blank=False,
                                 id="editor-kind")
                else:
                    what = _("{kind} · new revision {revision}").format(kind=kind_name(self.record.kind),
                                                                       revision=self.record.revision + 1)
                    if self.restore is not None and self.label is None:
                        what += " " + _("from revision {revision}").format(revision=self.restore.revision)
                    yield Static(Text(what), id="editor-kind-fixed")
                yield Input(value=shown.title if shown else "", placeholder=_("Title"), id="editor-title")
            yield Input(value=", ".join(shown.tags) if shown else "",
                        placeholder=_("tags, comma-separated (optional)"), id="editor-tags")
            yield Label(self._text_label())
            yield NoteTextArea(shown.body if shown else "", id="editor-body", soft_wrap=True)
            yield Static(id="editor-error", classes="error")
        yield AppFooter()

    def _text_label(self) -> str:
        if self.label is not None:
            return self.label
        if self.record is None or self.restore is None:
            return _("Text")
        return _("Text of revision {restored}, restored: ctrl+s saves it as the newest revision ({next}); revision "
                 "{revision} stays readable").format(restored=self.restore.revision, next=self.record.revision + 1,
                                                     revision=self.record.revision)

    def on_mount(self) -> None:
        # at once, not a turn later: keys typed right after the key that opened the editor land here
        self.set_focus(self.query_one("#editor-title" if self.record is None else "#editor-body"))
        record = self.record
        # unchanged means "as the latest revision is": a restored older text is a change to save
        self.original = (Draft(record.kind, record.title, tuple(record.tags), record.body)
                         if record is not None and self.restore is not None else self.draft())

    def draft(self) -> Draft:
        if self.record is not None:
            kind = self.record.kind
        else:  # a new record: the kind chosen in the form
            chosen = self.query_one("#editor-kind", Select).value
            kind = next(k for k in KINDS if k == chosen)
        return Draft(kind, self.query_one("#editor-title", Input).value.strip(),
                     parse_tags(self.query_one("#editor-tags", Input).value),
                     self.query_one("#editor-body", TextArea).text)

    def action_save(self) -> None:
        if self.saving:
            return
        draft = self.draft()
        if not draft.title:
            self.show_error(_("Give the record a title."))
            self.query_one("#editor-title", Input).focus()
            return
        if self.record is not None and draft == self.original:
            self.dismiss(None)  # nothing changed: no new revision
            return
        if self.merged and has_conflict_markers(draft.body):
            question = ConfirmScreen(_("Conflict markers left"),
                                     _("The text still has conflict markers (<<<<<<< … >>>>>>>). Save it with them "
                                       "anyway?"), yes=_("Save anyway"), no=_("Keep editing"))
            self.app.push_screen(question, lambda anyway: self._save(draft) if anyway else None)
            return
        self._save(draft)

    def _save(self, draft: Draft, *, as_new: bool = False) -> None:
        if self.saving:
            return
        self.saving = True
        self.show_error(_("Saving…"))
        self.save_worker(draft, self.epoch(), as_new)

    @work(thread=True, exclusive=True, group="record-save", exit_on_error=False)
    def save_worker(self, draft: Draft, epoch: int, as_new: bool = False) -> None:
        try:
            if self.record is None or as_new:
                saved = self.engine.add_record(self.vault_id, kind=draft.kind, title=draft.title, body=draft.body,
                                               tags=draft.tags)
            else:
                saved = self.engine.update_record(self.vault_id, self.record.id, title=draft.title,
                                                  body=draft.body, tags=draft.tags,
                                                  expected_revision=self.record.revision)
        except Exception as exc:  # noqa: BLE001 - shown inline, never a hung UI
            self.post_if_live(self._not_saved(exc, epoch))
            return
        self.post_if_live(RecordSaved(epoch, record=saved))

    def _not_saved(self, exc: Exception, epoch: int) -> RecordSaved:
        """What a failed save says; when the record moved on (`record_changed`), its newer revision;
        when it is gone (`not_found` and no revision of it left), that it was deleted."""
        if isinstance(exc, MemoriesError) and exc.code == ErrorCode.RECORD_CHANGED and self.record is not None:
            try:
                return RecordSaved(epoch, moved_on=self.engine.read_record(self.vault_id, self.record.id))
            except Exception as again:  # noqa: BLE001 - shown inline, never a hung UI
                exc = again
        if isinstance(exc, MemoriesError) and exc.code == ErrorCode.NOT_FOUND and self.record is not None:
            try:
                if not self.engine.revisions(self.vault_id, self.record.id):
                    return RecordSaved(epoch, gone=True)
            except Exception as again:  # noqa: BLE001 - shown inline, never a hung UI
                exc = again
        return RecordSaved(epoch, error=self.describe(exc))

    def on_record_saved(self, message: RecordSaved) -> None:
        self.saving = False
        if message.moved_on is not None:
            self._merge_with(message.moved_on)
            return
        if message.gone:
            self._offer_new_note()
            return
        if message.error is not None or message.record is None:
            self.show_error(message.error or _("Not saved."))
            return
        self.dismiss(message.record)

    def _offer_new_note(self) -> None:
        """The record was deleted while it was edited here (a sync brought another device's
        deletion, or another program deleted it): no revision can be added to it, so the text
        typed here is offered as a new record of the same kind; it stays in the editor either way."""
        assert self.record is not None
        title = self.record.title
        self.show_error(_("Not saved: “{title}” was deleted (on another device, or elsewhere) while you edited it. "
                          "Your text is still here; ctrl+s offers to save it as a new note.").format(title=title))
        question = ConfirmScreen(_("Deleted while you edited it"),
                                 _("“{title}” was deleted (on another device, or elsewhere) while you edited it. Save "
                                   "your text as a new note?").format(title=title),
                                 yes=_("Save as a new note"), no=_("Keep editing"))
        self.app.push_screen(question, lambda save: self._save(self.draft(), as_new=True) if save else None)

    def _merge_with(self, now: Record) -> None:
        """The record moved on while it was edited here (a sync brought another device's edit, or
        another program wrote it): saving would have dropped that change. The fields now hold
        this text merged with it, three-way from the revision the editor opened (a field only one
        side changed takes that side; the body's parts both changed are between markers), and the
        next save makes a revision of the newer one."""
        assert self.record is not None
        opened, draft = self.record, self.draft()
        body = marked_merge(opened.body, draft.body, now.body, _("your edit"),
                            _("revision {revision}").format(revision=now.revision))
        title = now.title if draft.title == opened.title else draft.title
        tags = now.tags if draft.tags == tuple(opened.tags) else draft.tags
        self.record, self.restore = now, None
        self.original = Draft(now.kind, now.title, tuple(now.tags), now.body)
        self.query_one("#editor-kind-fixed", Static).update(Text(_("{kind} · new revision {revision}").format(
            kind=kind_name(now.kind), revision=now.revision + 1)))
        self.query_one("#editor-title", Input).value = title
        self.query_one("#editor-tags", Input).value = ", ".join(tags)
        self.query_one("#editor-body", TextArea).text = body
        both = "<<<<<<< " in body and body != draft.body
        self.merged = self.merged or both
        self.show_error(_("Not saved: this record changed while you edited it (revision {revision}: a sync brought "
                          "another device's edit, or another program wrote it). Your edit is merged into it here{how}. "
                          "Review it, then ctrl+s saves.").format(
            revision=now.revision, how=_(": what both changed is between <<<<<<< and >>>>>>> markers") if both
            else _(", nothing overlapped")))

    def show_error(self, text: str) -> None:
        self.query_one("#editor-error", Static).update(Text(text))

    def has_unsaved_text(self) -> bool:
        """Whether leaving now loses what was typed (or a merge not saved yet)."""
        return self.is_mounted and self.draft() != self.original

    def action_back(self) -> None:
        if self.saving:
            return
        if self.draft() == self.original:
            self.dismiss(None)
            return
        question = ConfirmScreen(_("Unsaved changes"), _("Leave without saving? What you typed here is lost."),
                                 yes=_("Discard changes"), no=_("Keep editing"), danger=True)
        self.app.push_screen(question, self._leave_if)

    def _leave_if(self, discard: bool | None) -> None:
        if discard:
            self.dismiss(None)


@dataclass(frozen=True)
class RevisionChoice:
    revision: int
    restore: bool  # True: open it in the editor, to save as the newest revision


class RevisionsScreen(ModalScreen[RevisionChoice | None]):
    """Every revision of one record, newest first; enter picks one for the reader, r restores it."""

    BINDINGS = [
        Binding("escape", "close", N_("Close"), id="revisions.close"),
        Binding("r", "restore", N_("Restore"), id="revisions.restore"),
    ]
    DEFAULT_CSS = """
    RevisionsScreen { align: center middle; }
    #revisions-box { width: 72; max-width: 95%; height: auto; max-height: 80%; border: round $accent;
                     background: $surface; padding: 0 1; }
    #revisions-title { text-style: bold; height: auto; margin-bottom: 1; }
    #revisions-list { height: auto; max-height: 20; }
    #revisions-keys { height: auto; color: $text-muted; margin-top: 1; }
    """

    def __init__(self, title: str, revisions: list[tuple[int, str, str]], current: int) -> None:
        super().__init__()
        self.title_text = title
        self.revisions = revisions  # (revision, updated, title), oldest first
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="revisions-box"):
            yield Static(Text(_("Revisions of {title}").format(title=self.title_text)), id="revisions-title")
            options = []
            for revision, updated, title in reversed(self.revisions):
                row = Text()
                row.append(_("rev {revision}").format(revision=revision), style="bold" if revision == self.current else "")
                row.append(f"  {updated[:16].replace('T', ' ')}  ", style="dim")
                row.append(title)
                options.append(Option(row, id=str(revision)))
            yield OptionList(*options, id="revisions-list")
            yield Static(Text(_("enter shows it · r restores it (opens it in the editor; saving makes it the "
                                "newest revision) · esc closes")), id="revisions-keys")

    def on_mount(self) -> None:
        options = self.query_one("#revisions-list", OptionList)
        options.focus()
        ids = [str(r) for r, _, _ in reversed(self.revisions)]
        if str(self.current) in ids:
            options.highlighted = ids.index(str(self.current))

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(RevisionChoice(int(event.option.id or 0), restore=False))

    def action_restore(self) -> None:
        options = self.query_one("#revisions-list", OptionList)
        if options.highlighted is not None:
            option = options.get_option_at_index(options.highlighted)
            self.dismiss(RevisionChoice(int(option.id or 0), restore=True))

    def action_close(self) -> None:
        self.dismiss(None)
