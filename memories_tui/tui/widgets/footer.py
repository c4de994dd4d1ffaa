"""The app's footer: Textual's Footer, compact on a narrow terminal so the keys that matter
everywhere (f1 Help, ^l Lock) stay on screen at 80 columns, its keys described in the
reader's language."""

from __future__ import annotations

from textual import events

from ...i18n import _
from ..textual_adapter import RelabelledFooter

NARROW = 100  # below this many columns: less space between keys, no "^p palette" (F1 lists it)


class AppFooter(RelabelledFooter):
    def relabel(self, text: str) -> str:
        return _(text)

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW
        if self.compact != narrow:
            self.compact = narrow
            self.show_command_palette = not narrow
            self.call_after_refresh(self.recompose)
