"""BM25 query latency through the engine's public ``Engine.search``, interleaved with bm25s.

    .venv/bin/python bench/bench_query.py [--data ../shared/data] [--queries 300] [--collections a,b]

``--collections zh-cmrc2018:s2t`` runs the collection's Traditional-script copy (OpenCC).

For each collection: every document becomes a knowledge card (title, text) in a vault made
with a cheap test KDF; then each query runs, alternating in one loop, through

* ``Engine.search(vault, q, mode="bm25", limit=10)`` for match modes any / all / phrase
  (segmentation, folding, stemming, scoring and result building included), and
* the bm25s reference: ``segment.search_terms(q)`` (the same Jieba/OpenCC/stemming) then
  ``BM25.retrieve(k=10, n_threads=0)`` over the same tokens of ``title + " " + text`` (doc level).

Both sides are timed from the query text to a ranked top 10, query tokenisation included,
in the calling thread, as ``bench_lexical.py`` times them. (bm25s's ``n_threads=1`` starts a
thread pool on every call: that cost 0.1-0.3 ms a query here and made bm25s look slower in
this script than in ``bench_lexical.py``.) Ours also builds the engine's result objects.

Then each system again on its own, in alternating blocks of 50 queries: interleaving makes
each pay for garbage-collector passes the other's allocations trigger (bm25s more so).

The row ``LexicalIndex.search`` times the vault's index alone (query parsing included,
no engine: no vault lookup, change-counter check or result objects), the same work as the
bm25s row. Prints p50/p95 ms per system and nDCG@10 of the ``any`` mode and of bm25s (from the top 10:
chunk hits are mapped to their documents). Figures only: nothing here asserts timing.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    DEFAULT_DATA,
    evaluate,
    find_collections,
    load_named,
    percentile,
    print_table,
    rows_json,
)

from memories_tui.engine import Engine, NewRecord  # noqa: E402
from memories_tui.errors import MemoriesError  # noqa: E402
from memories_tui.text import segment  # noqa: E402
from memories_tui.vault import crypto  # noqa: E402

DOC_KEY = "bench_doc_id"
HEADERS = ["collection", "system", "queries", "nDCG@10", "p50 ms", "p95 ms"]


def bench(data: Path, name: str, n_queries: int, home_root: Path, rows: list[list[object]]) -> None:
    import bm25s

    coll = load_named(data, name)
    if coll is None:
        return
    qids = sorted(coll.queries)
    random.Random(0).shuffle(qids)
    queries = {q: coll.queries[q] for q in sorted(qids[:n_queries])}
    home = home_root / name.replace(":", "-")
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[rag.limits]\nchunks = 200000\nsource_mib = 512\n", encoding="utf-8")
    engine = Engine.open(home)
    try:
        vid = engine.create_vault(f"bench-{name}", "pw").vault_id
        engine.unlock(vid, "pw")
        items = [NewRecord("card", d["title"].strip() or did, d["text"], metadata={DOC_KEY: did})
                 for did, d in coll.corpus.items()]
        for start in range(0, len(items), 500):
            engine.add_records(vid, items[start:start + 500])
        owner = {rid: r.metadata[DOC_KEY] for rid, r in engine._context(vid).records().items()}
        t = time.perf_counter()
        engine.search(vid, "warm up", limit=1)
        build_s = time.perf_counter() - t

        doc_ids = list(coll.corpus)
        retriever = bm25s.BM25()
        retriever.index([segment.index_tokens(f"{coll.corpus[d]['title']} {coll.corpus[d]['text']}")
                         for d in doc_ids], show_progress=False)
        vocab = retriever.vocab_dict

        lat: dict[str, list[float]] = {"any": [], "all": [], "phrase": [], "bm25s": [], "index": []}
        lexical = engine._context(vid).index().lexical
        run_ours: dict[str, list[str]] = {}
        run_ref: dict[str, list[str]] = {}

        def ours(qid: str, text: str, mode: str) -> float:
            t = time.perf_counter()
            try:
                resp = engine.search(vid, text, mode="bm25", match_mode=mode, limit=10)
            except MemoriesError:
                resp = None
            took = (time.perf_counter() - t) * 1000
            if mode == "any":
                run_ours[qid] = list(dict.fromkeys(owner[h.record_id] for h in (resp.results if resp else [])))
            return took

        def index_only(text: str) -> float:
            """The same query on the vault's lexical index, without the engine around it."""
            t = time.perf_counter()
            try:
                lexical.search(text, "any", limit=10)
            except MemoriesError:
                pass
            return (time.perf_counter() - t) * 1000

        def reference(qid: str, text: str) -> float:
            t = time.perf_counter()
            terms = [w for w in segment.search_terms(text) if w in vocab]
            if terms:
                docs, scores = retriever.retrieve([terms], k=10, show_progress=False, n_threads=0)
                ranked = [doc_ids[i] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]
            else:
                ranked = []
            took = (time.perf_counter() - t) * 1000
            run_ref[qid] = ranked
            return took

        for qid, text in queries.items():  # interleaved, query by query
            for mode in ("any", "all", "phrase"):
                lat[mode].append(ours(qid, text, mode))
            lat["bm25s"].append(reference(qid, text))
            lat["index"].append(index_only(text))
        # Interleaving puts both in one allocation stream, so each pays garbage-collector
        # passes the other triggered; measured alone too: alternating blocks of 50 queries.
        alone: dict[str, list[float]] = {"any": [], "bm25s": []}
        items = list(queries.items())
        for start in range(0, len(items), 50):
            block = items[start:start + 50]
            alone["any"] += [ours(qid, text, "any") for qid, text in block]
            alone["bm25s"] += [reference(qid, text) for qid, text in block]
        chunks = len(engine._context(vid).index().chunks)
        label = f"{name} ({chunks:,} chunks; build {build_s:.1f} s)"
        nd_ours, _ = evaluate(run_ours, coll.qrels)
        nd_ref, _ = evaluate(run_ref, coll.qrels)
        for mode in ("any", "all", "phrase"):
            rows.append([label, f"engine.search bm25, {mode}", len(queries), nd_ours if mode == "any" else float("nan"),
                         percentile(lat[mode], 50), percentile(lat[mode], 95)])
        rows.append([label, "bm25s (search_terms + retrieve k=10)", len(queries), nd_ref,
                     percentile(lat["bm25s"], 50), percentile(lat["bm25s"], 95)])
        rows.append([label, "LexicalIndex.search any, k=10 (parse included, no engine)", len(queries), float("nan"),
                     percentile(lat["index"], 50), percentile(lat["index"], 95)])
        rows.append([label, "engine.search bm25, any, blocks of 50", len(queries), float("nan"),
                     percentile(alone["any"], 50), percentile(alone["any"], 95)])
        rows.append([label, "bm25s, blocks of 50 (alternating)", len(queries), float("nan"),
                     percentile(alone["bm25s"], 50), percentile(alone["bm25s"], 95)])
    finally:
        engine.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--collections", default="", help="comma-separated names; NAME:s2t is the Traditional-script copy of NAME (default: every collection)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = ap.parse_args()
    crypto._TEST_KDF_OVERRIDE = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)  # the KDF is not measured
    segment.warm_up()
    names = [c for c in args.collections.split(",") if c] or find_collections(args.data)
    rows: list[list[object]] = []
    tmp = Path(tempfile.mkdtemp(prefix="bench-query-"))
    try:
        for name in names:
            bench(args.data, name, args.queries, tmp, rows)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps({"rows": rows_json(HEADERS, rows)}, ensure_ascii=False))
    else:
        print_table(HEADERS, rows)


if __name__ == "__main__":
    main()
