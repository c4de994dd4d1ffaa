#!/usr/bin/env python3
"""Extractive answers on collections with gold answer spans.

For every collection folder in ``--data`` that has ``answers.jsonl`` (``{"id", "answers": [...]}``
next to corpus/queries/qrels), each question is answered the way ``rag ask`` does without a
generation service: the project's BM25 index (FTS5, Jieba, folding) retrieves the top chunks,
``memories_tui.answer.extractive`` picks at most three sentences. Reported per collection:

* ``extractive``: share of questions whose extractive answer contains a gold answer, and
  the answer's mean length in characters (sentence text, without the ``[S#]`` labels);
* ``top-1 chunk``: share whose best retrieved chunk contains one (the ceiling);
* ``baseline``: BM25 top 3 chunks, the three sentences sharing the most Jieba terms with the
  question (same sentence splitter), measured in the same run;
* ``unanswerable``: the same questions with each one's gold document left out (its chunks are
  dropped from the retrieved list, which is filled from deeper down; the terms' rarity still
  counts it, one document in the corpus): the share answered ``insufficient_evidence``
  (declined: right, as no answer exists) beside the share answered on the full set.

The answerer weighs question terms by their rarity in the index (``LexicalIndex.rarity``),
as ``rag ask`` does.

    .venv/bin/python bench/bench_extractive.py [--data DIR] [--collections NAME ...] [--max-questions N] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import DEFAULT_DATA, Collection, load_collection, print_table, traditional_copy  # noqa: E402

from memories_tui.answer.extractive import MatchText, extract_answer, split_sentences  # noqa: E402
from memories_tui.answer.types import INSUFFICIENT, Source  # noqa: E402
from memories_tui.errors import LimitError  # noqa: E402
from memories_tui.index.lexical import LexicalDoc, LexicalIndex  # noqa: E402
from memories_tui.text import segment  # noqa: E402
from memories_tui.text.chunking import chunk_text  # noqa: E402

RETRIEVED = 10  # chunks retrieved per question (rag ask's default --limit)
NAN = float("nan")


def load_answers(root: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    with open(root / "answers.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            spans = [a.strip() for a in d.get("answers", []) if isinstance(a, str) and a.strip()]
            if spans:
                out[str(d["id"])] = spans
    return out


def build(coll: Collection) -> tuple[LexicalIndex, dict[int, Source]]:
    docs: list[LexicalDoc] = []
    chunks: dict[int, Source] = {}
    for did, d in coll.corpus.items():
        for ch in chunk_text(d["text"]):
            key = len(chunks)
            chunks[key] = Source("", did, 1, ch.byte_start, ch.byte_end, d["title"], text=ch.text, chunk_hash=ch.chunk_hash)
            docs.append(LexicalDoc(key=key, title=d["title"], body=ch.text, meta="", is_card=True))
    index = LexicalIndex()
    index.add(docs)
    return index, chunks


def retrieve(index: LexicalIndex, chunks: dict[int, Source], question: str, leave_out: str | None = None,
             depth: int = 0) -> list[Source]:
    """The top RETRIEVED chunks; ``leave_out``: without that document's chunks (``depth``: how
    many it has, so the list is still filled)."""
    try:
        hits = index.search(question, "any", limit=RETRIEVED + depth)
    except LimitError:
        return []
    kept = [h for h in hits if chunks[h.key].record_id != leave_out][:RETRIEVED]
    out = []
    for i, h in enumerate(kept):
        c = chunks[h.key]
        out.append(Source(f"S{i + 1}", c.record_id, c.revision, c.byte_start, c.byte_end, c.title, text=c.text,
                          chunk_hash=c.chunk_hash))
    return out


def without_document(index: LexicalIndex, gone: list[Source]) -> Callable[[list[str]], list[float]]:
    """``index.rarity`` as if the chunks ``gone`` were not indexed: each term's row count less
    the rows of ``gone`` holding it (read back from the idf), so a name only the left-out
    document holds is unseen, as in a vault without it."""
    texts = [MatchText(c.text) for c in gone]
    titles = [MatchText(c.title) for c in gone]
    rows = len(index)

    def rarity(terms: list[str]) -> list[float]:
        out = []
        for term, idf in zip(terms, index.rarity(terms), strict=True):
            r = math.exp(idf) - 1.0  # (N - n + 0.5) / (n + 0.5)
            held = (rows + 0.5 - 0.5 * r) / (1.0 + r)
            held -= sum(1 for x, t in zip(texts, titles, strict=True) if max(x.holds(term), t.holds(term)) >= 1.0)
            held = max(0.0, held)
            n = rows - len(gone)
            out.append(math.log(1.0 + (n - held + 0.5) / (held + 0.5)))
        return out

    return rarity


def baseline(question: str, sources: list[Source]) -> list[str]:
    """BM25 top 3 chunks; the three sentences sharing the most Jieba terms with the question."""
    q = set(segment.index_tokens(question))
    cands = []
    for si, s in enumerate(sources[:3]):
        for a, b in split_sentences(s.text):
            text = s.text[a:b]
            cands.append((-len(q & set(segment.index_tokens(text))), si, a, text))
    cands.sort(key=lambda c: c[:3])
    best = sorted(cands[:3], key=lambda c: (c[1], c[2]))
    return [c[3] for c in best]


def contains_gold(text: str, golds: list[str]) -> bool:
    return any(g in text for g in golds)


def bench(coll: Collection, answers: dict[str, list[str]], max_questions: int | None) -> dict[str, object]:
    t0 = time.perf_counter()
    index, chunks = build(coll)
    build_s = time.perf_counter() - t0
    qids = [q for q in coll.queries if q in answers]
    if max_questions:
        qids = qids[:max_questions]
    hit_ex = hit_top1 = hit_base = declined = declined_unanswerable = 0
    per_doc: dict[str, int] = {}
    for c in chunks.values():
        per_doc[c.record_id] = per_doc.get(c.record_id, 0) + 1
    len_ex = len_base = len_top1 = 0
    lat: list[float] = []
    for qid in qids:
        question, golds = coll.queries[qid], answers[qid]
        sources = retrieve(index, chunks, question)
        if sources:
            hit_top1 += contains_gold(sources[0].text, golds)
            len_top1 += len(sources[0].text)
        t = time.perf_counter()
        ans = extract_answer(question, sources, rarity=index.rarity)
        lat.append((time.perf_counter() - t) * 1000)
        declined += ans.status == INSUFFICIENT
        gold = next(iter(coll.qrels.get(qid, {})), None)
        if gold is not None:
            rest = retrieve(index, chunks, question, leave_out=gold, depth=per_doc.get(gold, 0))
            rarity = without_document(index, [c for c in chunks.values() if c.record_id == gold])
            declined_unanswerable += extract_answer(question, rest, rarity=rarity).status == INSUFFICIENT
        text = "".join(s.text for s in ans.sentences)
        hit_ex += contains_gold(text, golds)
        len_ex += len(text)
        base = "".join(baseline(question, sources))
        hit_base += contains_gold(base, golds)
        len_base += len(base)
    n = max(1, len(qids))
    lat.sort()
    return {
        "collection": coll.name, "questions": len(qids),
        "extractive_contains_gold": hit_ex / n, "extractive_mean_chars": len_ex / n,
        "extractive_declined": declined / n, "unanswerable_declined": declined_unanswerable / n,
        "top1_chunk_contains_gold": hit_top1 / n, "top1_chunk_mean_chars": len_top1 / n,
        "baseline_contains_gold": hit_base / n, "baseline_mean_chars": len_base / n,
        "extract_p50_ms": lat[len(lat) // 2] if lat else None, "index_build_s": build_s,
    }


def traditional(coll: Collection, answers: dict[str, list[str]]) -> tuple[Collection, dict[str, list[str]]]:
    """The same collection and gold answers in Traditional script."""
    import opencc

    conv = opencc.OpenCC("s2t").convert
    golds = {q: [conv(a) for a in spans] for q, spans in answers.items()}
    return traditional_copy(coll), golds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of collections (default ../shared/data)")
    ap.add_argument("--collections", nargs="*", help="only these collection folders")
    ap.add_argument("--max-questions", type=int, default=None, help="first N questions only (smoke runs)")
    ap.add_argument("--traditional", action="store_true",
                    help="also run a Traditional-script copy (corpus, questions and answers through OpenCC s2t)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = ap.parse_args(argv)
    if not args.data.is_dir():
        print(f"[skip] no data directory at {args.data}", file=sys.stderr)
        return 1
    names = args.collections or sorted(p.name for p in args.data.iterdir() if (p / "answers.jsonl").is_file())
    results = []
    for name in names:
        coll = load_collection(args.data, name)
        if coll is None or not (args.data / name / "answers.jsonl").is_file():
            print(f"[skip] {name}: no answers.jsonl", file=sys.stderr)
            continue
        answers = load_answers(args.data / name)
        results.append(bench(coll, answers, args.max_questions))
        if args.traditional:
            results.append(bench(*traditional(coll, answers), args.max_questions))
    if args.json:
        print(json.dumps({"results": results}, ensure_ascii=False))
        return 0
    rows = []
    for r in results:
        rows.append([r["collection"], "extractive (ours)", r["questions"], r["extractive_contains_gold"],
                     r["extractive_mean_chars"], r["extractive_declined"]])
        rows.append([r["collection"], "extractive, gold document left out (unanswerable)", r["questions"], NAN, NAN,
                     r["unanswerable_declined"]])
        rows.append([r["collection"], "baseline: top 3 chunks, 3 sentences by shared terms", r["questions"],
                     r["baseline_contains_gold"], r["baseline_mean_chars"], NAN])
        rows.append([r["collection"], "ceiling: top-1 chunk", r["questions"], r["top1_chunk_contains_gold"],
                     r["top1_chunk_mean_chars"], NAN])
    print_table(["collection", "system", "questions", "contains gold", "mean chars", "declined"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
