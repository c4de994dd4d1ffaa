"""The default model's cost: EmbeddingGemma-300m Q4 (random-weight replica) through the product.

    .venv/bin/python bench/bench_gemma.py [--quick] [--json] [--data DIR] [--model DIR]

The real Q4 graph cannot be downloaded here, so by default this measures the replica built by
``bench/gemma_replica.py`` (published architecture and sizes, same operators, same 4-bit
quantizer, random weights: cost, not quality); ``--model`` points at a real install instead.
Every figure sits beside a reference from the same run:

1. session load time and RSS (fresh child processes): raw ``InferenceSession`` vs the
   product's ``LocalEmbedder`` (tokenizer, session, file hashes);
2. raw ``session.run`` tokens/s at 128 and 512 tokens, batch 1 and larger, per thread count;
3. the product pipeline (``embed_documents`` on real zh/en chunks) vs raw ``session.run``
   on identical batches (goal: >= 90 %);
4. an estimate of the first embedding of a 10,000-chunk zh/en vault (real chunks from
   ``--data``, the product's batching, a cost model fitted to step 2);
5. query embedding latency p50/p95 vs raw ``session.run`` on the same ids;
6. BM25 and vector query p50/p95 while a vault embeds in the background, beside the same
   queries with nothing running (engine public API).

Figures only: nothing asserts timing. ``--json`` prints one JSON object (see bench/README.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import gemma_costs as costs  # noqa: E402
import gemma_replica  # noqa: E402
from common import DEFAULT_DATA, print_table  # noqa: E402

from memories_tui.config import default_local_threads  # noqa: E402
from memories_tui.models.local_onnx import LocalEmbedder  # noqa: E402

PRODUCT_THREADS = default_local_threads()  # what [rag] local_threads defaults to on this machine
FULL = {"reps": 2, "shapes": [(1, 128), (8, 128), (1, 512), (2, 512)], "threads_list": "1,2,4",
        "pipeline_chunks": 16, "pipeline_reps": 2, "queries": 30, "idle_queries": 20, "busy_seconds": 30.0,
        "big_records": 200, "small_records": 8}
QUICK = {"reps": 1, "shapes": [(1, 128), (2, 128), (1, 512)], "threads_list": "1,2",
         "pipeline_chunks": 6, "pipeline_reps": 1, "queries": 10, "idle_queries": 8, "busy_seconds": 10.0,
         "big_records": 60, "small_records": 4}


def _r(value, digits: int = 3):
    """Round floats for the JSON object; None and NaN become null."""
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, digits)
    if isinstance(value, dict):
        return {k: _r(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_r(v, digits) for v in value]
    return value


def measure(args: argparse.Namespace, log) -> dict:
    plan = QUICK if args.quick else FULL
    started = time.perf_counter()
    if args.model:
        model_dir, replica = args.model, None
    else:
        model_dir = gemma_replica.ensure_replica(rebuild=args.rebuild, log=log)
        replica = gemma_replica.replica_info(model_dir)
    threads_list = sorted({int(t) for t in (args.threads_list or plan["threads_list"]).split(",") if t.strip()})
    log("loading real zh/en text from " + str(args.data))
    text = costs.load_real_text(args.data)

    log("1/6 load and memory (fresh processes)")
    load = {kind: costs.run_probe(kind, model_dir, args.threads) for kind in ("raw", "product")}

    log("2/6 raw session.run throughput")
    variants = {}
    if args.accuracy_level4 and replica is not None:
        level4 = gemma_replica.ensure_replica(log=log, accuracy_level=4)
        variants["accuracy_level=4"] = level4 / "onnx" / "model_q4.onnx"
    grid, sessions = costs.throughput_grid(model_dir / "onnx" / "model_q4.onnx", threads_list, plan["shapes"],
                                           plan["reps"], log, variants)
    default_rows = [r for r in grid if r["variant"] == "default"]
    models = {t: costs.CostModel.fit([r for r in default_rows if r["threads"] == t]) for t in threads_list}

    log(f"3/6 product pipeline vs raw ({args.threads} threads)")
    emb = LocalEmbedder(model_dir, profile="embeddinggemma", threads=args.threads)
    session = sessions.get(args.threads) or costs.create_session(emb.model_path, args.threads)
    items = costs.mixed_sample(text.zh_chunks, text.en_chunks, plan["pipeline_chunks"], seed=5)
    pipeline = costs.pipeline_vs_raw(emb, session, items, batch_size=16, reps=plan["pipeline_reps"])
    if args.threads in models:
        predicted = sum(models[args.threads].seconds(b, w) for b, w in pipeline["shapes"])
        pipeline["cost_model_error"] = predicted / pipeline["raw_s"] - 1

    log("4/6 10,000-chunk zh/en vault estimate")
    estimate = costs.vault_estimate(emb, text, models, min(1.0, pipeline["ratio"]))

    log("5/6 query embedding latency")
    queries = costs.mixed_sample(text.zh_queries, text.en_queries, plan["queries"], seed=7)
    query = costs.query_latency(emb, session, queries)
    del sessions, session, emb

    log("6/6 search while embedding in the background")
    from gemma_background import search_while_embedding

    small = costs.mixed_sample([d for d in text.zh_docs if 40 <= len(d[1]) <= 400],
                               [d for d in text.en_docs if 40 <= len(d[1]) <= 400], plan["small_records"], seed=8)
    big = costs.mixed_sample(text.zh_docs, text.en_docs, plan["big_records"], seed=9)
    background = search_while_embedding(model_dir, args.threads, small, big, queries, plan["idle_queries"],
                                        plan["busy_seconds"], log)

    best = {}
    for shape in plan["shapes"]:
        rows = [r for r in default_rows if (r["batch"], r["seq"]) == shape]
        best[f"{shape[0]}x{shape[1]}"] = max(rows, key=lambda r: r["tokens_per_s"])["threads"]
    return {
        "model": {"dir": str(model_dir), "replica": replica is not None,
                  "weights": "random (cost, not quality)" if replica else "as installed",
                  "version": replica["version"] if replica else None,
                  "data_bytes": (model_dir / gemma_replica.DATA).stat().st_size},
        "cpu_count": os.cpu_count(), "quick": args.quick, "product_threads_default": PRODUCT_THREADS,
        "threads": args.threads, "data": str(args.data), "sources": text.sources,
        "load": load, "throughput": grid,
        "cost_models": {str(t): dataclasses.asdict(m) for t, m in models.items()},
        "best_threads_by_shape": best, "pipeline": pipeline, "vault_estimate": estimate, "query": query,
        "background": background, "seconds": time.perf_counter() - started,
    }


def report(res: dict) -> None:
    m = res["model"]
    print(f"# EmbeddingGemma-300m Q4 {'REPLICA, random weights (cost, not quality)' if m['replica'] else 'install'}: "
          f"{m['dir']} ({m['data_bytes']:,} B external data); {res['cpu_count']} CPUs; data: {', '.join(res['sources'])}")
    raw, prod = res["load"]["raw"], res["load"]["product"]
    print(f"\n## Load and memory ({res['threads']} threads, fresh process each)")
    print_table(["what", "load s", "RSS after load MiB", "peak RSS MiB (after 16x128 + 4x512 / 16 docs)"], [
        ["raw InferenceSession (reference)", raw["load_s"], raw["rss_loaded_mib"], raw["peak_rss_mib"]],
        ["LocalEmbedder (tokenizer + session + file hashes)", prod["load_s"], prod["rss_loaded_mib"],
         prod["peak_rss_mib"]]])
    print(f"of which: tokenizer.json load {prod['tokenizer_load_s']:.2f} s, sha256 of the model files "
          f"{prod['sha256_files_s']:.2f} s (vector space key)")
    print("\n## Raw session.run throughput (median of rounds)")
    print_table(["model", "threads", "batch x seq", "seconds", "tokens/s"],
                [[r["variant"], r["threads"], f"{r['batch']}x{r['seq']}", r["seconds"], r["tokens_per_s"]]
                 for r in res["throughput"]])
    print(f"best thread count per shape: {res['best_threads_by_shape']}")
    p = res["pipeline"]
    print(f"\n## Product pipeline vs raw session.run: {p['chunks']} real chunks, {p['tokens']:,} tokens, "
          f"{p['batches']} batches, {p['threads']} threads")
    print_table(["path", "seconds", "tokens/s"], [["raw session.run (reference)", p["raw_s"], p["raw_tokens_per_s"]],
                                                  ["LocalEmbedder.embed_documents", p["pipeline_s"],
                                                   p["pipeline_tokens_per_s"]]])
    print(f"pipeline = {p['ratio']:.1%} of raw (goal >= 90 %); cost model vs measured raw: "
          f"{p.get('cost_model_error', float('nan')):+.1%}")
    e = res["vault_estimate"]
    print(f"\n## First embedding of a {e['chunks']:,}-chunk vault ({e['zh_chunks']:,} zh + {e['en_chunks']:,} en real "
          f"chunks; {e['tokens']:,} tokens; mean {e['mean_tokens_zh'] or 0:.0f} zh / {e['mean_tokens_en'] or 0:.0f} en "
          f"tokens per chunk; {e['truncated']} truncated)")
    threads = sorted(e["policies"][0]["hours_by_threads"], key=int)
    print_table(["batching", "runs", "padding", *[f"hours @{t} thr" for t in threads]],
                [[r["policy"], r["runs"], f"{r['padding_share']:.1%}", *[r["hours_by_threads"][t] for t in threads]]
                 for r in e["policies"]])
    q = res["query"]
    print(f"\n## Query embedding ({q['queries']} real zh/en queries, {q['threads']} threads)")
    print_table(["path", "p50 ms", "p95 ms"], [["raw session.run (reference)", q["raw_p50_ms"], q["raw_p95_ms"]],
                                               ["LocalEmbedder.embed_query", q["p50_ms"], q["p95_ms"]]])
    b = res["background"]
    print(f"\n## Search while vault B ({b['vault_b_records']} records) embeds in the background "
          f"({b['threads']} threads; {b['background_chunks_done']} chunks in {b['busy_seconds']} s, "
          f"{b['background_tokens_per_s'] or 0:.0f} tokens/s; cancel took {b['cancel_wait_s']:.1f} s)")
    print_table(["query", "idle p50 ms", "idle p95 ms", "busy p50 ms", "busy p95 ms", "n idle/busy"], [
        [f"{name} ({'vault B' if name == 'bm25' else 'vault A, incl. query embedding'})",
         b[name]["idle"]["p50_ms"], b[name]["idle"]["p95_ms"], b[name]["busy"]["p50_ms"], b[name]["busy"]["p95_ms"],
         f"{b[name]['idle']['n']}/{b[name]['busy']['n']}"] for name in ("bm25", "vector")])
    print(f"\ntotal {res['seconds']:.0f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of collections (real zh/en text)")
    ap.add_argument("--model", type=Path, default=None, help="a real EmbeddingGemma install (default: the replica)")
    ap.add_argument("--threads", type=int, default=PRODUCT_THREADS,
                    help=f"threads for pipeline, queries and background (default: the product's {PRODUCT_THREADS})")
    ap.add_argument("--threads-list", default=None, help="thread counts for the throughput grid (default 1,2,4; quick 1,2)")
    ap.add_argument("--quick", action="store_true", help="smaller samples (about a minute)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the replica")
    ap.add_argument("--accuracy-level4", action="store_true",
                    help="also time a replica quantized with MatMulNBits accuracy_level 4 (int8 compute), 1 thread")
    ap.add_argument("--probe", choices=("raw", "product"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        print(json.dumps(costs.probe(args.probe, args.model, args.threads)))
        return
    log = (lambda msg: print(msg, file=sys.stderr, flush=True)) if args.json else (lambda msg: print(msg, flush=True))
    res = measure(args, log)
    if args.json:
        out = _r(res)
        out["pipeline"].pop("shapes", None)
        print(json.dumps(out, ensure_ascii=False))
    else:
        report(res)


if __name__ == "__main__":
    main()
