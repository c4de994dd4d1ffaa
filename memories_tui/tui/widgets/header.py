"""The app's header line: the screen's title and sub-title, drawn like Textual's Header.

Built from public widgets rather than by subclassing Header: Header schedules a title update
when it starts watching the titles, and if its screen is removed before that update runs
(quitting right after a screen switch) the update fails and the app exits with a traceback.
Here an update for a header that is gone does nothing.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.events import Click
from textual.widget import Widget
from textual.widgets import Static

from ...i18n import _


class HeaderIcon(Static):
    """The ⭘ at the left; a click opens the command palette."""

    DEFAULT_CSS = """
    HeaderIcon { dock: left; padding: 0 1; width: 8; content-align: left middle; }
    HeaderIcon:hover { background: $foreground 10%; }
    """

    def on_mount(self) -> None:
        self.tooltip = _("Open the command palette")

    async def on_click(self, event: Click) -> None:
        event.stop()
        await self.run_action("app.command_palette")


class AppHeader(Widget):
    DEFAULT_CSS = """
    AppHeader { dock: top; width: 100%; background: $panel; color: $foreground; height: 1; }
    AppHeader #header-title { text-wrap: nowrap; text-overflow: ellipsis; content-align: center middle;
                              width: 100%; }
    AppHeader #header-space { dock: right; width: 10; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        yield HeaderIcon("⭘")
        yield Static(id="header-title")
        yield Static(id="header-space")

    def on_mount(self) -> None:
        for owner in (self.app, self.screen):
            self.watch(owner, "title", self._show_title)
            self.watch(owner, "sub_title", self._show_title)

    def _show_title(self) -> None:
        if not self.is_attached:  # its screen was removed meanwhile
            return
        screen = self.screen
        title = screen.title if screen.title is not None else self.app.title
        sub_title = screen.sub_title if screen.sub_title is not None else self.app.sub_title
        for label in self.query("#header-title").results(Static):
            label.update(self.app.format_title(title, sub_title))
