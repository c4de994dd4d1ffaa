"""A yes/no question in a modal dialog (short passphrase, delete a record).

The safe answer has the focus, so an absent-minded enter never does the risky thing;
esc answers no.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from ...i18n import N_, _
from ..wrap import BrokenLines


class ConfirmScreen(ModalScreen[bool | None]):
    """Dismisses with True for `yes`, False for `no`; esc answers False, or None when both
    answers do something (`cancellable`: esc then does neither)."""

    BINDINGS = [Binding("escape", "cancel", N_("Cancel"), id="confirm.cancel")]
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    #confirm-box { width: 64; max-width: 95%; height: auto; border: thick $warning; background: $surface;
                   padding: 1 2; }
    #confirm-title { text-style: bold; color: $warning; height: auto; margin-bottom: 1; }
    #confirm-text { height: auto; margin-bottom: 1; }
    #confirm-buttons { height: auto; align-horizontal: right; }
    #confirm-buttons Button { margin-left: 2; }
    """

    def __init__(self, title: str, text: str, *, yes: str, no: str | None = None, danger: bool = False,
                 cancellable: bool = False) -> None:
        super().__init__()
        self.cancellable = cancellable
        self.title_text = title
        self.text = text
        self.yes = yes
        self.no = no if no is not None else _("Cancel")
        self.danger = danger

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(Text(self.title_text), id="confirm-title")
            yield Static(BrokenLines(Text(self.text)), id="confirm-text")
            with Horizontal(id="confirm-buttons"):
                yield Button(self.no, id="no", variant="primary")
                yield Button(self.yes, id="yes", variant="error" if self.danger else "warning")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_cancel(self) -> None:
        self.dismiss(None if self.cancellable else False)
