"""Lexical (BM25) benchmark beside bm25s, measured in the same run, query by query.

    .venv/bin/python bench/bench_lexical.py [--data ../shared/data] [--collections a,b] [--quick]
        [--no-variants] [--no-synthetic] [--segmenter jieba] [--json]

For each collection every document is chunked with ``chunk_text`` (title as the title
column, the abstract/paragraph as chunk bodies) and indexed with ``LexicalIndex``, its
chunks grouped by document. Each query ranks 100 **documents** on every system: ours with
``search(..., per_group=True)`` (a document scores its best chunk, read as deep as it takes
to fill 100 documents), bm25s on whole documents (k = 100). The systems run interleaved,
each query on every system (in a random order) before the next query, so load on the shared
machine falls on all of them alike. Timed on every side: the query text → a ranked list, tokenisation
included (ours: fold, Jieba, stemming; bm25s: its own tokenizer, or ``search_terms`` on the
"our tokens" rows), in the calling thread (bm25s ``n_threads=0``).
Prints nDCG@10 (linear gain, log2 discount), Recall@100, query latency p50/p95, index
build time, segmentation throughput and peak RSS; the table also shows what the first 100
*chunks* hold (the most a product search returns), then a synthetic 10,000-chunk mixed
zh/en speed case. Figures only: nothing here asserts timing. ``--json`` prints one JSON
object instead of the table (see bench/README.md).
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
from collections.abc import Callable
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
from single_chars import BASE as SINGLE_CHAR_BASE  # noqa: E402
from single_chars import NAMES as SINGLE_CHAR_SETS  # noqa: E402
from single_chars import single_char_collection  # noqa: E402

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
    "snapshot MB (BM25 + phrase)",
    "peak RSS MiB",
]
_WORD = re.compile(r"\w")
NAN = float("nan")
# A system: query text -> ranked document ids (the timed call), and its build seconds.
Search = Callable[[str], list[str]]


def build_fts(coll: Collection, pieces: bool = True) -> tuple[LexicalIndex, dict[int, str], float, float]:
    """Chunk and index a collection: (index, chunk key -> doc id, build seconds, segmentation MB/s).
    ``pieces=False``: the words alone, as before the CJK pieces field (what it costs)."""
    docs: list[LexicalDoc] = []
    owner: dict[int, str] = {}
    for n, (did, d) in enumerate(coll.corpus.items()):
        for ch in chunk_text(d["text"]):
            key = len(owner)
            owner[key] = did
            docs.append(LexicalDoc(key=key, title=d["title"], body=ch.text, meta="", is_card=True, group=n))
    # Segmentation throughput over the chunk text (both token streams), as ingest sees it.
    nbytes = sum(len(x.body.encode()) + len(x.title.encode()) for x in docs)
    t = time.perf_counter()
    for x in docs:
        segment.index_and_phrase_tokens(x.title)
        segment.index_and_phrase_tokens(x.body)
    seg_s = time.perf_counter() - t
    gc.collect()
    t = time.perf_counter()
    index = LexicalIndex(pieces=pieces)
    index.add(docs)
    index.search("warm", "any", limit=1)  # includes the one-off FTS5 segment merge
    build_s = time.perf_counter() - t
    return index, owner, build_s, nbytes / 1e6 / seg_s


def bm25_memory_mib(index: LexicalIndex) -> float:
    """What the BM25 part of an index holds in memory: its numpy arrays, vocabularies and
    term strings (bench code reading the index's internals; the FTS5 phrase table is SQLite's
    and the same with or without pieces)."""
    bm25 = index._bm25
    arrays = [bm25._row_key, bm25._row_group, bm25._row_gidx, bm25._row_card, bm25._row_alive]
    total = sum(a.nbytes for a in arrays) + sys.getsizeof(bm25._key_row) + sys.getsizeof(bm25._group_ids)
    for fld in (bm25._words, bm25._pieces, getattr(bm25, "_chars", None)):
        if fld is not None:  # None: an index from before the characters field (older code)
            total += field_memory_mib(fld) * 2**20
    return total / 2**20


def field_memory_mib(fld) -> float:  # noqa: ANN001  (a FieldPostings)
    """One BM25 field's arrays and vocabulary."""
    return (sum(a.nbytes for a in (fld.lens, fld.ptr, fld.prow, fld.ptf)) + fld.vocab.nbytes()) / 2**20


def fts_search(index: LexicalIndex, owner: dict[int, str], mode: str, per_group: bool = True,
               limit: int = 100) -> Search:
    def run(text: str) -> list[str]:
        try:
            hits = index.search(text, mode, limit=limit, per_group=per_group)
        except LimitError:
            return []
        # best chunk first, so a document's first hit is its best chunk
        return list(dict.fromkeys(owner[h.key] for h in hits))

    return run


def bm25s_search(doc_ids: list[str], doc_tokens: list[list[str]], qtok: Callable[[str], list[str]],
                 k: int = 100) -> tuple[Search, float]:
    """bm25s over whole documents; the search tokenises the query with ``qtok`` and retrieves
    in the calling thread (``n_threads=1`` would start a thread pool on every call)."""
    import bm25s

    t = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index(doc_tokens, show_progress=False)
    build_s = time.perf_counter() - t
    k = min(k, len(doc_ids))

    def run(text: str) -> list[str]:
        toks = qtok(text)
        if not toks:
            return []
        res = retriever.retrieve([toks], k=k, show_progress=False, n_threads=0)
        return [doc_ids[i] for i, s in zip(res.documents[0], res.scores[0], strict=True) if s > 0]

    return run, build_s


def run_interleaved(systems: dict[str, Search], queries: dict[str, str]
                    ) -> dict[str, tuple[dict[str, list[str]], list[float]]]:
    """Every query on every system before the next query, in a new (seeded) random order for
    each query. A rotation of one fixed order (as before) left each system always right after
    the same other one: ours right after bm25s with Python jieba, whose dictionary work evicts
    the CPU caches, which cost the system that followed it ~0.1-0.3 ms a query."""
    names = list(systems)
    out: dict[str, tuple[dict[str, list[str]], list[float]]] = {n: ({}, []) for n in names}
    shuffle = random.Random(5).shuffle
    gc.collect()
    for qid, text in queries.items():
        order = names[:]
        shuffle(order)
        for name in order:
            search = systems[name]
            t = time.perf_counter()
            ranked = search(text)
            out[name][1].append((time.perf_counter() - t) * 1000)
            out[name][0][qid] = ranked
    return out


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
    doc_ids = list(coll.corpus)
    texts = [coll.corpus[d]["title"] + " " + coll.corpus[d]["text"] for d in doc_ids]
    systems: dict[str, Search] = {
        "ours any": fts_search(index, owner, "any"),
        "ours all": fts_search(index, owner, "all"),
        "ours any, first 100 chunks": fts_search(index, owner, "any", per_group=False),
    }
    builds = {"ours any": build_s}
    snapshots = {}
    words_only = None
    if chinese:  # the same without the CJK pieces field: before/after in one run
        words_only, _, builds[BEFORE], _ = build_fts(coll, pieces=False)
        systems[BEFORE] = fts_search(words_only, owner, "any")
    # bm25s on exactly our tokens (doc level, unchunked).
    t = time.perf_counter()
    ours_tokens = [segment.index_tokens(x) for x in texts]
    tok_s = time.perf_counter() - t
    systems[OUR_TOKENS], b = bm25s_search(doc_ids, ours_tokens, segment.search_terms)
    builds[OUR_TOKENS] = b + tok_s
    # bm25s defaults as in SOURCE.md.
    if chinese:
        t = time.perf_counter()
        toks = [jieba_default_tokens(x) for x in texts]
        tok_s = time.perf_counter() - t
        systems[BM25S_ZH], b = bm25s_search(doc_ids, toks, jieba_default_tokens)
        builds[BM25S_ZH] = b + tok_s
    else:
        for stem, name in ((False, BM25S_EN), (True, BM25S_EN_STEM)):
            tok = english_default_tokenizer(stem)
            t = time.perf_counter()
            toks = tok(texts)
            tok_s = time.perf_counter() - t
            systems[name], b = bm25s_search(doc_ids, toks, lambda q, tok=tok: tok([q])[0])
            builds[name] = b + tok_s
    results = run_interleaved(systems, queries)
    chunks = len(index)
    for name, ix in (("ours any", index), (BEFORE, words_only)):
        if ix is not None:
            main, phrase = ix.serialize_parts()  # what the vault stores (encrypted) for this index
            snapshots[name] = f"{len(main) / 1e6:.2f} + {len(phrase) / 1e6:.2f}"
            ix.close()
    for name, (run, lat) in results.items():
        nd, rc = evaluate(run, coll.qrels)
        system = f"{name} ({chunks:,} chunks)" if name.startswith("ours") else name
        rows.append([label, system, len(queries), nd, rc, percentile(lat, 50), percentile(lat, 95),
                     builds.get(name, NAN), seg_mbs if name == "ours any" else NAN, snapshots.get(name, "-"),
                     peak_rss_mib()])


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
    built: dict[str, tuple[LexicalIndex, float, str]] = {}
    for name, pieces in (("ours any, limit 10", True), ("ours any, limit 10, words only (before)", False)):
        gc.collect()
        t0 = time.perf_counter()
        ix = LexicalIndex(pieces=pieces)
        ix.add(docs)
        ix.search("warm", "any", limit=1)
        build_s = time.perf_counter() - t0
        main, phrase = ix.serialize_parts()
        held = bm25_memory_mib(ix)
        built[name] = (ix, build_s, f"{len(main) / 1e6:.2f} + {len(phrase) / 1e6:.2f} (BM25 in memory {held:.0f} MiB)")
    index = built["ours any, limit 10"][0]
    qs = list(zh[0].queries.values())[: n_queries // 2] + list(en[0].queries.values())[: n_queries // 2]
    label = f"synthetic {len(docs):,} chunks, {total / 1e6:.1f}M chars"
    owner = {i: str(i) for i in range(len(docs))}
    systems: dict[str, Search] = {}
    for mode, limit in (("any", 10), ("any", 100), ("all", 10), ("phrase", 10)):
        run = fts_search(index, owner, mode, per_group=False, limit=limit)
        systems[f"ours {mode}, limit {limit}"] = (lambda q, run=run: run(q[:8])) if mode == "phrase" else run
    before = built["ours any, limit 10, words only (before)"][0]
    systems["ours any, limit 10, words only (before)"] = fts_search(before, owner, "any", per_group=False, limit=10)
    # bm25s on the same tokens, one query at a time.
    t = time.perf_counter()
    toks = [segment.index_tokens(x) for x in texts]
    tok_s = time.perf_counter() - t
    systems[BM25S_SINGLE], b = bm25s_search([str(i) for i in range(len(texts))], toks, segment.search_terms, k=10)
    results = run_interleaved(systems, {str(i): q for i, q in enumerate(qs)})
    for name, (_, lat) in results.items():
        build_s = b + tok_s if name == BM25S_SINGLE else built[name][1] if name in built else NAN
        rows.append([label, name, len(qs), NAN, NAN, percentile(lat, 50), percentile(lat, 95), build_s, NAN,
                     built[name][2] if name in built else "-", peak_rss_mib()])
    for ix, _, _ in built.values():
        ix.close()


BEFORE = "ours any, words only (no CJK pieces: before)"
OUR_TOKENS = "bm25s, our tokens (docs)"
BM25S_EN = "bm25s, stopwords en (SOURCE)"
BM25S_EN_STEM = "bm25s, stopwords en + stem (SOURCE)"
BM25S_ZH = "bm25s, jieba search (SOURCE)"
BM25S_SINGLE = "bm25s single query, k 10"
BM25S_REFERENCE = (BM25S_EN_STEM, BM25S_ZH, BM25S_SINGLE)


def json_report(rows: list[list[object]]) -> dict:
    """The --json object: per collection our `any` search (100 documents) and the bm25s
    reference (the SOURCE.md defaults: English stopwords + stemming, Chinese jieba search mode);
    Chinese collections also give `words_only`, our search without the CJK pieces field."""

    def num(v: object) -> float | None:
        return None if not isinstance(v, float | int) or math.isnan(v) else round(float(v), 4)

    entries: dict[str, dict] = {}
    for label, system, _n, nd, rc, p50, p95, *_rest in rows:
        entry = entries.setdefault(str(label), {"collection": str(label)})
        ours = str(system).startswith("ours any (") or system == "ours any, limit 10"
        before = str(system).startswith((BEFORE, "ours any, limit 10, words only"))
        side = "ours" if ours else "words_only" if before else "bm25s" if system in BM25S_REFERENCE else None
        if side and side not in entry:
            entry[side] = {"ndcg@10": num(nd), "recall@100": num(rc), "p50_ms": num(p50), "p95_ms": num(p95)}
    return {"collections": [e for e in entries.values() if "ours" in e and "bm25s" in e]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="directory of collections (each a folder with corpus.jsonl, queries.jsonl, qrels.tsv)")
    ap.add_argument("--quick", action="store_true", help="subsample queries (300 per collection)")
    ap.add_argument("--segmenter", choices=("rjieba", "jieba"), help="force the segmentation backend")
    ap.add_argument("--no-synthetic", action="store_true", help="skip the 10,000-chunk speed case")
    ap.add_argument("--collections", default="", help="comma-separated names (default: every collection in --data)")
    ap.add_argument("--no-variants", action="store_true", help="skip the Traditional/Simplified copies of Chinese collections")
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

    names = [c for c in args.collections.split(",") if c] or find_collections(args.data)
    if not args.collections and SINGLE_CHAR_BASE in names:
        names += list(SINGLE_CHAR_SETS)  # generated from zh-cmrc2018, not stored
    for name in names:
        generated = name in SINGLE_CHAR_SETS
        coll = load_collection(args.data, SINGLE_CHAR_BASE if generated else name)
        if coll is None:
            continue
        if generated:
            coll = single_char_collection(coll, name)
        else:
            loaded.append(coll)
        chinese = is_chinese(coll)
        qs = subsample(coll.queries, n_q)
        bench_collection(coll, name, qs, rows, chinese=chinese)
        if not chinese or args.no_variants or generated:
            continue
        latin = {k: v for k, v in qs.items() if re.search(r"[A-Za-z]{2,}", v)}
        if latin:
            index, owner, _, _ = build_fts(coll)
            run, lat = run_interleaved({"ours": fts_search(index, owner, "any")}, latin)["ours"]
            nd, rc = evaluate(run, coll.qrels)
            rows.append([f"{name} (Latin-word queries)", "ours any", len(latin), nd, rc, percentile(lat, 50),
                         percentile(lat, 95), NAN, NAN, "-", peak_rss_mib()])
            index.close()
        # script-insensitivity: the corpus and the queries in the other script
        trad_corpus = convert_collection(coll, "s2t", "t2s", f"{name}-trad-corpus")
        bench_collection(trad_corpus, f"{name}: Trad corpus, Simp queries", subsample(trad_corpus.queries, n_q),
                         rows, True)
        simp_corpus = convert_collection(coll, "t2s", "s2t", f"{name}-simp-corpus")
        bench_collection(simp_corpus, f"{name}: Simp corpus, Trad queries", subsample(simp_corpus.queries, n_q),
                         rows, True)
        trad = convert_collection(coll, "s2t", "s2t", f"{name}:s2t")  # both Traditional (NAME:s2t elsewhere)
        bench_collection(trad, f"{name}:s2t", subsample(trad.queries, n_q), rows, True)
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
