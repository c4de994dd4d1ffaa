"""What filling a vault's vectors reports (progress, the final report) and its time budget.

Kept apart from embedding.py (numpy) so front ends can name these types without loading the
index code: the TUI's first frame imports them (bench/bench_tui_start.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..serial import Jsonable, json_meta

BUDGET_SECONDS = 300.0


@dataclass
class IndexReport(Jsonable):
    embedded: int = 0
    reused: int = 0
    missing: int = 0
    truncated: int = 0
    seconds: float = field(default=0.0, metadata=json_meta(round=3))


@dataclass
class EmbedProgress(Jsonable):
    done: int
    total: int
    tokens_per_second: float
    eta_seconds: float | None
