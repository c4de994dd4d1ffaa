"""Hold the engine's background embedding at a gate the test opens.

`GatedEmbedding` replaces `VaultContext.embed_in_background` for one test (pytest's
monkeypatch restores it): every call records its cancel event, reports `before`, waits for
`release`, then either runs the real embedding (`real=True`, a model must be installed) or
reports `after` and returns `report`. Without `real`, the model check passes without a model.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from memories_tui.engine import EmbedProgress, IndexReport
from memories_tui.engine.context import VaultContext
from memories_tui.errors import CancelledError

GATE_SECONDS = 60  # only guards a hang: the test sets `release`


class GatedEmbedding:
    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, real: bool = False,
                 before: Sequence[EmbedProgress] = (), after: Sequence[EmbedProgress] = (),
                 report: IndexReport | None = None) -> None:
        self.release = threading.Event()
        self.cancels: list[threading.Event | None] = []
        real_embed = VaultContext.embed_in_background
        gate = self

        def gated(ctx: VaultContext, *, progress=None, cancel=None) -> IndexReport:
            gate.cancels.append(cancel)
            for step in before:
                progress(step)
            gate.release.wait(GATE_SECONDS)
            if real:
                return real_embed(ctx, progress=progress, cancel=cancel)
            if cancel is not None and cancel.is_set():
                raise CancelledError("Embedding cancelled.")
            for step in after:
                progress(step)
            return report if report is not None else IndexReport()

        monkeypatch.setattr(VaultContext, "embed_in_background", gated)
        if not real:
            monkeypatch.setattr(VaultContext, "load_embedder", lambda ctx: object())
