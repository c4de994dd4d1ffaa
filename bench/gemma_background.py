"""Search latency while EmbeddingGemma embeds a vault in the background (used by bench_gemma.py).

Through the engine's public API only: two vaults of real zh/en records in a temp home whose
config points ``[rag] local_model_dir`` at the model (the replica by default). Vault A (a few
short records) is embedded first; then, with nothing else running, BM25 queries on vault B
and vector queries on vault A (query embedding included) are timed as the reference; then
the same queries while ``engine._context(B).embed_in_background()`` runs in a worker thread, as the TUI
does after unlock. Vector search on B itself would embed B on demand, so it is not timed.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import percentile  # noqa: E402

from memories_tui.engine import Engine, NewRecord  # noqa: E402

PASSPHRASE = "bench passphrase, not a secret"


def _stats(samples: list[float]) -> dict:
    return {"n": len(samples), "p50_ms": statistics.median(samples) if samples else None,
            "p95_ms": percentile(samples, 95) if samples else None}


def _timed(engine: Engine, vid: str, query: str, mode: str) -> float:
    t = time.perf_counter()
    engine.search(vid, query, mode=mode, limit=10)
    return (time.perf_counter() - t) * 1000


def search_while_embedding(model_dir: Path, threads: int, small_docs: list[tuple[str, str]],
                           big_docs: list[tuple[str, str]], queries: list[str], idle_queries: int,
                           busy_seconds: float, log, pause: float = 0.05) -> dict:
    home = Path(tempfile.mkdtemp(prefix="memories-bench-gemma-"))
    (home / "config.toml").write_text(
        f'[rag]\nlocal_model_dir = "{model_dir.resolve()}"\nlocal_model_profile = "embeddinggemma"\n'
        f"local_threads = {threads}\n", "utf-8")
    engine = Engine.open(home)
    try:
        ids = {}
        for name, docs in (("a", small_docs), ("b", big_docs)):
            vid = engine.create_vault(name, PASSPHRASE).vault_id
            engine.unlock(vid, PASSPHRASE)
            engine.add_records(vid, [NewRecord(kind="card", title=title, body=body) for title, body in docs])
            engine._context(vid).index()
            ids[name] = vid
        a, b = ids["a"], ids["b"]
        t = time.perf_counter()
        report_a = engine._context(a).ensure_vectors()
        embed_a_s = time.perf_counter() - t
        log(f"  vault A: {report_a.embedded} chunks embedded in {embed_a_s:.1f} s; timing idle searches")
        _timed(engine, b, queries[0], "bm25")
        _timed(engine, a, queries[0], "vector")
        idle_bm25, idle_vec = [], []
        for i in range(idle_queries):
            q = queries[i % len(queries)]
            idle_bm25.append(_timed(engine, b, q, "bm25"))
            idle_vec.append(_timed(engine, a, q, "vector"))
            time.sleep(pause)

        cancel, progress = threading.Event(), []
        result: dict = {}

        def work() -> None:
            try:
                result["report"] = engine._context(b).embed_in_background(cancel=cancel, progress=progress.append)
            except Exception as exc:  # CancelledError when we stop it: expected
                result["stopped"] = type(exc).__name__

        worker = threading.Thread(target=work, daemon=True)
        log(f"  embedding vault B ({len(big_docs)} records) in the background for {busy_seconds:.0f} s")
        started = time.perf_counter()
        worker.start()
        busy_bm25, busy_vec, i = [], [], 0
        while time.perf_counter() - started < busy_seconds and worker.is_alive():
            q = queries[i % len(queries)]
            busy_bm25.append(_timed(engine, b, q, "bm25"))
            busy_vec.append(_timed(engine, a, q, "vector"))
            i += 1
            time.sleep(pause)
        cancel.set()
        stop = time.perf_counter()
        worker.join()
        cancel_wait = time.perf_counter() - stop
        last = progress[-1] if progress else None
        done = engine.status(b).embedded  # finished groups of 16 (a cancelled group is dropped)
        return {
            "threads": threads, "vault_a_chunks": report_a.embedded, "vault_b_records": len(big_docs),
            "busy_seconds": round(stop - started, 1), "cancel_wait_s": cancel_wait,
            "background_chunks_done": done,
            "background_tokens_per_s": last.tokens_per_second if last else None,
            "bm25": {"idle": _stats(idle_bm25), "busy": _stats(busy_bm25)},
            "vector": {"idle": _stats(idle_vec), "busy": _stats(busy_vec)},
        }
    finally:
        engine.close()
        shutil.rmtree(home, ignore_errors=True)
