"""Plain progress lines (stderr is not a terminal): the final state is printed once, even when
the last update was printed already (it used to come out twice: "Ingesting: 1/1 files written")."""

from __future__ import annotations

import io

import pytest

from memories_tui.cli import progress


@pytest.fixture
def clock(monkeypatch) -> list[float]:
    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    return now


def test_last_state_is_printed_once(clock) -> None:
    out = io.StringIO()
    with progress.ProgressReport("Ingesting", unit="files", stream=out) as bar:
        bar.update(1, 1, "checked")
        clock[0] += 1.0  # past the interval: this update prints at once
        bar.update(1, 1, "written")
        clock[0] += 1.0
    assert out.getvalue().splitlines() == ["Ingesting: 1/1 files checked", "Ingesting: 1/1 files written"]


def test_an_unprinted_final_state_is_printed_at_the_end(clock) -> None:
    out = io.StringIO()
    with progress.ProgressReport("Ingesting", unit="files", stream=out) as bar:
        bar.update(1, 2, "checked")
        bar.update(2, 2, "checked")  # within the interval: held back
    assert out.getvalue().splitlines() == ["Ingesting: 1/2 files checked", "Ingesting: 2/2 files checked"]
