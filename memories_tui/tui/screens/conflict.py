"""A record edited on two devices at once, side by side: the winner the vault shows (left) and
the revision that lost (right), with the three ways to end it — keep this side, keep both (the
other becomes a new record), or merge by hand in the editor (the three-way result, conflict
markers only around the parts both devices changed). Whatever is chosen, the next sync ends the conflict on every device."""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from ...engine import Conflict, ConflictRevision, Record, marked_merge
from ...errors import MemoriesError
from ...i18n import N_, _
from ..textual_adapter import node_bindings
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from .base import VaultScreen
from .confirm import ConfirmScreen
from .editor import RecordEditorScreen


def merge_text(winner: Record, other: ConflictRevision) -> str:
    """The three-way merge with the text both came from, git-style conflict markers only around
    the parts both devices changed; both whole bodies between markers when that text is gone."""
    mine, theirs = _("shown (winner)"), _("other device")
    if other.base is not None:
        return marked_merge(other.base, winner.body, other.body or "", mine, theirs)
    return f"<<<<<<< {mine}\n{winner.body.rstrip()}\n=======\n{(other.body or '').rstrip()}\n>>>>>>> {theirs}\n"


_TEXT_ACTIONS = ("keep_both", "merge")  # they need the other side's text: not against a deletion


class ConflictScreen(VaultScreen):
    BINDINGS = [
        Binding("w", "keep_winner", N_("Keep shown"), tooltip=N_("Keep the winner; the other revision is dropped"),
                id="conflict.keep_winner"),
        Binding("o", "keep_other", N_("Keep other"), tooltip=N_("Keep the other revision instead of the winner"),
                id="conflict.keep_other"),
        Binding("b", "keep_both", N_("Keep both"), tooltip=N_("Keep the winner; the other becomes a new record"),
                id="conflict.keep_both"),
        Binding("m", "merge", N_("Merge"), tooltip=N_("Edit both texts into one in the editor"), id="conflict.merge"),
        Binding("escape", "app.pop_screen", N_("Back"), id="conflict.back"),
    ]
    HELP_TITLE = N_("Conflict")

    def __init__(self, vault_id: str, record: Record, conflict: Conflict) -> None:
        super().__init__(vault_id)
        self.record = record
        self.conflict = conflict
        live = [k for k in conflict.kept if not k.deleted]
        self.other: ConflictRevision | None = live[0] if live else None
        # the other side is a deletion an edit beat: o lets it win (the record goes on every device);
        # it was made here (another device's edit beat it) or on another device (this one's edit did)
        self.deletion = next((k for k in conflict.kept if k.deleted), None) if self.other is None else None

    def compose(self) -> ComposeResult:
        yield AppHeader()
        yield Static(self._summary(), id="conflict-summary")
        with Horizontal(id="conflict-sides"):
            with VerticalScroll(id="conflict-winner", classes="conflict-side"):
                yield Static(self._side(_("Shown (the winner)"), self.record.title, self.record.body))
            with VerticalScroll(id="conflict-other", classes="conflict-side"):
                if self.other is not None:
                    side = _("This device's edit") if self.other.here else _("Other device")  # the one that lost
                    yield Static(self._side(side, self.other.title or "", self.other.body or ""))
                elif self.deletion is not None and self.deletion.here:
                    yield Static(Text(_("Your deletion on this device (another device's edit won over it)."),
                                      style="italic"))
                else:
                    yield Static(Text(_("A deletion on another device (an edit won over it)."), style="italic"))
        yield AppFooter()

    def _summary(self) -> Text:
        if self.deletion is not None and self.deletion.here:
            return Text(_("“{title}” was deleted here while another device edited it; the edit won. w keeps the "
                          "edit, o deletes it on every device (your deletion wins).").format(title=self.record.title),
                        style="yellow")
        if self.deletion is not None:
            return Text(_("“{title}” was edited on one device while another deleted it; the edit won. w keeps it, "
                          "o deletes it on every device (the deletion wins).").format(title=self.record.title),
                        style="yellow")
        return Text(_("“{title}” was edited on two devices at once. w keeps the shown text, o the other, b keeps "
                      "both (the other as a new record), m merges them in the editor.").format(
                          title=self.record.title), style="yellow")

    @staticmethod
    def _side(label: str, title: str, body: str) -> Text:
        text = Text(label + "\n", style="bold reverse")
        text.append(title + "\n\n", style="bold")
        text.append(body)
        return text

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Against a deletion there is no other text: keep both and merge are not offered."""
        if action in _TEXT_ACTIONS and self.deletion is not None:
            return False
        return super().check_action(action, parameters)

    def on_key(self, event: events.Key) -> None:
        """A hidden key pressed anyway (keep both, merge against a deletion) says why it does nothing."""
        if self.deletion is None:
            return
        if any(key == event.key and binding.action in _TEXT_ACTIONS for key, binding in node_bindings(self)):
            event.stop()
            self.notify(_("There is no other text to keep or merge: the other side is a deletion. w keeps the edit, "
                          "o lets the deletion win."), severity="warning", timeout=6)

    def _done(self, note: str) -> None:
        self.notify(note, timeout=4)
        self.dismiss(True)

    def _failed(self, exc: MemoriesError) -> None:
        self.notify(exc.localized(), severity="error", markup=False)

    def action_keep_winner(self) -> None:
        try:
            self.engine.resolve_conflict(self.vault_id, self.record.id)
        except MemoriesError as exc:
            self._failed(exc)
            return
        self._done(_("Kept the shown text; the next sync ends the conflict everywhere."))

    def action_keep_other(self) -> None:
        if self.deletion is not None:
            detail = (_("Your deletion wins: the next sync deletes “{title}” on every device.") if self.deletion.here
                      else _("The other device's deletion wins: the next sync deletes “{title}” on every device."))
            question = ConfirmScreen(_("Delete this record on every device?"), detail.format(title=self.record.title),
                                     yes=_("Delete"), no=_("Keep it"), danger=True)
            self.app.push_screen(question, self._delete_answered)
            return
        if self.other is None:
            return
        try:
            self.engine.resolve_conflict(self.vault_id, self.record.id, keep=self.other.revision)
        except MemoriesError as exc:
            self._failed(exc)
            return
        self._done(_("Kept this device's text; the next sync ends the conflict everywhere.")
                   if self.other.here else
                   _("Kept the other device's text; the next sync ends the conflict everywhere."))

    def _delete_answered(self, yes: bool | None) -> None:
        if not yes or self.deletion is None:
            return
        try:
            self.engine.resolve_conflict(self.vault_id, self.record.id, keep=self.deletion.revision)
        except MemoriesError as exc:
            self._failed(exc)
            return
        self._done(_("Deleted; the next sync deletes it on every device and ends the conflict."))

    def action_keep_both(self) -> None:
        try:
            copies = self.engine.keep_both(self.vault_id, self.record.id)
        except MemoriesError as exc:
            self._failed(exc)
            return
        self._done(_("Kept both: the other text is the new record “{title}”.").format(
            title=copies[0].title) if copies else _("Kept the shown text; the next sync ends the conflict everywhere."))

    def action_merge(self) -> None:
        if self.other is None:
            return
        if self.record.kind == "asset":
            self.notify(_("A file asset cannot be merged: w keeps the shown file, o the other device's, b both."),
                        severity="warning", timeout=6)
            return
        draft = replace(self.record, body=merge_text(self.record, self.other))
        label = (_("Merged; the parts both devices changed are between conflict markers: edit them into one; ctrl+s "
                   "saves it and ends the conflict") if self.other.base is not None else
                 _("Both texts, between conflict markers: edit them into one; ctrl+s saves it and ends the conflict"))
        self.app.push_screen(RecordEditorScreen(self.vault_id, self.record, restore=draft, label=label), self._merged)

    def _merged(self, saved: Record | None) -> None:
        if saved is None:
            return
        try:
            self.engine.resolve_conflict(self.vault_id, self.record.id)
        except MemoriesError as exc:
            self._failed(exc)
            return
        self._done(_("Saved the merged text; the next sync ends the conflict everywhere."))
