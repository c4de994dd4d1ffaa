"""Lexical (FTS5 BM25) benchmark beside bm25s, measured in the same run.

    .venv/bin/python bench/bench_lexical.py [--data ../shared/data] [--quick] [--segmenter jieba] [--json]

For each collection every document is chunked with ``chunk_text`` (title as the title
column, the abstract/paragraph as chunk bodies) and indexed with ``LexicalIndex``; each
query retrieves 100 chunks and a document scores its best chunk. Prints nDCG@10 (linear
gain, log2 discount), Recall@100, query latency p50/p95, index build time, segmentation
throughput and peak RSS, then a synthetic 10,000-chunk mixed zh/en speed case.
Figures only: nothing here asserts timing. ``--json`` prints one JSON object instead of the
table (see bench/README.md).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    DEFAULT_DATA,
    Collection,
    evaluate,
    find_collections,
    is_chinese,
    load_collection,
    peak_rss_mib,
    percentile,
    print_table,
)

from memories_tui.errors import LimitError  # noqa: E402
from memories_tui.index.lexical import LexicalDoc, LexicalIndex  # noqa: E402
from memories_tui.text import segment  # noqa: E402
from memories_tui.text.chunking import chunk_text  # noqa: E402

HEADERS = [
    "collection",
    "system",
    "queries",
    "nDCG@10",
    "R@100",
    "p50 ms",
    "p95 ms",
    "build s",
    "seg MB/s",
    "peak RSS MiB",
]
_WORD = re.compile(r"\w")


def build_fts(coll: Collection) -> tuple[LexicalIndex, dict[int, str], float, float]:
    """Chunk and index a collection: (index, chunk key -> doc id, build seconds, segmentation MB/s)."""
    docs: list[LexicalDoc] = []
    owner: dict[int, str] = {}
    for did, d in coll.corpus.items():
        for ch in chunk_text(d["text"]):
            key = len(owner)
            owner[key] = did
            docs.append(LexicalDoc(key=key, title=d["title"], body=ch.text, meta="", is_card=True))
    # Segmentation throughput over the chunk text (both token streams), as ingest sees it.
    nbytes = sum(len(x.body.encode()) + len(x.title.encode()) for x in docs)
    t = time.perf_counter()
    for x in docs:
        segment.index_and_phrase_tokens(x.title)
        segment.index_and_phrase_tokens(x.body)
    seg_s = time.perf_counter() - t
    t = time.perf_counter()
    index = LexicalIndex()
    index.add(docs)
    index.search("warm", "any", limit=1)  # includes the one-off FTS5 segment merge
    build_s = time.perf_counter() - t
    return index, owner, build_s, nbytes / 1e6 / seg_s


def run_fts(
    index: LexicalIndex, owner: dict[int, str], queries: dict[str, str], mode: str, limit: int = 100
) -> tuple[dict[str, list[str]], list[float]]:
    run: dict[str, list[str]] = {}
    lat: list[float] = []
    for qid, text in queries.items():
        t = time.perf_counter()
        try:
            hits = index.search(text, mode, limit=limit)
        except LimitError:
            hits = []
        lat.append((time.perf_counter() - t) * 1000)
        ranked: list[str] = []
        seen: set[str] = set()
        for h in hits:  # best chunk first, so a document's first hit is its best chunk
            did = owner[h.key]
            if did not in seen:
                seen.add(did)
                ranked.append(did)
        run[qid] = ranked
    return run, lat


def run_bm25s(
    doc_ids: list[str], doc_tokens: list[list[str]], queries: dict[str, str], qtok, k: int = 100
) -> tuple[dict[str, list[str]], list[float], float]:
    import bm25s

    t = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index(doc_tokens, show_progress=False)
    build_s = time.perf_counter() - t
    k = min(k, len(doc_ids))
    run: dict[str, list[str]] = {}
    lat: list[float] = []
    for qid, text in queries.items():
        t = time.perf_counter()
        toks = qtok(text)
        if toks:
            res = retriever.retrieve([toks], k=k, show_progress=False)
            idx = res.documents[0]
        else:
            idx = []
        lat.append((time.perf_counter() - t) * 1000)
        run[qid] = [doc_ids[i] for i in idx]
    return run, lat, build_s


def jieba_default_tokens(text: str) -> list[str]:
    """The SOURCE.md Chinese reference: jieba search mode, lower-cased, tokens without \\w dropped."""
    import jieba

    return [t.lower() for t in jieba.lcut_for_search(text) if _WORD.search(t)]


def english_default_tokenizer(stem: bool):
    import bm25s

    stemmer = None
    if stem:
        import Stemmer

        stemmer = Stemmer.Stemmer("english")

    def tok(texts: list[str]) -> list[list[str]]:
        return bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)

    return tok


def subsample(queries: dict[str, str], n: int | None, seed: int = 7) -> dict[str, str]:
    if n is None or len(queries) <= n:
        return queries
    keys = sorted(queries)
    random.Random(seed).shuffle(keys)
    return {k: queries[k] for k in sorted(keys[:n])}


def bench_collection(
    coll: Collection, label: str, queries: dict[str, str], rows: list[list[object]], chinese: bool
) -> None:
    gc.collect()
    index, owner, build_s, seg_mbs = build_fts(coll)
    for mode in ("any", "all"):
        run, lat = run_fts(index, owner, queries, mode)
        nd, rc = evaluate(run, coll.qrels)
        rows.append(
            [
                label,
                f"FTS5 {mode} ({len(index):,} chunks)",
                len(queries),
                nd,
                rc,
                percentile(lat, 50),
                percentile(lat, 95),
                build_s if mode == "any" else float("nan"),
                seg_mbs if mode == "any" else float("nan"),
                peak_rss_mib(),
            ]
        )
    index.close()
    del index

    doc_ids = list(coll.corpus)
    texts = [coll.corpus[d]["title"] + " " + coll.corpus[d]["text"] for d in doc_ids]

    # bm25s on exactly our tokens (doc level, unchunked).
    t = time.perf_counter()
    ours = [segment.index_tokens(x) for x in texts]
    tok_s = time.perf_counter() - t
    run, lat, b = run_bm25s(doc_ids, ours, queries, segment.search_terms)
    nd, rc = evaluate(run, coll.qrels)
    rows.append(
        [
            label,
            "bm25s, our tokens (docs)",
            len(queries),
            nd,
            rc,
            percentile(lat, 50),
            percentile(lat, 95),
            b + tok_s,
            float("nan"),
            peak_rss_mib(),
        ]
    )

    # bm25s defaults as in SOURCE.md.
    if chinese:
        t = time.perf_counter()
        toks = [jieba_default_tokens(x) for x in texts]
        tok_s = time.perf_counter() - t
        run, lat, b = run_bm25s(doc_ids, toks, queries, jieba_default_tokens)
        nd, rc = evaluate(run, coll.qrels)
        rows.append(
            [
                label,
                "bm25s, jieba search (SOURCE)",
                len(queries),
                nd,
                rc,
                percentile(lat, 50),
                percentile(lat, 95),
                b + tok_s,
                float("nan"),
                peak_rss_mib(),
            ]
        )
    else:
        for stem in (False, True):
            tok = english_default_tokenizer(stem)
            t = time.perf_counter()
            toks = tok(texts)
            tok_s = time.perf_counter() - t
            run, lat, b = run_bm25s(doc_ids, toks, queries, lambda q, tok=tok: tok([q])[0])
            nd, rc = evaluate(run, coll.qrels)
            name = "bm25s, stopwords en" + (" + stem" if stem else "") + " (SOURCE)"
            rows.append(
                [
                    label,
                    name,
                    len(queries),
                    nd,
                    rc,
                    percentile(lat, 50),
                    percentile(lat, 95),
                    b + tok_s,
                    float("nan"),
                    peak_rss_mib(),
                ]
            )


def convert_collection(coll: Collection, corpus_cfg: str | None, query_cfg: str | None, name: str) -> Collection:
    import opencc

    cc = opencc.OpenCC(corpus_cfg) if corpus_cfg else None
    qc = opencc.OpenCC(query_cfg) if query_cfg else None
    corpus = coll.corpus
    if cc:
        corpus = {k: {"title": cc.convert(v["title"]), "text": cc.convert(v["text"])} for k, v in corpus.items()}
    queries = {k: qc.convert(v) for k, v in coll.queries.items()} if qc else coll.queries
    return Collection(name, corpus, queries, coll.qrels)


def synthetic_speed(collections: list[Collection], n_chunks: int, n_queries: int, rows: list[list[object]]) -> None:
    """10,000 chunks of mixed zh/en text (~7M chars) built from the collections' text."""
    zh = [c for c in collections if is_chinese(c)]
    en = [c for c in collections if not is_chinese(c)]
    if not zh or not en:
        print("[skip] synthetic speed case needs a Chinese and an English collection", file=sys.stderr)
        return
    zh_chunks = [ch.text for d in zh[0].corpus.values() for ch in chunk_text(d["text"])]
    en_chunks = [ch.text for d in en[0].corpus.values() for ch in chunk_text(d["text"])]
    rnd = random.Random(11)

    def fill(pool: list[str]) -> str:
        out = rnd.choice(pool)
        while len(out) < 700:
            out += "\n" + rnd.choice(pool)
        return out[:768]

    texts: list[str] = []
    for i in range(n_chunks):
        kind = i % 3
        if kind == 0:
            texts.append(fill(zh_chunks))
        elif kind == 1:
            texts.append(fill(en_chunks))
        else:
            texts.append(fill(zh_chunks)[:384] + " " + fill(en_chunks)[:383])
    total = sum(len(t) for t in texts)
    docs = [LexicalDoc(key=i, title="", body=t, meta="", is_card=i % 2 == 0) for i, t in enumerate(texts)]
    t0 = time.perf_counter()
    index = LexicalIndex()
    index.add(docs)
    index.search("warm", "any", limit=1)
    build_s = time.perf_counter() - t0
    qs = list(zh[0].queries.values())[: n_queries // 2] + list(en[0].queries.values())[: n_queries // 2]
    label = f"synthetic {len(docs):,} chunks, {total / 1e6:.1f}M chars"
    for mode, limit in (("any", 10), ("any", 100), ("all", 10), ("phrase", 10)):
        lat = []
        for q in qs:
            if mode == "phrase":
                q = q[:8]
            t = time.perf_counter()
            index.search(q, mode, limit=limit)
            lat.append((time.perf_counter() - t) * 1000)
        rows.append(
            [
                label,
                f"FTS5 {mode}, limit {limit}",
                len(qs),
                float("nan"),
                float("nan"),
                percentile(lat, 50),
                percentile(lat, 95),
                build_s if (mode, limit) == ("any", 10) else float("nan"),
                float("nan"),
                peak_rss_mib(),
            ]
        )
    index.close()
    # bm25s on the same tokens, one query at a time.
    run_ids = [str(i) for i in range(len(texts))]
    t = time.perf_counter()
    toks = [segment.index_tokens(x) for x in texts]
    tok_s = time.perf_counter() - t
    _, lat, b = run_bm25s(run_ids, toks, dict(enumerate(qs)), segment.search_terms, k=10)
    rows.append(
        [
            label,
            "bm25s single query, k 10",
            len(qs),
            float("nan"),
            float("nan"),
            percentile(lat, 50),
            percentile(lat, 95),
            b + tok_s,
            float("nan"),
            peak_rss_mib(),
        ]
    )


BM25S_REFERENCE = ("bm25s, stopwords en + stem (SOURCE)", "bm25s, jieba search (SOURCE)", "bm25s single query, k 10")


def json_report(rows: list[list[object]]) -> dict:
    """The --json object: per collection our FTS5 `any` search and the bm25s reference (the
    SOURCE.md defaults: English stopwords + stemming, Chinese jieba search mode)."""

    def num(v: object) -> float | None:
        return None if not isinstance(v, float | int) or math.isnan(v) else round(float(v), 4)

    entries: dict[str, dict] = {}
    for label, system, _n, nd, rc, p50, p95, *_rest in rows:
        entry = entries.setdefault(str(label), {"collection": str(label)})
        side = "ours" if str(system).startswith("FTS5 any") else "bm25s" if system in BM25S_REFERENCE else None
        if side and side not in entry:
            entry[side] = {"ndcg@10": num(nd), "recall@100": num(rc), "p50_ms": num(p50), "p95_ms": num(p95)}
    return {"collections": [e for e in entries.values() if "ours" in e and "bm25s" in e]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="directory of collections (each a folder with corpus.jsonl, queries.jsonl, qrels.tsv)")
    ap.add_argument("--quick", action="store_true", help="subsample queries (300 per collection)")
    ap.add_argument("--segmenter", choices=("rjieba", "jieba"), help="force the segmentation backend")
    ap.add_argument("--no-synthetic", action="store_true", help="skip the 10,000-chunk speed case")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = ap.parse_args(argv)

    if args.segmenter:
        segment.set_backend(args.segmenter)
    t = time.perf_counter()
    segment.warm_up()
    print(
        f"segmenter: {segment.backend()} (load {time.perf_counter() - t:.2f} s); fold: OpenCC {'+'.join(segment.OPENCC_CHAIN)}",
        file=sys.stderr if args.json else sys.stdout,
    )
    n_q = 300 if args.quick else None
    rows: list[list[object]] = []
    loaded: list[Collection] = []

    for name in find_collections(args.data):
        coll = load_collection(args.data, name)
        if coll is None:
            continue
        loaded.append(coll)
        chinese = is_chinese(coll)
        qs = subsample(coll.queries, n_q)
        bench_collection(coll, name, qs, rows, chinese=chinese)
        if not chinese:
            continue
        latin = {k: v for k, v in qs.items() if re.search(r"[A-Za-z]{2,}", v)}
        if latin:
            index, owner, _, _ = build_fts(coll)
            run, lat = run_fts(index, owner, latin, "any")
            nd, rc = evaluate(run, coll.qrels)
            rows.append([f"{name} (Latin-word queries)", "FTS5 any", len(latin), nd, rc, percentile(lat, 50),
                         percentile(lat, 95), float("nan"), float("nan"), peak_rss_mib()])
            index.close()
        # script-insensitivity: the corpus and the queries in the other script
        trad_corpus = convert_collection(coll, "s2t", "t2s", f"{name}-trad-corpus")
        bench_collection(trad_corpus, f"{name}: Trad corpus, Simp queries", subsample(trad_corpus.queries, n_q),
                         rows, True)
        simp_corpus = convert_collection(coll, "t2s", "s2t", f"{name}-simp-corpus")
        bench_collection(simp_corpus, f"{name}: Simp corpus, Trad queries", subsample(simp_corpus.queries, n_q),
                         rows, True)
    if not args.no_synthetic:
        synthetic_speed(loaded, 10_000, 300 if args.quick else 1000, rows)
    if args.json:
        print(json.dumps(json_report(rows), ensure_ascii=False))
        return 0
    print()
    print_table(HEADERS, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
