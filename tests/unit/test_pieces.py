"""Chinese partial-word search: a query that is a piece of a longer word (小明 → 王小明), or
spans two words (竹廠 → 新竹廠區), matches through the index's CJK pieces field; whole words
still rank first, highlights fall on the piece's own characters, both scripts fold together."""

from __future__ import annotations

import dataclasses

import pytest

from memories_tui.errors import LimitError
from memories_tui.index.lexical import LexicalDoc, LexicalIndex
from memories_tui.retrieval.highlight import match_spans
from memories_tui.retrieval.results import SearchHit
from memories_tui.text import segment
from memories_tui.text.query import parse_query, word_needs

DOCS = {
    1: "老師說王小明今天沒有來上課。",  # 王小明: one Jieba word, 小明 only a piece of it
    2: "台積電在新竹科學園區設廠。",  # 台積電: Jieba cuts 台积 / 电, so 积电 is no word anywhere
    3: "夏天最好吃的是冰淇淋和西瓜。",  # 冰淇淋, a 3-character word
    4: "他們參觀了新竹廠區的生產線。",  # 新竹 / 厂区: 竹厂 spans the two words
    5: "我們學習積體電路設計。",  # 积体电路, a 4-character word: 体电 is a piece of it
    6: "我在用Python編程語言寫程式。",  # Latin and CJK in one stretch, no space
    7: "The river carries sand to the sea.",
}


def words(text: str) -> list[str]:
    return segment.index_tokens(text)


@pytest.fixture(scope="module")
def index() -> LexicalIndex:
    ix = LexicalIndex()
    ix.add(LexicalDoc(k, "", text, "", False) for k, text in DOCS.items())
    return ix


def keys(ix: LexicalIndex, query: str, mode: str = "any") -> list[int]:
    return [h.key for h in ix.search(query, mode, limit=10)]


def test_the_pieces_are_not_words_of_these_texts() -> None:
    """Guard for the tests below: Jieba does not give these pieces as words, so only the
    pieces field can find them (before it, every one of these queries found nothing)."""
    assert "小明" not in words(DOCS[1]) and "王小明" in words(DOCS[1])
    assert "积电" not in words(DOCS[2])
    assert "淇淋" not in words(DOCS[3]) and "冰淇" not in words(DOCS[3])
    assert "竹厂" not in words(DOCS[4]) and {"新竹", "厂区"} <= set(words(DOCS[4]))
    assert "体电" not in words(DOCS[5])
    assert "程语" not in words(DOCS[6])


@pytest.mark.parametrize(("query", "key"), [
    ("小明", 1),  # 2-character piece of a 3-character word
    ("淇淋", 3), ("冰淇", 3),  # both ends of 冰淇淋
    ("體電", 5), ("体电", 5),  # a piece from inside a 4-character word, either script
    ("竹廠", 4),  # a piece across a word boundary (新竹|廠區)
    ("程語", 6),  # inside 編程語言 right after the Latin word Python
])
def test_a_piece_finds_the_word_it_is_part_of(index: LexicalIndex, query: str, key: int) -> None:
    assert keys(index, query)[:1] == [key]
    assert key in keys(index, query, "all")


def test_traditional_piece_against_simplified_text_and_back() -> None:
    ix = LexicalIndex()
    ix.add([LexicalDoc(1, "", "台积电的新竹厂区", "", False), LexicalDoc(2, "", "台積電的新竹廠區", "", False)])
    for query in ("積電", "积电", "竹廠", "竹厂"):
        assert sorted(keys(ix, query)) == [1, 2], query


def test_a_whole_word_ranks_above_the_same_piece_inside_a_longer_word() -> None:
    """Same length, same frequency: 小明 as a word beats 小明 inside 王小明."""
    ix = LexicalIndex()
    ix.add([LexicalDoc(1, "", "王小明去学校了", "", False), LexicalDoc(2, "", "小明去学校了啊", "", False)])
    assert "小明" in words("小明去学校了啊") and "小明" not in words("王小明去学校了")
    hits = ix.search("小明", limit=10)
    assert [h.key for h in hits] == [2, 1] and hits[0].score > hits[1].score


def test_phrase_keeps_its_exact_sequence(index: LexicalIndex) -> None:
    assert keys(index, "小明", "phrase") == [1]  # consecutive characters inside 王小明
    assert keys(index, "王小明今天", "phrase") == [1]
    assert keys(index, "小明王", "phrase") == []  # the pieces are there, not in this order
    assert keys(index, "小明王", "any")[:1] == [1]  # ...which any accepts
    assert keys(index, "竹科", "phrase") == [2]


def test_all_needs_every_word_met_as_a_word_or_by_its_pieces(index: LexicalIndex) -> None:
    assert keys(index, "小明 上課", "all") == [1]
    assert keys(index, "小明 西瓜", "all") == []  # 小明 in doc 1, 西瓜 in doc 3: never together
    assert keys(index, "冰淇 西瓜", "all") == [3]
    assert index.matching_keys("淇淋 西瓜", "all") == {3}
    assert index.matching_keys("小明 西瓜", "all") == set()
    # a Latin word is met only as itself
    assert keys(index, "python 程語", "all") == [6] and keys(index, "java 程語", "all") == []


def test_english_ranking_is_untouched_by_pieces(index: LexicalIndex) -> None:
    query = parse_query("river sand", limit=10)
    assert query.pieces == ()
    plain = dataclasses.replace(query, pieces=())
    assert index.search(query, limit=10) == index.search(plain, limit=10)


def test_word_needs() -> None:
    assert word_needs(["小明"], ["小明"]) == [("小明", ("小明",), (), False, False)]
    # a character inside a longer run: first through the query's piece, then (second tier) anywhere
    assert word_needs(["淇", "淋"], ["淇淋"]) == [("淇", (), ("淇淋",), False, True), ("淋", (), ("淇淋",), False, True)]
    # a character standing alone in the query is met by the characters field, wherever it stands
    assert word_needs(["炖", "五花肉"], ["五花", "花肉"], ["炖"]) == [
        ("炖", (), (), True, False), ("五花肉", ("五花", "花肉"), (), False, False)]
    assert word_needs(["积体电路"], ["积体", "体电", "电路"]) == [("积体电路", ("积体", "体电", "电路"), (), False, False)]
    assert word_needs(["积体电路"], ["积体"]) == [("积体电路", (), (), False, False)]  # its pieces were cut by the limit
    assert word_needs(["python", "程语"], ["程语"]) == [("python", (), (), False, False), ("程语", ("程语",), (), False, False)]


def test_a_character_stands_alone_unless_a_query_piece_holds_it() -> None:
    assert parse_query("燉").chars == ("炖",)
    assert parse_query("鴨 煮").chars == ("鸭", "煮")
    assert parse_query("积电").chars == ()  # met through the piece 积电, as before
    assert parse_query("燉", match_mode="phrase").chars == ()


def test_query_limits_hold_after_the_pieces_are_added() -> None:
    words63 = " ".join(f"w{i}" for i in range(63))
    q = parse_query(words63 + " 小明")  # 64 words already: no room for pieces, and no error
    assert len(q.terms) == segment.MAX_QUERY_TERMS and q.pieces == ()
    q = parse_query(words63[:-4] + " 小明")  # one word fewer: room for its one piece
    assert len(q.terms) == 63 and q.pieces == ("小明",)
    with pytest.raises(LimitError):
        parse_query(" ".join(f"w{i}" for i in range(65)))
    long = "台积电今天宣布在新竹科学园区扩建晶圆厂预计明年完工投产届时将新增数千个工作机会地方政府表示欢迎并承诺提供水电等基础设施支持"
    q = parse_query(long)  # ~30 words and ~60 pieces: the pieces fill the room the words leave
    assert len(q.terms) < 40 and len(q.terms) + len(q.pieces) == segment.MAX_QUERY_TERMS
    ix = LexicalIndex()
    ix.add([LexicalDoc(1, "", long[:20], "", False)])
    assert [h.key for h in ix.search(q)] == [1]
    assert [h.key for h in ix.search(long)] == [1]  # an unparsed query is limited the same way
    with pytest.raises(LimitError):
        parse_query("王" * 342)  # 1,026 bytes: the byte limit is checked before anything


@pytest.mark.parametrize("text", [
    "王小明", "台積電 and TSMC", "ア・イ ウ゛エ小明", "的 是 什么", "python編程語言", "ｆｕｌｌ　ｗｉｄｔｈ 小明",
    " ".join(f"w{i}" for i in range(63)) + " 小明", " ".join(f"w{i}" for i in range(62)) + " 小明", "river sand",
    "台积电今天宣布在新竹科学园区扩建晶圆厂预计明年完工投产届时将新增数千个工作机会地方政府表示欢迎",
])
def test_terms_and_pieces_in_one_pass_equal_the_two_calls(text: str) -> None:
    folded = segment.fold(text)
    terms = segment.search_terms(text, folded)
    want = (terms, segment.query_pieces(folded, segment.MAX_QUERY_TERMS - len(terms)))
    assert segment.search_terms_and_pieces(text, folded) == want


def test_highlights_fall_on_the_piece_at_the_right_bytes() -> None:
    text = "他们参观了台積電新竹廠區。"
    for query, piece in (("積電", "積電"), ("积电", "積電"), ("竹廠", "竹廠")):
        marks = parse_query(query).highlight_terms
        (span,) = match_spans(text, marks)
        assert text[span[0]:span[1]] == piece
        start = len(text[:span[0]].encode("utf-8"))
        end = start + len(piece.encode("utf-8"))
        assert text.encode("utf-8")[start:end].decode("utf-8") == piece
    hit = SearchHit("S1", "r", 1, "h", 0, len(text.encode()), 1.0, "", text, "memory",
                    terms=parse_query("小明 竹廠").highlight_terms)
    assert [text[a:b] for a, b in hit.spans] == ["竹廠"]
    mixed = "我在用Python編程語言寫程式"
    (span,) = match_spans(mixed, parse_query("程語").highlight_terms)
    assert mixed[span[0]:span[1]] == "程語" and len(mixed[:span[0]].encode()) == 18


def test_pieces_survive_the_snapshot(index: LexicalIndex) -> None:
    main, phrase = index.serialize_parts()
    copy = LexicalIndex.deserialize_parts(main, lambda: phrase, lambda keys: [])
    for query in ("小明", "竹廠", "程語", "river"):
        assert copy.search(query, limit=10) == index.search(query, limit=10)
    assert copy.matching_keys("小明 上課", "all") == {1}


def test_search_hits_mark_the_piece_inside_the_word_at_its_bytes() -> None:
    """Through the index and ``retrieval.search``: the hit carries the query's pieces, and its
    spans, turned into UTF-8 offsets of the record body, cut out exactly the piece."""
    from memories_tui.config import Limits
    from memories_tui.index.cache import VaultIndex
    from memories_tui.retrieval.search import search
    from memories_tui.vault.records import Record

    body = "Notes 📝: 我們參觀了台積電的新竹廠區。"
    ix = VaultIndex("v", Limits())
    ix.sync([Record(id="r1", revision=1, kind="memory", title="參訪", body=body)])
    for query, piece in (("积电", "積電"), ("竹廠", "竹廠"), ("台積電", "台積電")):
        (hit,) = search(ix, parse_query(query)).results
        (start, end), = hit.spans
        assert hit.text[start:end] == piece
        first = hit.byte_start + len(hit.text[:start].encode("utf-8"))
        last = hit.byte_start + len(hit.text[:end].encode("utf-8"))
        assert body.encode("utf-8")[first:last].decode("utf-8") == piece
