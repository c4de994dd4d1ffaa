"""Where BM25 quality is won or lost: the product's choices against their alternatives.

    .venv/bin/python bench/bench_bm25_variants.py [--data ../shared/data] [--collections scifact,zh-cmrc2018] [--json]

For each collection, every variant ranks 100 documents per query and is compared with the
product's BM25 (chunks of 768 characters, a document scores its best chunk, title/body
5/1, FTS5's IDF, k1 1.2, b 0.75, titles stemmed like bodies) query by query: mean nDCG@10
and Recall@100, the mean nDCG@10 difference with a 95 % bootstrap interval (2,000 resamples
of the queries, seed 0), and how many queries gain or lose. Variants:

* ``first 100 chunks``: the product's ranking read only to its first 100 chunks (what the
  bench compared with bm25s's 100 documents before);
* ``whole documents``: one row per document instead of per chunk (FTS5 and Lucene IDF);
* ``title weight 1/2/3``: instead of 5;
* ``Lucene IDF``: ln(1 + (N − n + 0.5)/(n + 0.5)) instead of FTS5's ln((N − n + 0.5)/(n + 0.5))
  floored at 1e-6;
* ``k1 1.5``: bm25s's default instead of FTS5's 1.2;
* ``titles not stemmed``: title words folded but not stemmed (queries still stemmed).

The scorer here is a plain numpy BM25 over the product's own tokens (``segment``), written
out so each choice can be switched; with every switch at the product's setting it equals
the product's ranking. Figures only.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import DEFAULT_DATA, Collection, load_named, ndcg_at_k, print_table, recall_at_k  # noqa: E402

from memories_tui.text import segment  # noqa: E402
from memories_tui.text.chunking import chunk_text  # noqa: E402

HEADERS = ["collection", "variant", "nDCG@10", "R@100", "ΔnDCG@10", "95% interval", "gain / loss"]


def _unstemmed(text: str) -> list[str]:
    """``index_tokens`` without the stemmer: Jieba on CJK runs, folded Latin words as they are."""
    out: list[str] = []
    for i, part in enumerate(segment._CJK_SPLIT.split(segment.fold(text))):
        out.extend(segment._load_segmenter()(part) if i % 2 else segment._latin_words(part))
    return out


def _rows(coll: Collection, whole: bool, stem_titles: bool) -> tuple[list[tuple[list[str], list[str]]], list[int]]:
    """(title tokens, body tokens) per row and each row's document number."""
    rows, owner = [], []
    for n, d in enumerate(coll.corpus.values()):
        title = segment.index_tokens(d["title"]) if stem_titles else _unstemmed(d["title"])
        bodies = [d["text"]] if whole else [c.text for c in chunk_text(d["text"])]
        for body in bodies:
            rows.append((title, segment.index_tokens(body)))
            owner.append(n)
    return rows, owner


class Scorer:
    def __init__(self, rows: list[tuple[list[str], list[str]]], title_weight: float) -> None:
        postings: dict[str, tuple[list[int], list[float]]] = {}
        lengths = []
        for i, (title, body) in enumerate(rows):
            freqs: Counter[str] = Counter(body)
            for t in title:
                freqs[t] += title_weight  # type: ignore[assignment]
            lengths.append(len(title) + len(body) + len(freqs))  # the product's row length
            for t, f in freqs.items():
                entry = postings.setdefault(t, ([], []))
                entry[0].append(i)
                entry[1].append(f)
        self.postings = {t: (np.asarray(r), np.asarray(f, np.float64)) for t, (r, f) in postings.items()}
        self.lengths = np.asarray(lengths, np.float64)

    def scores(self, terms: list[str], k1: float, lucene_idf: bool, b: float = 0.75) -> np.ndarray:
        n = len(self.lengths)
        norm = k1 * (1 - b + b * self.lengths / self.lengths.mean())
        out = np.zeros(n)
        for t in terms:
            if t not in self.postings:
                continue
            rows, f = self.postings[t]
            df = len(rows)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5)) if lucene_idf else max(
                math.log((n - df + 0.5) / (df + 0.5)), 1e-6)
            out[rows] += idf * f * (k1 + 1) / (f + norm[rows])
        return out


def _rank_documents(scores: np.ndarray, owner: np.ndarray, n_docs: int, chunk_cap: int | None) -> list[int]:
    if chunk_cap is not None:  # the first `chunk_cap` rows, then their documents in order
        top = np.lexsort((np.arange(len(scores)), -scores))[:chunk_cap]
        return list(dict.fromkeys(int(owner[i]) for i in top if scores[i] > 0))
    best = np.zeros(n_docs)
    np.maximum.at(best, owner, scores)
    order = np.lexsort((np.arange(n_docs), -best))[:100]
    return [int(d) for d in order if best[d] > 0]


def evaluate_variant(coll: Collection, *, whole: bool = False, stem_titles: bool = True, title_weight: float = 5.0,
                     k1: float = 1.2, lucene_idf: bool = False, chunk_cap: int | None = None
                     ) -> dict[str, tuple[float, float]]:
    rows, owner = _rows(coll, whole, stem_titles)
    scorer = Scorer(rows, title_weight)
    doc_ids = list(coll.corpus)
    owner_arr = np.asarray(owner)
    out = {}
    for qid, text in coll.queries.items():
        ranked = [doc_ids[d] for d in _rank_documents(scorer.scores(segment.search_terms(text), k1, lucene_idf),
                                                      owner_arr, len(doc_ids), chunk_cap)]
        out[qid] = (ndcg_at_k(ranked, coll.qrels[qid]), recall_at_k(ranked, coll.qrels[qid]))
    return out


VARIANTS: dict[str, dict] = {
    "product (best chunk, 100 documents)": {},
    "first 100 chunks": {"chunk_cap": 100},
    "whole documents": {"whole": True},
    "whole documents, Lucene IDF": {"whole": True, "lucene_idf": True},
    "title weight 1": {"title_weight": 1.0},
    "title weight 2": {"title_weight": 2.0},
    "title weight 3": {"title_weight": 3.0},
    "Lucene IDF": {"lucene_idf": True},
    "k1 1.5": {"k1": 1.5},
    "titles not stemmed": {"stem_titles": False},
}


def compare(base: dict[str, tuple[float, float]], other: dict[str, tuple[float, float]]) -> dict[str, object]:
    diff = np.asarray([other[q][0] - base[q][0] for q in base])
    rng = np.random.default_rng(0)
    boots = diff[rng.integers(0, len(diff), (2000, len(diff)))].mean(axis=1)
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return {"ndcg@10": float(np.mean([v[0] for v in other.values()])),
            "recall@100": float(np.mean([v[1] for v in other.values()])),
            "delta_ndcg@10": float(diff.mean()), "interval": [float(lo), float(hi)],
            "gains": int((diff > 0).sum()), "losses": int((diff < 0).sum())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--collections", default="scifact,zh-cmrc2018")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = ap.parse_args()
    segment.warm_up()
    report: dict[str, dict[str, dict[str, object]]] = {}
    for name in [c for c in args.collections.split(",") if c]:
        coll = load_named(args.data, name)
        if coll is None:
            continue
        base = evaluate_variant(coll)
        report[name] = {}
        for label, options in VARIANTS.items():
            report[name][label] = compare(base, base if not options else evaluate_variant(coll, **options))
            print(f"{name}: {label} done", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps({"collections": report}, ensure_ascii=False))
        return
    rows: list[list[object]] = []
    for name, variants in report.items():
        for label, v in variants.items():
            interval = v["interval"]
            assert isinstance(interval, list)
            rows.append([name, label, v["ndcg@10"], v["recall@100"], v["delta_ndcg@10"],
                         f"[{interval[0]:+.4f}, {interval[1]:+.4f}]",
                         f"{v['gains']} / {v['losses']}"])
    print_table(HEADERS, rows)


if __name__ == "__main__":
    main()
