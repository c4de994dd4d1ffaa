"""BM25 column weights title/body/metadata = 5/1/2 (a title without CJK: 2/1/2), checked
against a reference.

The reference is SQLite's documented FTS5 bm25 written out in tests/helpers/bm25_reference.py.
The documents use plain English words that segment to themselves, so the token lists below are
written by hand; their titles are Latin, so any/all weigh them LATIN_TITLE_WEIGHT.
"""

from __future__ import annotations

import dataclasses

import pytest

from memories_tui.index.lexical import LexicalDoc, LexicalIndex
from memories_tui.index.weights import LATIN_TITLE_WEIGHT
from memories_tui.text.query import parse_query
from tests.helpers.bm25_reference import fts5_bm25, ranking

# key: (title, body, meta)
DOCS = {
    1: ("zebra", "pear plum kiwi fig lime", ""),       # query term in the title
    2: ("", "zebra zebra pear plum", ""),               # twice in the body
    3: ("", "pear plum kiwi", "zebra"),                 # in the metadata
    4: ("", "zebra pear plum kiwi fig lime", ""),       # once in a long body
    5: ("fig", "pear plum", ""),
    6: ("lime", "kiwi fig", ""),
    7: ("", "pear pear fig", "kiwi"),
    8: ("", "plum", ""),
    9: ("kiwi", "lime lime", ""),
}


def reference_scores(query: str, weights: tuple[float, float, float]) -> dict[int, float]:
    return fts5_bm25(DOCS, query.split(), weights)


@pytest.fixture(scope="module")
def index() -> LexicalIndex:
    ix = LexicalIndex()
    ix.add(LexicalDoc(k, t, b, m, False) for k, (t, b, m) in DOCS.items())
    return ix


def test_the_documents_tell_the_weightings_apart():
    """Guard for the test itself: 5/1/2, 1/1/1 and a zero metadata weight rank differently."""
    shipped = ranking(reference_scores("zebra", (5, 1, 2)))
    assert shipped == [1, 2, 3, 4]
    assert ranking(reference_scores("zebra", (1, 1, 1))) == [2, 3, 1, 4]
    assert ranking(reference_scores("zebra", (5, 1, 0))) == [1, 2, 4, 3]


LATIN = (LATIN_TITLE_WEIGHT, 1, 2)


def test_index_ranks_and_scores_like_the_2_1_2_reference_for_latin_titles(index):
    want = reference_scores("zebra", LATIN)
    hits = index.search("zebra", limit=10)
    assert [h.key for h in hits] == ranking(want)
    for hit in hits:
        assert hit.score == pytest.approx(want[hit.key], rel=1e-6), hit.key


def test_metadata_weight_counts(index):
    """A metadata-only match scores above a single body mention in a longer row."""
    scores = {h.key: h.score for h in index.search("zebra", limit=10)}
    assert scores[3] > scores[4] > 0
    assert scores[3] == pytest.approx(reference_scores("zebra", LATIN)[3], rel=1e-6)


def test_two_term_query_matches_reference(index):
    want = reference_scores("zebra kiwi", LATIN)
    hits = index.search("zebra kiwi", limit=20)
    assert {h.key for h in hits} == set(want)
    for hit in hits:
        assert hit.score == pytest.approx(want[hit.key], rel=1e-6), hit.key


def test_a_cjk_title_weighs_5_and_a_latin_one_2() -> None:
    """A title holding a CJK word scores like the 5/1/2 reference, a Latin one like 2/1/2, in
    one index (the words field alone: the CJK pieces and characters add to a Chinese query)."""
    rows = {1: ("斑马", "pear plum", ""), 2: ("zebra", "pear plum", ""), 3: ("", "kiwi fig", ""), 4: ("", "fig", "")}
    ix = LexicalIndex()
    ix.add(LexicalDoc(k, t, b, m, False) for k, (t, b, m) in rows.items())

    def score(query: str) -> dict[int, float]:
        words = dataclasses.replace(parse_query(query, limit=10), pieces=(), chars=())
        return {h.key: h.score for h in ix.search(words, limit=10)}

    assert score("斑馬") == pytest.approx(fts5_bm25(rows, ["斑马"], (5, 1, 2)), rel=1e-6)
    assert score("zebra") == pytest.approx(fts5_bm25(rows, ["zebra"], LATIN), rel=1e-6)
    assert score("斑馬")[1] > score("zebra")[2]


def test_phrase_queries_rank_with_the_5_1_2_weights(index):
    """Phrase queries are scored by FTS5 on the phrase table, a separate path that keeps 5/1/2
    for every title (that table has no distinct-terms column, so its row lengths are shorter)."""
    want = fts5_bm25(DOCS, ["zebra"], (5, 1, 2), distinct_column=False)
    assert ranking(fts5_bm25(DOCS, ["zebra"], (1, 1, 1), distinct_column=False)) != [1, 2, 3, 4]
    hits = index.search("zebra", "phrase", limit=10)
    assert [h.key for h in hits] == ranking(want) == [1, 2, 3, 4]
    for hit in hits:
        assert hit.score == pytest.approx(want[hit.key], rel=1e-6), hit.key


# Chinese rows for the pieces field (CJK two-character pieces beside the words); enough rows
# that the IDF of a piece held by one or two of them is well above zero.
CJK_DOCS = {1: ("", "王小明在新竹廠區上班", ""), 2: ("新竹", "風很大的城市", ""), 3: ("", "今天天氣很好", ""),
            4: ("", "蘋果和香蕉", ""), 5: ("", "咖啡要現磨", ""), 6: ("", "週末去爬山", ""),
            7: ("", "圖書館很安靜", ""), 8: ("", "晚餐吃麵", "")}


@pytest.mark.parametrize("query", ["新竹廠", "竹廠"])
def test_the_pieces_field_counts_half_a_word(query):
    """score = the words' BM25 (an index without pieces gives it) + 0.5 × the pieces' BM25.
    "竹廠" is no word of any row: it matches through its pieces alone, at half their score."""
    rows = [LexicalDoc(k, t, b, m, False) for k, (t, b, m) in CJK_DOCS.items()]
    with_pieces, words_only = LexicalIndex(), LexicalIndex(pieces=False)
    with_pieces.add(rows)
    words_only.add(rows)
    _terms, pieces, chars = with_pieces._terms(query)
    assert pieces and not chars  # every character is in a piece: the characters field stays out
    piece_scores = dict(with_pieces._bm25.top_k([], "any", 10, pieces=pieces, piece_weight=1.0))
    word_scores = {h.key: h.score for h in words_only.search(query, limit=10)}
    hits = with_pieces.search(query, limit=10)
    assert {h.key for h in hits} == set(piece_scores) | set(word_scores) == ({1, 2} if query == "新竹廠" else {1})
    for hit in hits:
        assert piece_scores[hit.key] > 0.1, hit.key  # the pieces weigh in: a wrong weight shows
        assert hit.score == pytest.approx(word_scores.get(hit.key, 0.0) + 0.5 * piece_scores[hit.key], rel=1e-6)
