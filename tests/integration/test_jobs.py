"""The background embedding scheduler without any UI (what the TUI and the MCP server share).

The embedding itself is replaced by a gated stand-in (the scheduler is what is tested here;
real embedding in the background is covered with the MiniLM model in tests/tui)."""

from __future__ import annotations

import queue
import threading

from memories_tui.engine import BackgroundEmbedding, EmbedEvent, EmbedFinished, EmbedProgress, EmbedRunning, IndexReport
from memories_tui.errors import CancelledError, ModelError


class GatedEmbedding:
    def __init__(self, engine) -> None:
        self.release = threading.Event()
        self.cancels: list[threading.Event] = []
        engine.embedder = lambda: object()
        engine.embed_in_background = self

    def __call__(self, vault_id, progress=None, cancel=None):
        self.cancels.append(cancel)
        progress(EmbedProgress(1, 2, 100.0, 1.0))
        self.release.wait(5)
        if cancel.is_set():
            raise CancelledError("Embedding cancelled.")
        return IndexReport(embedded=2)


def _scheduler(engine) -> tuple[BackgroundEmbedding, queue.Queue[EmbedEvent]]:
    events: queue.Queue[EmbedEvent] = queue.Queue()

    def deliver(event: EmbedEvent) -> bool:
        events.put(event)
        return True

    return BackgroundEmbedding(engine, deliver), events


def test_runs_reports_and_runs_again_when_asked_meanwhile(engine):
    vid = engine.test_vault_id
    fake = GatedEmbedding(engine)
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


def test_stop_and_lock_cancel_and_silence_the_job(engine):
    vid = engine.test_vault_id
    fake = GatedEmbedding(engine)
    jobs, events = _scheduler(engine)
    jobs.request(vid)
    first = events.get(timeout=5)
    engine.lock()  # a new lock epoch: whatever the job says now is stale
    jobs.stop()
    assert fake.cancels[0].is_set() and not jobs.active(vid) and not jobs.is_live(first)
    fake.release.set()
    jobs.thread.join(5)
    assert events.empty()  # the cancelled job delivered nothing after the stop


def test_no_model_ends_the_job_with_not_installed(engine):
    vid = engine.test_vault_id

    def no_model():
        raise ModelError("EmbeddingGemma is not installed.")

    engine.embedder = no_model
    jobs, events = _scheduler(engine)
    jobs.request(vid)
    done = events.get(timeout=5)
    assert isinstance(done, EmbedFinished) and done.not_installed and "not installed" in (done.error or "")
    assert jobs.finish(done) is False
