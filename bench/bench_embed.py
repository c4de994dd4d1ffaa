"""Embedding pipeline and vector search micro-benchmarks. Prints figures, asserts nothing.

1. Local embedding throughput: ``LocalEmbedder.embed_documents`` (tokenize, length-bucketed
   batches, pooling, L2) vs. raw ``session.run`` on the same pre-tokenized, identically batched
   inputs with the same thread count - the difference is the pipeline's overhead.
   Uses the real all-MiniLM-L6-v2 int8 (tests/.models/minilm, from scripts/fetch-test-models)
   when present, else the EmbeddingGemma-shaped test graph (needs the shared Gemma tokenizer).
2. Brute-force ``VectorMatrix.top_k`` (k=100) over 10,000 x 768 float32: p50/p95, unfiltered
   and with an ``allowed`` set of 10% and 50% of the keys.

Usage: .venv/bin/python bench/bench_embed.py [--threads 4] [--passages 256] [--batch 16] [--data DIR] [--json]

``--data`` (default ../shared/data) adds a row of real zh/en chunks from its collections;
``--json`` prints one JSON object instead of the tables (see bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))

from common import DEFAULT_DATA, find_collections, load_collection  # noqa: E402
from gemma_costs import product_batches  # noqa: E402

from memories_tui.index.vectors import VectorMatrix  # noqa: E402
from memories_tui.models.local_onnx import LocalEmbedder, create_session  # noqa: E402
from memories_tui.text.chunking import chunk_text  # noqa: E402

MINILM = ROOT / "tests" / ".models" / "minilm"
WORDS = ("the memory vault keeps notes about bread baking rivers stones clouds meetings projects "
         "budgets travel plans recipes books music gardens weather software bugs releases family "
         "friends letters ideas questions answers search index vector model token encryption").split()


def _passages(n: int, words_per: int, seed: int) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    return [(f"note {i}", " ".join(rng.choice(WORDS, size=words_per))) for i in range(n)]


def _real_chunks(n: int, seed: int = 3) -> list[tuple[str, str]]:
    """A fixed sample of real chunks from every collection in --data (empty when none)."""
    pool: list[tuple[str, str]] = []
    for name in find_collections(ARGS.data):
        coll = load_collection(ARGS.data, name)
        if coll is not None:
            pool += [(d["title"], ch.text) for d in coll.corpus.values() for ch in chunk_text(d["text"])]
    return random.Random(seed).sample(pool, min(n, len(pool))) if pool else []


def say(*parts: object) -> None:
    """Tables go to stdout, or to stderr when --json owns stdout."""
    print(*parts, file=sys.stderr if ARGS.json else sys.stdout)


def _pick_model(tmp: Path) -> tuple[LocalEmbedder, str] | None:
    threads = ARGS.threads
    if (MINILM / "model.onnx").is_file() and (MINILM / "tokenizer.json").is_file():
        return LocalEmbedder(MINILM, profile="sentence-transformers", threads=threads), "all-MiniLM-L6-v2 int8"
    try:
        from tests.helpers.onnx_models import GEMMA_TOKENIZER, build_gemma_shaped_model
    except ImportError:
        return None
    if not GEMMA_TOKENIZER.is_file():
        return None
    build_gemma_shaped_model(tmp)
    return LocalEmbedder(tmp, threads=threads), "EmbeddingGemma-shaped stand-in graph"


def _raw_run(emb: LocalEmbedder, session, seqs: list[list[int]], batch: int) -> float:
    """Same batches as the pipeline (sorted by length, token-capped), fed straight to session.run."""
    inputs = {i.name for i in session.get_inputs()}
    feeds_list = []
    for idx in product_batches([len(s) for s in seqs], batch):
        width = max(len(seqs[i]) for i in idx)
        ids = np.zeros((len(idx), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for r, i in enumerate(idx):
            ids[r, :len(seqs[i])] = seqs[i]
            mask[r, :len(seqs[i])] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        feeds_list.append(feeds)
    out_name = emb._output_name
    t0 = time.perf_counter()
    for feeds in feeds_list:
        session.run([out_name], feeds)
    return time.perf_counter() - t0


def bench_embedding() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        picked = _pick_model(Path(tmp))
        if picked is None:
            say("embedding: skipped (no MiniLM in tests/.models/minilm and no Gemma tokenizer)")
            return {"skipped": "no MiniLM in tests/.models/minilm and no Gemma tokenizer"}
        emb, label = picked
        session = create_session(emb.model_path, emb.threads)
        say(f"embedding model: {label}; dims {emb.dims}; threads {emb.threads}; batch {ARGS.batch}; "
            f"{ARGS.passages} passages per row")
        say(f"{'passages':>13} {'tok/passage':>11} {'pipeline tok/s':>15} {'raw run tok/s':>14} "
            f"{'overhead':>9} {'passages/s':>11}")
        out: dict = {"model": label, "dims": emb.dims, "threads": emb.threads, "batch": ARGS.batch, "rows": []}
        cases: list[tuple[str, list[tuple[str, str]]]] = [
            (f"{words} words", _passages(ARGS.passages, words, seed=words)) for words in (16, 64, 200)]
        real = _real_chunks(ARGS.passages)
        if real:
            cases.append(("real chunks", real))
        for name, items in cases:
            emb.embed_documents(items[:ARGS.batch], batch_size=ARGS.batch)  # warm-up
            t0 = time.perf_counter()
            res = emb.embed_documents(items, batch_size=ARGS.batch)
            pipe = time.perf_counter() - t0
            seqs = [emb.document_token_ids(t, x) for t, x in items]
            _raw_run(emb, session, seqs[:ARGS.batch], ARGS.batch)  # warm-up
            raw = _raw_run(emb, session, seqs, ARGS.batch)
            say(f"{name:>13} {res.tokens / len(items):>11.1f} {res.tokens / pipe:>15,.0f} "
                f"{res.tokens / raw:>14,.0f} {pipe / raw - 1:>8.1%} {len(items) / pipe:>11.1f}")
            out["rows"].append({"passages": name, "count": len(items), "tokens_per_passage": res.tokens / len(items),
                                "pipeline_tokens_per_s": res.tokens / pipe, "raw_tokens_per_s": res.tokens / raw,
                                "ratio": raw / pipe, "passages_per_s": len(items) / pipe})
        return out


def bench_vectors(n: int = 10_000, dims: int = 768, k: int = 100, reps: int = 200) -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, dims)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    m = VectorMatrix(dims)
    t0 = time.perf_counter()
    m.add(range(n), x)
    add_ms = (time.perf_counter() - t0) * 1000
    queries = rng.standard_normal((reps, dims)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    say(f"\nvector top-{k} over {n:,} x {dims} float32 ({m.nbytes / 2**20:.1f} MiB allocated, "
        f"add {add_ms:.0f} ms)")
    say(f"{'filter':>14} {'p50 ms':>8} {'p95 ms':>8}")
    out: dict = {"vectors": n, "dims": dims, "k": k, "add_ms": add_ms, "filters": []}
    for label, allowed in (("none", None), ("10% allowed", set(range(0, n, 10))), ("50% allowed", set(range(0, n, 2)))):
        times = []
        for q in queries:
            t0 = time.perf_counter()
            m.top_k(q, k, allowed=allowed)
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        p95 = times[int(0.95 * (len(times) - 1))]
        say(f"{label:>14} {statistics.median(times):>8.2f} {p95:>8.2f}")
        out["filters"].append({"filter": label, "p50_ms": statistics.median(times), "p95_ms": p95})
    return out


def main() -> None:
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--passages", type=int, default=256)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of collections for the real-chunk row")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the tables")
    ARGS = ap.parse_args()
    result = {"embedding": bench_embedding(), "vector_top_k": bench_vectors()}
    if ARGS.json:
        print(json.dumps(result, ensure_ascii=False))


ARGS: argparse.Namespace

if __name__ == "__main__":
    main()
