"""Status of the unlocked vault in sections for people (see status_view.py)."""

from __future__ import annotations

from datetime import datetime

from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from ...frontend.grant_records import revoke, running_servers
from ...i18n import N_, _, _n
from ..messages import StatusDone
from ..status_view import Section, sections
from ..text import tilde
from ..widgets.footer import AppFooter
from ..widgets.header import AppHeader
from .base import VaultScreen


class StatusScreen(VaultScreen):
    BINDINGS = [
        Binding("escape", "back", N_("Back"), id="back"),
        Binding("r", "refresh_status", N_("Refresh"), id="status.refresh"),
        Binding("x", "revoke_mcp", N_("Revoke AI client access"), id="status.revoke_mcp"),
        Binding("s", "sync_now", N_("Sync now"), id="status.sync_now"),
        Binding("d", "sync_devices", N_("Sync devices"), id="status.sync_devices", show=False),  # the footer is full at 80
    ]

    HELP_TITLE = N_("Status")
    GUIDE = N_("What the unlocked vault holds, its indexes, limits, the embedding model and its sync. r refreshes; "
               "s syncs now (the background sync pulls other devices' changes only every [sync] every_minutes); d lists "
               "the devices that sync this vault.")

    def compose(self) -> ComposeResult:
        yield AppHeader()
        with VerticalScroll(id="status"):
            yield Static(id="status-head")
            yield Static(id="status-body")
        yield AppFooter()

    view: list[Section] = []

    def on_mount(self) -> None:
        self.sub_title = self.engine.vault_name(self.vault_id)
        self.action_refresh_status()

    def action_back(self) -> None:
        self.dismiss()

    def action_refresh_status(self) -> None:
        self.query_one("#status-body", Static).loading = True
        self.status_worker(self.epoch())

    @work(thread=True, exclusive=True, group="status", exit_on_error=False)
    def status_worker(self, epoch: int) -> None:
        engine = self.engine
        try:
            servers = running_servers(engine.home, self.vault_id)
            mcp = ", ".join(
                f"pid {s.pid}" + (" " + _("(until {time})").format(time=f"{datetime.fromtimestamp(s.expires_at):%Y-%m-%d %H:%M}")
                                  if s.expires_at else "")
                for s in servers) or _("none")
            sharing = self.memories.daemon_link.sharing_rows(self.vault_id)  # blocks on a daemon's socket
            view = sections(name=engine.vault_name(self.vault_id), vault_id=self.vault_id,
                            device_only=engine.device_only(self.vault_id), status=engine.status(self.vault_id),
                            home=tilde(engine.home), config=tilde(engine.config.path),
                            idle_lock_minutes=float(engine.config.tui.idle_lock_minutes), mcp_servers=mcp,
                            sharing=sharing, sources=engine.list_sources(self.vault_id),
                            sync=engine.sync_status(self.vault_id))
        except Exception as exc:  # noqa: BLE001 - shown inline, never a hung UI
            self.post_if_live(StatusDone(epoch, error=self.describe(exc)))
            return
        self.post_if_live(StatusDone(epoch, status=view))

    def action_revoke_mcp(self) -> None:
        """End the grant of every MCP server reading this vault (they refuse from their next call)."""
        servers = running_servers(self.engine.home, self.vault_id)
        revoke(self.engine.home, self.vault_id)
        self.notify(_n("MCP access to this vault revoked ({n} running server).",
                       "MCP access to this vault revoked ({n} running servers).", len(servers)).format(n=len(servers))
                    if servers else _("No MCP server was reading this vault; any started earlier is revoked too."))
        self.action_refresh_status()

    def action_sync_now(self) -> None:
        """The sync dialog (screens/sync_now.py; the target's first if there is none); the status
        again once it closes."""
        from .sync_now import start_sync

        start_sync(self.memories, self.vault_id, self.engine.vault_name(self.vault_id), self.action_refresh_status)

    def action_sync_devices(self) -> None:
        from .sync_devices import SyncDevicesScreen

        self.app.push_screen(SyncDevicesScreen(self.vault_id), lambda _closed: self.action_refresh_status())

    def on_status_done(self, message: StatusDone) -> None:
        if not self.epoch_live(message.epoch):
            return
        body = self.query_one("#status-body", Static)
        body.loading = False
        head = self.query_one("#status-head", Static)
        if message.error:
            head.update(Text(message.error, style="bold red"))
            return
        head.update(Text(_("r refreshes · memories rag status --json prints every key"), style="dim"))
        self.view = message.status
        body.update(render_sections(self.view))


def render_sections(view: list[Section]) -> Group:
    """One heading and a two-column grid per section; long values wrap under their own column."""
    width = max((cell_len(row.label) for section in view for row in section.rows), default=10)
    parts: list[Text | Table] = []
    for n, section in enumerate(view):
        parts.append(Text(("\n" if n else "") + section.title, style="bold underline"))
        grid = Table.grid(padding=(0, 2))
        grid.add_column(width=width, style="cyan", no_wrap=True)
        grid.add_column(ratio=1, overflow="fold")  # long paths fold, never "…"
        for row in section.rows:
            grid.add_row(Text(row.label), Text(row.value, style="yellow" if row.warn else ""))
        parts.append(grid)
    return Group(*parts)
