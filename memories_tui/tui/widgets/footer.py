"""The app's footer: Textual's Footer, compact on a narrow terminal so the keys that matter
everywhere (f1 Help, ^l Lock) stay on screen at 80 columns."""

from __future__ import annotations

from textual import events
from textual.widgets import Footer

NARROW = 100  # below this many columns: less space between keys, no "^p palette" (F1 lists it)


class AppFooter(Footer):
    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW
        if self.compact != narrow:
            self.compact = narrow
            self.show_command_palette = not narrow
            self.call_after_refresh(self.recompose)
