"""The one-line status of background embedding (after unlock, ingest or a record change).

The app holds one `EmbedState` in its `embed_state` reactive; every `EmbedStatus` line (on
the records, ingest and search screens) watches it. Hidden when there is nothing to say
(no model installed, or nothing happened since unlock).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.widgets import Static

from ...engine import IndexReport
from ...i18n import _, _n
from ..text import human_eta


@dataclass(frozen=True)
class EmbedState:
    phase: str = "idle"  # idle | starting | running | done | failed
    done: int = 0
    total: int = 0
    tokens_per_second: float = 0.0
    eta_seconds: float | None = None
    report: IndexReport | None = None
    vectors: int = 0  # chunks with a vector once done
    message: str = ""

    @property
    def active(self) -> bool:
        return self.phase in ("starting", "running")


def progress_text(state: EmbedState) -> str:
    """`48/120 chunks · 1,234 tok/s · ETA 6s` (or `preparing…` before the first batch)."""
    if state.phase != "running" or not state.total:
        return _("preparing…")
    return _("{done:,}/{total:,} chunks · {speed:,.0f} tok/s · ETA {eta}").format(
        done=state.done, total=state.total, speed=state.tokens_per_second, eta=human_eta(state.eta_seconds))


def status_text(state: EmbedState) -> Text | None:
    if state.active:
        line = Text(_("Semantic index: "), style="bold")
        line.append(_("embedding {progress}").format(progress=progress_text(state)) if state.phase == "running"
                    else _("preparing…"))
        line.append("  " + _("(background; searches keep working)"), style="dim")
        return line
    if state.phase == "done":
        report = state.report
        line = Text(_("Semantic index ready"), style="green")
        parts = []
        if state.vectors:
            parts.append(_n("{n:,} chunk with vectors", "{n:,} chunks with vectors", state.vectors).format(n=state.vectors))
        if report is not None and report.embedded:
            parts.append(_("{n:,} embedded in {seconds:.1f} s").format(n=report.embedded, seconds=report.seconds))
        if report is not None and report.reused:
            parts.append(_("{n:,} from the encrypted cache").format(n=report.reused))
        if report is not None and report.truncated:
            parts.append(_("{n:,} truncated").format(n=report.truncated))
        if parts:
            line.append(" · " + " · ".join(parts), style="dim")
        return line
    if state.phase == "failed":
        return Text(_("Background embedding stopped: {reason}").format(reason=state.message), style="yellow")
    return None


class EmbedStatus(Static):
    """Mirrors `app.embed_state`; literal text only."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, classes="embed-status", **kwargs)

    def on_mount(self) -> None:
        self.watch(self.app, "embed_state", self.show_state, init=True)

    def show_state(self, state: EmbedState) -> None:
        text = status_text(state)
        self.display = text is not None
        if text is not None:
            self.update(text)
