"""Shared benchmark helpers: dataset loading, nDCG/Recall, latency percentiles, peak RSS."""

from __future__ import annotations

import json
import math
import resource
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data"


@dataclass
class Collection:
    name: str
    corpus: dict[str, dict[str, str]]  # doc id -> {"title", "text"}
    queries: dict[str, str]  # query id -> text
    qrels: dict[str, dict[str, int]]  # query id -> {doc id: relevance}


def corpus_path(root: Path) -> Path:
    """``root/corpus.jsonl``, or the file it names: a collection built over another's corpus
    (zh-cmrc2018-partial-words) stores a relative path there, as a git symlink checked out
    without symlink support does."""
    path = root / "corpus.jsonl"
    if path.stat().st_size < 4096:
        head = path.read_text(encoding="utf-8").strip()
        if head and not head.startswith("{") and "\n" not in head:
            target = (root / head).resolve()
            if target.is_file():
                return target
    return path


def load_collection(data_dir: Path, name: str) -> Collection | None:
    root = data_dir / name
    if not (root / "corpus.jsonl").exists():
        print(f"[skip] {name}: no corpus at {root}", file=sys.stderr)
        return None
    corpus: dict[str, dict[str, str]] = {}
    with open(corpus_path(root), encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            corpus[str(d.get("id", d.get("_id")))] = {"title": d.get("title") or "", "text": d.get("text") or ""}
    queries: dict[str, str] = {}
    with open(root / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            queries[str(q.get("id", q.get("_id")))] = q["text"]
    qrels: dict[str, dict[str, int]] = {}
    with open(root / "qrels.tsv", encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or not parts[2].lstrip("-").isdigit():
                continue  # header line ("query-id corpus-id score") or blank
            qid, did, rel = parts
            if int(rel) > 0:
                qrels.setdefault(qid, {})[did] = int(rel)
    queries = {q: t for q, t in queries.items() if q in qrels}
    return Collection(name, corpus, queries, qrels)


def traditional_copy(coll: Collection) -> Collection:
    """The same collection in Traditional script (OpenCC s2t on corpus and queries): checks
    that nothing is tuned to one script, and how a model reads the other script."""
    import opencc

    conv = opencc.OpenCC("s2t").convert
    corpus = {d: {"title": conv(v["title"]), "text": conv(v["text"])} for d, v in coll.corpus.items()}
    queries = {q: conv(t) for q, t in coll.queries.items()}
    return Collection(coll.name + " (s2t)", corpus, queries, coll.qrels)


def load_named(data_dir: Path, name: str) -> Collection | None:
    """``NAME`` or ``NAME:s2t`` (the Traditional-script copy of NAME)."""
    base, _, variant = name.partition(":")
    if variant not in ("", "s2t"):
        raise SystemExit(f"unknown collection variant {variant!r} in {name!r} (only ':s2t')")
    coll = load_collection(data_dir, base)
    return traditional_copy(coll) if coll is not None and variant else coll


def find_collections(data_dir: Path) -> list[str]:
    """Every folder under `data_dir` holding corpus.jsonl, queries.jsonl and qrels.tsv."""
    if not data_dir.is_dir():
        print(f"[skip] no data directory at {data_dir}", file=sys.stderr)
        return []
    return sorted(p.name for p in data_dir.iterdir()
                  if all((p / f).is_file() for f in ("corpus.jsonl", "queries.jsonl", "qrels.tsv")))


def is_chinese(coll: Collection, sample: int = 200) -> bool:
    """True when CJK ideographs make up a fifth or more of a sample of the corpus text."""
    text = "".join(d["title"] + d["text"] for d in list(coll.corpus.values())[:sample])
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff")
    return bool(text) and cjk / len(text) >= 0.2


def ndcg_at_k(ranked: list[str], rels: dict[str, int], k: int = 10) -> float:
    """trec_eval nDCG: linear gain, log2(rank + 1) discount."""
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rels.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at_k(ranked: list[str], rels: dict[str, int], k: int = 100) -> float:
    relevant = {d for d, g in rels.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant & set(ranked[:k])) / len(relevant)


def evaluate(run: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> tuple[float, float]:
    """Mean nDCG@10 and Recall@100 over the queries of ``run``."""
    if not run:
        return 0.0, 0.0
    nd = [ndcg_at_k(run[q], qrels[q]) for q in run]
    rc = [recall_at_k(run[q], qrels[q]) for q in run]
    return sum(nd) / len(nd), sum(rc) / len(rc)


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    idx = min(len(s) - 1, max(0, math.ceil(p / 100 * len(s)) - 1))
    return s[idx]


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def print_table(headers: list[str], rows: list[list[object]]) -> None:
    def fmt(v: object) -> str:
        if isinstance(v, float):
            if math.isnan(v):
                return "-"
            return f"{v:.4f}" if v < 10 else f"{v:,.1f}"
        return str(v)

    cells = [[fmt(v) for v in r] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(headers)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for c in cells:
        print("| " + " | ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)) + " |")


def rows_json(headers: list[str], rows: list[list[object]]) -> list[dict[str, object]]:
    """Table rows as JSON objects keyed by the column headers (NaN as null), for --json."""
    def value(v: object) -> object:
        if isinstance(v, float):
            return None if math.isnan(v) else round(v, 4)
        return v

    return [{h: value(v) for h, v in zip(headers, r, strict=True)} for r in rows]
