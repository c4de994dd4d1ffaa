"""The background embedding scheduler without any UI (what the TUI and the MCP server share).

The embedding itself is replaced by a gated stand-in (tests/helpers/embedding.py) (the scheduler is what is tested here;
real embedding in the background is covered with the MiniLM model in tests/tui)."""

from __future__ import annotations

import queue

from memories_tui.engine import BackgroundEmbedding, EmbedEvent, EmbedFinished, EmbedProgress, EmbedRunning, IndexReport
from memories_tui.engine.context import VaultContext
from memories_tui.errors import ModelError
from tests.helpers.embedding import GatedEmbedding


def _gated(monkeypatch) -> GatedEmbedding:
    return GatedEmbedding(monkeypatch, before=[EmbedProgress(1, 2, 100.0, 1.0)], report=IndexReport(embedded=2))


def _scheduler(engine) -> tuple[BackgroundEmbedding, queue.Queue[EmbedEvent]]:
    events: queue.Queue[EmbedEvent] = queue.Queue()

    def deliver(event: EmbedEvent) -> bool:
        events.put(event)
        return True

    return engine.background_embedding(deliver), events


def test_runs_reports_and_runs_again_when_asked_meanwhile(engine, monkeypatch):
    vid = engine.test_vault_id
    fake = _gated(monkeypatch)
    jobs, events = _scheduler(engine)
    assert jobs.request(vid) is True and jobs.active(vid)
    running = events.get(timeout=5)
    assert isinstance(running, EmbedRunning) and jobs.is_live(running) and running.progress.done == 1
    assert jobs.request(vid) is False  # one job at a time: this one runs again at the end
    fake.release.set()
    done = events.get(timeout=5)
    assert isinstance(done, EmbedFinished) and done.report is not None and done.report.embedded == 2
    assert jobs.is_live(done) and jobs.finish(done) is True and not jobs.active(vid)
    assert jobs.request(vid) is True  # the run-again the front end makes
    again = [events.get(timeout=5), events.get(timeout=5)]
    assert isinstance(again[-1], EmbedFinished) and jobs.finish(again[-1]) is False
    jobs.thread.join(5)


def test_stop_and_lock_cancel_and_silence_the_job(engine, monkeypatch):
    vid = engine.test_vault_id
    fake = _gated(monkeypatch)
    jobs, events = _scheduler(engine)
    jobs.request(vid)
    first = events.get(timeout=5)
    engine.lock()  # a new lock epoch: whatever the job says now is stale
    jobs.stop()
    assert fake.cancels[0] is not None and fake.cancels[0].is_set() and not jobs.active(vid) and not jobs.is_live(first)
    fake.release.set()
    jobs.thread.join(5)
    assert events.empty()  # the cancelled job delivered nothing after the stop


def test_no_model_ends_the_job_with_not_installed(engine, monkeypatch):
    vid = engine.test_vault_id

    def no_model(ctx):
        raise ModelError("EmbeddingGemma is not installed.")

    monkeypatch.setattr(VaultContext, "load_embedder", no_model)
    jobs, events = _scheduler(engine)
    jobs.request(vid)
    done = events.get(timeout=5)
    assert isinstance(done, EmbedFinished) and done.not_installed and "not installed" in (done.error or "")
    assert jobs.finish(done) is False
