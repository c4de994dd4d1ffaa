"""The app's header: Textual's Header without a shutdown race.

Textual's Header schedules a title update when it starts watching the titles; if its screen is
removed before that update runs (quitting right after a screen switch), the update fails with
NoMatches and the app exits with a traceback. This header skips the update instead.
"""

from __future__ import annotations

from textual.css.query import NoMatches
from textual.dom import NoScreen
from textual.events import Mount
from textual.widgets import Header
from textual.widgets._header import HeaderTitle


class AppHeader(Header):
    def _on_mount(self, event: Mount) -> None:
        event.prevent_default()  # replaces Header._on_mount

        async def set_title() -> None:
            try:
                self.query_one(HeaderTitle).update(self.format_title())
            except (NoScreen, NoMatches):  # removed meanwhile
                pass

        self.watch(self.app, "title", set_title)
        self.watch(self.app, "sub_title", set_title)
        self.watch(self.screen, "title", set_title)
        self.watch(self.screen, "sub_title", set_title)
