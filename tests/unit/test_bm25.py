"""The numpy BM25 scorer against independent expectations: BM25 computed by hand, and a real
SQLite FTS5 table ranked with ``bm25(lex, 5, 1, 2, 0)`` on the benchmark collections."""

from __future__ import annotations

import dataclasses
import json
import math
import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from memories_tui.index.bm25 import BM25Index, BM25Row
from memories_tui.index.lexical import LexicalDoc, LexicalIndex
from memories_tui.index.weights import LATIN_TITLE_WEIGHT
from memories_tui.text import segment
from memories_tui.text.chunking import chunk_text
from memories_tui.text.query import parse_query


def test_scores_match_bm25_computed_by_hand() -> None:
    ix = BM25Index()
    ix.add([
        BM25Row(10, {"apple": 2, "pie": 1}, 3),
        BM25Row(11, {"apple": 1}, 5),
        BM25Row(12, {"pie": 5, "crust": 1}, 6),
        BM25Row(13, {"tea": 1}, 2),
    ])
    n, avgdl, k1, b = 4, (3 + 5 + 6 + 2) / 4, 1.2, 0.75

    def term(f: float, df: int, length: int) -> float:
        idf = max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)
        return idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length / avgdl))

    expected = {10: term(2, 2, 3) + term(1, 2, 3), 11: term(1, 2, 5), 12: term(5, 2, 6)}
    got = dict(ix.top_k(["apple", "pie"], "any", 10))
    assert got == pytest.approx(expected, rel=1e-12)
    assert [k for k, _ in ix.top_k(["apple", "pie"], "any", 10)] == sorted(expected, key=lambda k: -expected[k])
    assert [k for k, _ in ix.top_k(["apple", "pie"], "all", 10)] == [10]
    assert ix.matching(["apple", "pie"]) == {10}
    assert ix.top_k(["apple", "nothing"], "all", 10) == []
    assert ix.top_k(["nothing"], "any", 10) == []
    # a term in over half the rows gets FTS5's floor idf of 1e-6, so it still ranks its rows
    ix.add([BM25Row(14, {"apple": 1}, 2), BM25Row(15, {"apple": 1}, 2)])
    assert {k for k, _ in ix.top_k(["apple"], "any", 10)} == {10, 11, 14, 15}


def test_replace_remove_cards_and_round_trip() -> None:
    ix = BM25Index()
    ix.add([BM25Row(i, {"w": 1.0, f"t{i % 3}": 2.0}, 4, card=i % 2 == 0) for i in range(40)])
    ix.add([BM25Row(5, {"fresh": 1.0}, 1)])  # replaced: goes to the delta
    ix.remove([6, 7, 999])
    assert len(ix) == 38
    assert 5 not in {k for k, _ in ix.top_k(["t2"], "any", 100)}
    assert [k for k, _ in ix.top_k(["fresh"], "any", 5)] == [5]
    got = ix.top_k(["t0", "w"], "any", 100, cards_only=True)
    assert got and all(k % 2 == 0 for k, _ in got) and 6 not in {k for k, _ in got}
    copy = BM25Index.from_bytes(ix.to_bytes())
    for terms, mode in ((["t0", "w"], "any"), (["t1", "w"], "all"), (["fresh"], "any")):
        assert copy.top_k(terms, mode, 100) == ix.top_k(terms, mode, 100)
    with pytest.raises(ValueError):
        BM25Index.from_bytes(ix.to_bytes()[:-9][:40])


def test_incremental_adds_and_merges_equal_one_bulk_build(monkeypatch: pytest.MonkeyPatch) -> None:
    from memories_tui.index import bm25_postings

    monkeypatch.setattr(bm25_postings, "_MERGE_MIN", 50)  # force several delta merges
    rng = random.Random(5)
    rows = [BM25Row(i, {f"w{rng.randrange(30)}": float(rng.randrange(1, 6)) for _ in range(4)}, rng.randrange(4, 12),
                    card=i % 4 == 0) for i in range(600)]
    bulk = BM25Index()
    bulk.add([r for r in rows if r.key % 7 != 3])
    step = BM25Index()
    for start in range(0, 600, 9):
        step.add(rows[start:start + 9])
    step.remove([r.key for r in rows if r.key % 7 == 3])
    for terms in (["w1"], ["w2", "w3", "w4"], ["w5", "w5", "w29", "nope"]):
        for mode in ("any", "all"):
            assert step.top_k(terms, mode, 50) == bulk.top_k(terms, mode, 50)
            assert step.top_k(terms, mode, 50, cards_only=True) == bulk.top_k(terms, mode, 50, cards_only=True)
        assert step.matching(terms) == bulk.matching(terms)


def test_scores_after_removals_and_a_merge_equal_a_fresh_build() -> None:
    """After removals a field computes contributions term by term; a snapshot merges them
    away and every posting's contribution is then computed at once (both fields, the pieces
    at their weight): the same scores as a fresh build of the rows left, bit for bit."""
    rng = random.Random(9)

    def row(key: int) -> BM25Row:
        words = {f"w{rng.randrange(40)}": float(rng.randrange(1, 5)) for _ in range(5)}
        pieces = {f"小{chr(0x4e00 + rng.randrange(30))}": float(rng.randrange(1, 3)) for _ in range(4)}
        return BM25Row(key, words, rng.randrange(5, 15), card=key % 2 == 0, group=key // 3, pieces=pieces,
                       pieces_length=rng.randrange(4, 9))

    rows = [row(key) for key in range(500)]
    ix = BM25Index()
    ix.add(rows)
    gone = set(rng.sample(range(500), 120))
    ix.remove(gone)
    left = [r for r in rows if r.key not in gone]
    fresh = BM25Index()
    fresh.add(left)
    queries = [([f"w{rng.randrange(40)}" for _ in range(3)], [f"小{chr(0x4e00 + rng.randrange(30))}" for _ in range(4)])
               for _ in range(30)]

    def results(index: BM25Index) -> list[object]:
        out: list[object] = []
        for terms, pieces in queries:
            for weight in (0.5, 1.0):
                out.append(index.top_k(terms, "any", 40, pieces=pieces, piece_weight=weight))
                out.append(index.top_k(terms, "any", 10, True, True, pieces, weight))
            out.append(index.top_k(terms[:1], "all", 40, pieces=pieces, piece_weight=0.5))
        return out

    want = results(fresh)
    assert results(ix) == want  # removed rows still in the postings: term by term
    ix.to_bytes()  # merges: the removed rows' postings are gone, contributions all at once
    assert results(ix) == want
    assert results(BM25Index.from_bytes(ix.to_bytes())) == want


def _collection_sample(root: Path, docs: int, queries: int) -> tuple[list[LexicalDoc], list[str]]:
    rows = []
    with open(root / "corpus.jsonl", encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if n >= docs:
                break
            d = json.loads(line)
            for ch in chunk_text(d.get("text") or ""):
                rows.append(LexicalDoc(len(rows) + 1, d.get("title") or "", ch.text, "tag:" + str(n % 5), n % 3 == 0))
    with open(root / "queries.jsonl", encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh]
    return rows, random.Random(3).sample(texts, min(queries, len(texts)))


def _fts5_reference(docs: list[LexicalDoc]) -> sqlite3.Connection:
    """The former layout: FTS5 lex(title, ltitle, body, meta, terms) where terms lists each
    row's distinct tokens once with weight 0 (so it counts toward the row length); a title
    without a CJK word goes in ltitle (the Latin title weight), one with a CJK word in title."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE lex USING fts5(title, ltitle, body, meta, terms, "
                 "tokenize='unicode61 remove_diacritics 2')")
    for d in docs:
        t, b, m = (segment.index_tokens(x) for x in (d.title, d.body, d.meta))
        cjk = any(map(segment.is_cjk_word, t))
        conn.execute("INSERT INTO lex(rowid, title, ltitle, body, meta, terms) VALUES (?, ?, ?, ?, ?, ?)",
                     (d.key, " ".join(t) if cjk else "", "" if cjk else " ".join(t), " ".join(b), " ".join(m),
                      " ".join(dict.fromkeys(t + b + m))))
    return conn


@pytest.mark.parametrize("collection", ["scifact", "zh-cmrc2018"], indirect=True)
def test_ranking_equals_fts5_bm25_on_benchmark_collections(collection: Path) -> None:
    docs, queries = _collection_sample(collection, 400, 60)
    ours = LexicalIndex()
    ours.add(docs)
    ref = _fts5_reference(docs)
    checked = 0
    for query in queries:
        terms = segment.search_terms(query)
        if not terms:
            continue
        for mode, joiner in (("any", " OR "), ("all", " AND ")):
            match = joiner.join('"' + t.replace('"', '""') + '"' for t in terms)
            want = ref.execute(f"SELECT rowid, -bm25(lex, 5.0, {LATIN_TITLE_WEIGHT}, 1.0, 2.0, 0.0) AS s FROM lex "
                               "WHERE lex MATCH ? ORDER BY s DESC, rowid LIMIT 20", (match,)).fetchall()
            # the words field alone: without CJK pieces or characters a query scores exactly as FTS5 ranks it
            words_only = dataclasses.replace(parse_query(query, match_mode=mode, limit=20), pieces=(), chars=())
            got = [(h.key, h.score) for h in ours.search(words_only, limit=20)]
            assert [k for k, _ in got] == [k for k, _ in want], (query, mode)
            # equal up to row lengths: FTS5's tokenizer drops a rare token Jieba keeps ("・")
            assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-2)
            checked += 1
    assert checked >= 60


def _best_groups_by_brute_force(ix: BM25Index, rows: list[BM25Row], terms: list[str], mode: str, k: int,
                                cards_only: bool = False) -> list[tuple[int, float]]:
    """Every matching row scored, then the best row of each group, groups by that row."""
    scored = dict(ix.top_k(terms, mode, len(rows) + 1, cards_only))
    best: dict[int, tuple[int, float]] = {}
    for r in rows:
        if r.key in scored:
            group = r.key if r.group is None else r.group
            mine = (r.key, scored[r.key])
            held = best.get(group)
            if held is None or (-mine[1], mine[0]) < (-held[1], held[0]):
                best[group] = mine
    return sorted(best.values(), key=lambda kv: (-kv[1], kv[0]))[:k]


def test_per_group_ranks_each_group_by_its_best_row() -> None:
    rng = random.Random(11)
    rows = []
    for key in range(900):
        # whole-number frequencies and few lengths: many exact ties, within groups and across them
        freqs = {f"w{rng.randrange(12)}": float(rng.randrange(1, 3)) for _ in range(3)}
        rows.append(BM25Row(key, freqs, rng.choice((4, 6)), card=key % 3 == 0, group=key // rng.choice((1, 3, 7))))
    ix = BM25Index()
    ix.add(rows)
    checked = 0
    for terms in (["w1"], ["w2", "w3"], ["w4", "w5", "w6", "nope"]):
        for mode in ("any", "all"):
            for k in (1, 5, 40, 2000):
                for cards in (False, True):
                    want = _best_groups_by_brute_force(ix, rows, terms, mode, k, cards)
                    got = ix.top_k(terms, mode, k, cards, per_group=True)
                    assert got == want, (terms, mode, k, cards)
                    checked += bool(want)
    assert checked > 20
    # every returned row is its group's only entry, and a group spans several rows
    got = ix.top_k(["w1", "w2"], "any", 2000, per_group=True)
    groups = [ix.group_of(key) for key, _ in got]
    assert len(groups) == len(set(groups)) and len(got) < len(ix.top_k(["w1", "w2"], "any", 2000))
    copy = BM25Index.from_bytes(ix.to_bytes())  # groups survive the snapshot
    assert copy.top_k(["w1", "w2"], "any", 50, per_group=True) == ix.top_k(["w1", "w2"], "any", 50, per_group=True)


def test_per_group_stays_right_after_writes_and_with_large_groups() -> None:
    """A group that gains a second row after a query (or loses all but one) is still
    reported once; groups of over a hundred rows, and groups whose rows fill the first k."""
    rng = random.Random(23)
    rows = [BM25Row(key, {f"w{rng.randrange(6)}": float(rng.randrange(1, 4)), "all": 1.0}, rng.choice((3, 5)),
                    group=key if key < 300 else 1000 + key % 3) for key in range(700)]  # 3 groups of ~130 rows
    ix = BM25Index()
    ix.add(rows)

    def check() -> None:
        for terms in (["w1"], ["w2", "w3"], ["all"]):
            for k in (1, 3, 10, 100, 1000):
                want = _best_groups_by_brute_force(ix, rows, terms, "any", k, False)
                assert ix.top_k(terms, "any", k, per_group=True) == want, (terms, k)

    check()
    extra = [BM25Row(2000 + i, {"w1": 9.0, "all": 1.0}, 3, group=i) for i in range(0, 40, 2)]  # single rows gain one
    ix.add(extra)
    rows += extra
    check()
    gone = {r.key for r in rows if r.key >= 300 and r.key % 5 != 0} | {r.key for r in extra[:5]}
    ix.remove(gone)
    rows = [r for r in rows if r.key not in gone]
    check()


def test_per_group_reads_past_the_first_k_rows() -> None:
    """Group 1 has ten rows better than group 2's only row: 2 groups still come back."""
    ix = BM25Index()
    ix.add([BM25Row(i, {"t": 3.0}, 3, group=1) for i in range(10)] + [BM25Row(50, {"t": 1.0}, 3, group=2)])
    assert [k for k, _ in ix.top_k(["t"], "any", 2)] == [0, 1]
    assert [k for k, _ in ix.top_k(["t"], "any", 2, per_group=True)] == [0, 50]
    assert ix.group_of(50) == 2 and ix.group_of(999) is None


def test_an_older_image_is_refused_not_misread() -> None:
    ix = BM25Index()
    ix.add([BM25Row(1, {"t": 1.0}, 1)])
    image = bytearray(ix.to_bytes())
    image[:4] = b"MBM2"  # the layout before rows carried a group
    with pytest.raises(ValueError):
        BM25Index.from_bytes(bytes(image))


def test_postings_past_65536_rows_keep_their_row_numbers() -> None:
    """Postings are held as uint16 when every row number fits; one row more and they must stay
    wide, or the last rows' postings would wrap onto the first ones."""
    n = 65_600
    rows = [BM25Row(i, {"common": 1.0, f"w{i % 7}": 1.0}, 2, pieces={"小明": 1.0}, pieces_length=1)
            for i in range(n)]
    rows[-1] = BM25Row(n - 1, {"rare": 2.0}, 2, pieces={"積電": 1.0}, pieces_length=1)
    ix = BM25Index()
    ix.add(rows)
    assert [k for k, _ in ix.top_k(["rare"], "any", 5)] == [n - 1]
    assert [k for k, _ in ix.top_k([], "any", 5, pieces=["積電"])] == [n - 1]
    small = BM25Index()
    small.add(rows[:100] + [rows[-1]])
    assert [k for k, _ in small.top_k(["rare"], "any", 5)] == [n - 1]
    assert [k for k, _ in small.top_k([], "any", 5, pieces=["積電"])] == [n - 1]
    # the narrow form, half the memory, wherever the row numbers fit
    assert small._words.prow.dtype == small._pieces.prow.dtype == np.uint16
    assert ix._words.prow.dtype != np.uint16
