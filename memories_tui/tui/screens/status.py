"""Status: engine.status() for the unlocked vault, flattened into a table."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Footer, Header, Static

from ..messages import StatusDone, describe
from ..text import plain
from .base import VaultScreen


def flatten(data: object, prefix: str = "") -> list[tuple[str, object]]:
    if isinstance(data, dict):
        rows: list[tuple[str, object]] = []
        for key, value in data.items():
            rows.extend(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return rows
    if isinstance(data, list | tuple) and data and all(isinstance(x, dict) for x in data):
        rows = []
        for n, value in enumerate(data):
            rows.extend(flatten(value, f"{prefix}[{n}]"))
        return rows
    return [(prefix, data)]


def show_value(key: str, value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    leaf = key.rsplit(".", 1)[-1]
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 1e9 and (
            leaf in ("last_build", "built_at") or leaf.endswith("_at")):
        return datetime.fromtimestamp(value).isoformat(sep=" ", timespec="seconds")
    return str(value)


class StatusScreen(VaultScreen):
    BINDINGS = [
        Binding("escape", "back", "Back", id="back"),
        Binding("r", "refresh_status", "Refresh", id="status.refresh"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="status"):
            yield Static(id="status-head")
            yield DataTable(id="status-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#status-table", DataTable)
        table.add_column("Setting", key="key", width=34)
        table.add_column("Value", key="value")
        self.sub_title = self.engine.vault_name(self.vault_id)
        self.action_refresh_status()

    def action_back(self) -> None:
        self.dismiss()

    def action_refresh_status(self) -> None:
        self.query_one("#status-table", DataTable).loading = True
        self.status_worker(self.epoch())

    @work(thread=True, exclusive=True, group="status", exit_on_error=False)
    def status_worker(self, epoch: int) -> None:
        engine = self.engine
        try:
            status: dict[str, object] = {"vault": {"name": engine.vault_name(self.vault_id), "vault_id": self.vault_id,
                                                   "device_only": engine.device_only(self.vault_id)}}
            status.update({k: v for k, v in engine.status(self.vault_id).to_json().items() if k != "vault_id"})
            status["home"] = str(engine.home)
            status["config"] = str(engine.config.path)
            status["tui.idle_lock_minutes"] = engine.config.tui.idle_lock_minutes
        except Exception as exc:  # noqa: BLE001 - shown inline, never a hung UI
            self.post_if_live(StatusDone(epoch, error=describe(exc)))
            return
        self.post_if_live(StatusDone(epoch, status=status))

    def on_status_done(self, message: StatusDone) -> None:
        if not self.epoch_live(message.epoch):
            return
        table = self.query_one("#status-table", DataTable)
        table.loading = False
        head = self.query_one("#status-head", Static)
        if message.error:
            head.update(Text(message.error, style="bold red"))
            return
        head.update(Text("Vault, index and limits", style="bold"))
        table.clear()
        for key, value in flatten(message.status):
            table.add_row(plain(key, "cyan"), plain(show_value(key, value)))
