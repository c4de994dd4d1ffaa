"""Searching while the vault is embedded in the background, and semantic readiness.

Builds a vault from the first --docs SciFact abstracts, then in one run measures:
  1. BM25 query latency with nothing else running (the reference), and again while
     `engine.embed_in_background` embeds the vault in a niced thread;
  2. vector query latency after embedding, alone and while a second vault embeds;
  3. how long after saving a new note it is vector-searchable (on-demand embedding);
  4. unlock → first vector search when every vector is in the encrypted cache.
Needs a local model (default: the MiniLM test model from scripts/fetch-test-models).
``--data`` is a folder of collections; ``--collection`` picks one (default: SciFact, else the
first collection that is not Chinese, which MiniLM cannot read). Prints figures; asserts
nothing. ``--json`` prints one JSON object (see bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import find_collections, is_chinese, load_collection  # noqa: E402

from memories_tui.engine import Engine, NewRecord  # noqa: E402
from memories_tui.vault import crypto  # noqa: E402


def stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return {"n": len(ordered), "p50_ms": statistics.median(ordered), "p95_ms": p95}


def percentiles(samples: list[float]) -> str:
    s = stats(samples)
    return f"p50 {s['p50_ms']:6.2f} ms  p95 {s['p95_ms']:6.2f} ms  (n={s['n']})"


def pick_collection(data: Path, name: str | None) -> Path:
    names = find_collections(data)
    if name:
        if name not in names:
            sys.exit(f"no collection {name!r} in {data} (found: {', '.join(names) or 'none'})")
        return data / name
    if "scifact" in names:
        return data / "scifact"
    for candidate in names:
        coll = load_collection(data, candidate)
        if coll is not None and not is_chinese(coll):
            return data / candidate
    sys.exit(f"no non-Chinese collection in {data}; pass --collection")


def timed_queries(engine: Engine, vid: str, queries: list[str], mode: str, stop: threading.Event | None = None,
                  rounds: int = 1, pause: float = 0.01) -> list[float]:
    """Queries paced like a person (`pause` between them), so the background work gets CPU too."""
    out = []
    for _ in range(rounds):
        for q in queries:
            if stop is not None and stop.is_set():
                return out
            t0 = time.perf_counter()
            engine.search(vid, q, mode=mode, limit=10)
            out.append((time.perf_counter() - t0) * 1000)
            time.sleep(pause)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data", help="folder of collections")
    ap.add_argument("--collection", default=None, help="collection name in --data (default: scifact)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the lines")
    ap.add_argument("--model", type=Path, default=ROOT / "tests" / ".models" / "minilm")
    ap.add_argument("--profile", default="sentence-transformers")
    ap.add_argument("--docs", type=int, default=600)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    source = pick_collection(args.data, args.collection)
    if not (args.model / "model.onnx").is_file() and not (args.model / "onnx").is_dir():
        sys.exit(f"no model in {args.model}; run scripts/fetch-test-models")
    crypto._TEST_KDF_OVERRIDE = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)  # KDF not measured here
    home = Path(tempfile.mkdtemp(prefix="memories-bench-bg-"))
    (home / "config.toml").write_text(
        f'[rag]\nlocal_model_dir = "{args.model.resolve()}"\nlocal_model_profile = "{args.profile}"\n'
        f"local_threads = {args.threads}\n")
    try:
        docs = [json.loads(line) for line in (source / "corpus.jsonl").read_text().splitlines()[: args.docs]]
        queries = [json.loads(line)["text"] for line in (source / "queries.jsonl").read_text().splitlines()][:100]
        eng = Engine.open(home)
        vids = []
        for name in ("a", "b"):
            vid = eng.create_vault(name, "pw").vault_id
            eng.unlock(vid, "pw")
            eng.add_records(vid, [NewRecord("card", d["title"], d["text"]) for d in docs])
            vids.append(vid)
        a, b = vids
        eng._context(a).index()
        eng._state.models.get()  # model load is measured in step 4, not here
        idle_bm25 = timed_queries(eng, a, queries, "bm25", rounds=5)

        stop = threading.Event()
        report: dict[str, object] = {}

        def embed(vid: str) -> None:
            report[vid] = eng._context(vid).embed_in_background()
            stop.set()

        worker = threading.Thread(target=embed, args=(a,))
        started = time.perf_counter()
        worker.start()
        busy_bm25: list[float] = []
        while not stop.is_set():
            busy_bm25 += timed_queries(eng, a, queries, "bm25", stop=stop)
        worker.join()
        embed_s = time.perf_counter() - started

        idle_vector = timed_queries(eng, a, queries, "vector", rounds=3)
        stop.clear()
        worker = threading.Thread(target=embed, args=(b,))
        worker.start()
        busy_vector: list[float] = []
        while not stop.is_set():
            busy_vector += timed_queries(eng, a, queries, "vector", stop=stop)
        worker.join()

        fresh = []
        for i in range(5):
            t0 = time.perf_counter()
            eng.add_record(a, kind="memory", title=f"violin {i}", body=f"Practise violin scales every morning, day {i}.")
            hits = eng.search(a, "learning to play a string instrument", mode="vector", limit=10).results
            fresh.append((time.perf_counter() - t0) * 1000)
            assert any(h.title == f"violin {i}" for h in hits)
        eng.close()

        ready = []
        for _ in range(3):
            eng = Engine.open(home)
            eng.unlock(a, "pw")
            t0 = time.perf_counter()
            eng.search(a, "protein folding", mode="vector")
            ready.append(time.perf_counter() - t0)
            eng.close()

        chunks = report[a].embedded + report[a].reused  # type: ignore[attr-defined]
        if args.json:
            print(json.dumps({
                "collection": source.name, "records": len(docs), "chunks": chunks, "model": args.model.name,
                "profile": args.profile, "threads": args.threads, "background_embed_s": embed_s,
                "bm25": {"idle": stats(idle_bm25), "busy": stats(busy_bm25)},
                "vector": {"idle": stats(idle_vector), "busy": stats(busy_vector)},
                "new_note_to_vector_hit_ms": statistics.median(fresh),
                "unlock_to_first_vector_search_s": statistics.median(ready)}))
            return
        print(f"vault: {len(docs)} {source.name} documents, {chunks} chunks; model {args.model.name} ({args.profile}), "
              f"{args.threads} threads; background embedding took {embed_s:.1f} s")
        print(f"{'BM25, nothing else running (reference)':<48}{percentiles(idle_bm25)}")
        print(f"{'BM25, while the vault embeds in background':<48}{percentiles(busy_bm25)}")
        print(f"{'vector, nothing else running (reference)':<48}{percentiles(idle_vector)}")
        print(f"{'vector, while another vault embeds':<48}{percentiles(busy_vector)}")
        print(f"{'save a note → found by vector search':<48}median {statistics.median(fresh):.0f} ms")
        print(f"{'unlock → first vector search (all cached)':<48}median {statistics.median(ready):.2f} s "
              "(model load + vector cache decrypt + lexical restore)")
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
