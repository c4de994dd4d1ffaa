"""How a query that is part of a longer Chinese word is found: the two designs measured.

    .venv/bin/python bench/bench_pieces.py [--data ../shared/data] [--collections zh-cmrc2018-partial-words,zh-cmrc2018] [--json]

Per collection (100 documents ranked per query, a document scores its best chunk; nDCG@10
and Recall@100), with the product's index code:

* ``words only``: the Jieba words alone (``LexicalIndex(pieces=False)``), as before;
* ``pieces, weight W``: the product's design, every CJK run's overlapping two-character
  pieces as a second BM25 field, scored at W times the words (``lexical.PIECE_WEIGHT``, 0.5
  shipped; 0.1, 0.25 and 1.0 beside it);
* ``expansion, weight W``: the other design: each two-character piece of the query's CJK
  runs is expanded to the indexed words (3+ characters) that contain it, the most frequent
  first, within the 64-term limit, and those words are scored at W times the query's own
  words. No second field, but a piece that spans two words (竹廠 in 新竹|廠區) is never found,
  and a question's many pieces pull in many unrelated longer words.

Figures only; the expansion reads the words index's vocabulary directly (bench code only).

``--at-cache-limit`` measures instead what the pieces cost in a Chinese vault at the cache
limits (10,000 chunks / 16 MiB of source): build time, snapshot size and the BM25 part's
memory with and without pieces, and that one more note is still refused.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lexical import bm25_memory_mib, build_fts, field_memory_mib  # noqa: E402
from common import DEFAULT_DATA, evaluate, load_named, print_table  # noqa: E402

from memories_tui.config import Limits  # noqa: E402
from memories_tui.errors import LimitError  # noqa: E402
from memories_tui.index import lexical  # noqa: E402
from memories_tui.index.cache import VaultIndex  # noqa: E402
from memories_tui.index.lexical import LexicalDoc, LexicalIndex  # noqa: E402
from memories_tui.text import segment  # noqa: E402
from memories_tui.text.chunking import chunk_text  # noqa: E402
from memories_tui.vault.records import Record  # noqa: E402

HEADERS = ["collection", "design", "nDCG@10", "R@100"]


def _documents(hits: Sequence[tuple[int, float]], owner: dict[int, str]) -> list[str]:
    return list(dict.fromkeys(owner[key] for key, _ in hits))


def pieces_run(index: LexicalIndex, owner: dict[int, str], queries: dict[str, str], weight: float
               ) -> dict[str, list[str]]:
    shipped = lexical.PIECE_WEIGHT
    lexical.PIECE_WEIGHT = weight
    try:
        return {q: _documents(index.search(t, "any", limit=100, per_group=True), owner) for q, t in queries.items()}
    finally:
        lexical.PIECE_WEIGHT = shipped


def expansion_run(words: LexicalIndex, owner: dict[int, str], queries: dict[str, str], weight: float
                  ) -> dict[str, list[str]]:
    bm25 = words._bm25  # the words-only index's own scorer and vocabulary
    containing: dict[str, list[str]] = defaultdict(list)
    for word in bm25._words.vocab:
        if len(word) >= 3 and segment.is_cjk_word(word):
            for piece in dict.fromkeys(segment.index_pieces(word)):
                containing[piece].append(word)
    run = {}
    for qid, text in queries.items():
        folded = segment.fold(text)
        terms = segment.search_terms(text, folded)
        extra = [w for p in segment.query_pieces(folded, 10**6) for w in containing.get(p, ()) if w not in terms]
        extra = sorted(dict.fromkeys(extra), key=lambda w: -bm25.doc_freq(w))[:max(0, 64 - len(terms))]
        # score the query's words plus the expansions at `weight`, as two queries summed
        own = dict(bm25.top_k(terms, "any", 10**6))
        more = dict(bm25.top_k(extra, "any", 10**6)) if extra else {}
        scores = {k: own.get(k, 0.0) + weight * more.get(k, 0.0) for k in own.keys() | more.keys()}
        best: dict[str, float] = {}
        for key, score in scores.items():
            doc = owner[key]
            best[doc] = max(best.get(doc, 0.0), score)
        run[qid] = sorted(best, key=lambda d: -best[d])[:100]
    return run


def at_cache_limit(data: Path) -> dict[str, object]:
    """A vault at the default cache limits in Chinese alone (the pieces' worst case): notes of
    three zh-cmrc2018 paragraphs each (each note rotated by its number, so the text repeats
    less) until the next note would pass 10,000 chunks or 16 MiB of source. Built through
    ``VaultIndex.sync`` (the product's limit check included), then the same chunks without
    pieces; then one more note must be refused with the limit error."""
    coll = load_named(data, "zh-cmrc2018")
    if coll is None:
        raise SystemExit("zh-cmrc2018 not found under --data")
    paragraphs = [d["title"] + "。" + d["text"] for d in coll.corpus.values()]
    limits = Limits()
    records: list[Record] = []
    chunks = source = 0
    while True:
        i = len(records)
        body = "\n".join(paragraphs[(3 * i + j) % len(paragraphs)] for j in range(3))
        body = body[i % 97:] + body[:i % 97]
        record = Record(id=f"r{i}", revision=1, kind="memory", title=f"筆記 {i}", body=body)
        more, nbytes = len(chunk_text(body)), len(body.encode()) + len(record.title.encode())
        if chunks + more > limits.chunks or source + nbytes > limits.source_mib * 2**20:
            break
        records.append(record)
        chunks, source = chunks + more, source + nbytes
    vault = VaultIndex("bench", limits)
    t = time.perf_counter()
    vault.sync(records)
    with_pieces_s = time.perf_counter() - t
    first: dict[str, int] = {}
    docs = [LexicalDoc(k, c.title, c.chunk.text, "", False, group=first.setdefault(c.record_id, k))
            for k, c in sorted(vault.chunks.items())]
    t = time.perf_counter()
    words = LexicalIndex(pieces=False)
    words.add(docs)
    words.search("warm", "any", limit=1)
    words_s = time.perf_counter() - t
    sizes = {name: [round(len(part) / 1e6, 2) for part in ix.serialize_parts()]
             for name, ix in (("with pieces", vault.lexical), ("words only", words))}
    try:
        VaultIndex("bench", limits).sync([*records, Record(id="one-more", revision=1, kind="memory", title="再一則",
                                                           body=paragraphs[0] * 3)])
        refused = "no error: the limit did not hold"
    except LimitError as exc:
        refused = str(exc)
    return {"chunks": len(vault.chunks), "source_mib": round(vault.source_bytes / 2**20, 2),
            "cjk_chars": sum(len(r.body) for r in records),
            "build_s": {"with pieces": round(with_pieces_s, 1), "words only": round(words_s, 1)},
            "snapshot_mb (BM25, phrase)": sizes,
            "bm25_in_memory_mib": {"with pieces": round(bm25_memory_mib(vault.lexical)),
                                   "words only": round(bm25_memory_mib(words)),
                                   "of which the characters field": round(field_memory_mib(vault.lexical._bm25._chars), 1)},
            "one more note": refused}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--collections", default="zh-cmrc2018-partial-words,zh-cmrc2018")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    ap.add_argument("--at-cache-limit", action="store_true",
                    help="instead: cost of the pieces for a Chinese vault at the cache limits (one JSON object)")
    args = ap.parse_args()
    segment.warm_up()
    if args.at_cache_limit:
        print(json.dumps(at_cache_limit(args.data), ensure_ascii=False, indent=1))
        return
    report: dict[str, dict[str, dict[str, float]]] = {}
    for name in [c for c in args.collections.split(",") if c]:
        coll = load_named(args.data, name)
        if coll is None:
            continue
        index, owner, _, _ = build_fts(coll)
        words, _, _, _ = build_fts(coll, pieces=False)
        runs = {"words only (before)": pieces_run(words, owner, coll.queries, 0.0)}
        for weight in (0.1, 0.25, 0.5, 1.0):
            shipped = " (shipped)" if weight == lexical.PIECE_WEIGHT else ""
            runs[f"pieces, weight {weight}{shipped}"] = pieces_run(index, owner, coll.queries, weight)
        for weight in (0.5, 1.0):
            runs[f"expansion, weight {weight}"] = expansion_run(words, owner, coll.queries, weight)
        report[name] = {}
        for design, run in runs.items():
            nd, rc = evaluate(run, coll.qrels)
            report[name][design] = {"ndcg@10": round(nd, 4), "recall@100": round(rc, 4)}
        print(f"{name} done", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps({"collections": report}, ensure_ascii=False))
        return
    print_table(HEADERS, [[name, design, v["ndcg@10"], v["recall@100"]]
                          for name, designs in report.items() for design, v in designs.items()])


if __name__ == "__main__":
    main()
