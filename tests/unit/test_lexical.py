from __future__ import annotations

import threading

import pytest

from memories_tui.errors import LimitError, UsageError
from memories_tui.index.lexical import LexicalDoc, LexicalHit, LexicalIndex

DOCS = [
    LexicalDoc(1, "清华大学", "我来到北京清华大学读书。校园很美。", "tag:学校", True),
    LexicalDoc(2, "Notes", "中华人民共和国成立于1949年。", "", False),
    LexicalDoc(3, "繁體筆記", "我來到北京清華大學，學習軟體開發。", "", False),
    LexicalDoc(4, "Running", "Running fast is fun. The cats sat on the mat.", "sport", True),
    LexicalDoc(5, "Mixed", "我用Python编程，也写 machine learning 的代码。", "tag:python", False),
    LexicalDoc(6, "Order", "fun is fast running", "", False),
    LexicalDoc(7, "Weights", "nothing here", "python", False),
]


@pytest.fixture()
def index() -> LexicalIndex:
    ix = LexicalIndex()
    ix.add(DOCS)
    return ix


def keys(hits: list[LexicalHit]) -> list[int]:
    return [h.key for h in hits]


def test_len_add_replace_remove(index: LexicalIndex) -> None:
    assert len(index) == 7
    index.add([LexicalDoc(2, "Notes", "completely different text", "", False)])
    assert len(index) == 7
    assert index.search("中华人民共和国") == [] or 2 not in keys(index.search("中华人民共和国"))
    assert keys(index.search("completely")) == [2]
    index.remove([2, 99])
    assert len(index) == 6
    assert index.search("completely") == []
    index.add([])
    index.remove([])
    assert len(index) == 6


def test_any_mode_chinese_english_mixed(index: LexicalIndex) -> None:
    assert set(keys(index.search("清华"))) == {1, 3}
    assert set(keys(index.search("running"))) >= {4, 6}
    assert set(keys(index.search("run"))) >= {4, 6}  # stemming
    assert 5 in keys(index.search("Python 编程"))
    assert 5 in keys(index.search("MACHINE"))
    hits = index.search("清华 running")
    assert {1, 3, 4} <= set(keys(hits))
    assert all(h.score > 0 for h in hits)
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_all_mode(index: LexicalIndex) -> None:
    assert set(keys(index.search("北京 清华", "all"))) == {1, 3}
    assert keys(index.search("北京 python", "all")) == []
    assert keys(index.search("python 代码", "all")) == [5]
    assert set(keys(index.search("fun running", "all"))) == {4, 6}
    assert index.matching_keys("北京 清华", "all") == {1, 3}


def test_phrase_mode(index: LexicalIndex) -> None:
    # Contiguous Chinese substrings match whatever Jieba made of them.
    assert keys(index.search("民共和", "phrase")) == [2]
    assert set(keys(index.search("华大", "phrase"))) == {1, 3}
    # Word order matters for English phrases.
    assert keys(index.search("running fast", "phrase")) == [4]
    assert keys(index.search("fast running", "phrase")) == [6]
    assert set(keys(index.search("running fast", "any"))) == {4, 6}
    # Mixed script, spacing and case differences are ignored.
    assert keys(index.search("python编程", "phrase")) == [5]
    assert keys(index.search("Python 编程", "phrase")) == [5]
    assert keys(index.search("编程 python", "phrase")) == []
    assert index.matching_keys("running fast", "phrase") == {4}
    assert index.matching_keys("running fast", "any") is None


def test_traditional_simplified_cross_matching(index: LexicalIndex) -> None:
    assert set(keys(index.search("學習"))) == {3}
    assert set(keys(index.search("学习"))) == {3}
    assert set(keys(index.search("清華大學", "all"))) == {1, 3}
    assert set(keys(index.search("软体开发", "phrase"))) == {3}
    assert set(keys(index.search("中華人民共和國", "phrase"))) == {2}
    assert 3 in keys(index.search("笔记"))  # title written in Traditional


def test_title_weight_beats_body(index: LexicalIndex) -> None:
    index.add([LexicalDoc(10, "zebra", "other words", "", False), LexicalDoc(11, "other", "zebra words", "", False)])
    assert keys(index.search("zebra"))[:2] == [10, 11]


def test_meta_is_searchable_and_cards_only(index: LexicalIndex) -> None:
    assert set(keys(index.search("python"))) == {5, 7}
    assert set(keys(index.search("学校"))) == {1}
    assert set(keys(index.search("清华", cards_only=True))) == {1}
    assert keys(index.search("python", cards_only=True)) == []


# query → expected keys per match mode, worked out by hand from DOCS: every query is read as
# plain words (folded, stemmed in any/all; exact word sequence in phrase), never as FTS5
# syntax. "run*" would match "running" as a prefix query; as plain text it is the word "run",
# which only the stemmed modes match.
RUN = {4, 6}
NONE: dict[str, set[int]] = {"any": set(), "all": set(), "phrase": set()}
INJECTIONS: dict[str, dict[str, set[int]]] = {
    "NEAR(": NONE,
    "NEAR(a b": NONE,
    '"': NONE,
    '""': NONE,
    '"unbalanced': NONE,
    "*": NONE,
    "run*": {"any": RUN, "all": RUN, "phrase": set()},
    "AND": NONE,
    "OR": NONE,
    "NOT": NONE,
    "a AND": NONE,
    "OR b": NONE,
    "NOT running": {"any": RUN, "all": RUN, "phrase": set()},
    "-x": NONE,
    "-running": {"any": RUN, "all": RUN, "phrase": RUN},
    "body:": NONE,
    "body:running": {"any": RUN, "all": set(), "phrase": set()},
    "terms:running": {"any": RUN, "all": set(), "phrase": set()},
    "terms : (running)": {"any": RUN, "all": set(), "phrase": set()},
    "title:清华": {"any": {1, 3}, "all": set(), "phrase": set()},
    "{title body}: x": NONE,
    "^running": {"any": RUN, "all": RUN, "phrase": RUN},
    "(": NONE,
    ")": NONE,
    "(running": {"any": RUN, "all": RUN, "phrase": RUN},
    "running)": {"any": RUN, "all": RUN, "phrase": RUN},
    "fast + running": {"any": RUN, "all": RUN, "phrase": {6}},
    'col:"x" NEAR("a" "b", 3)': NONE,
    "\x00": NONE,
    "'; DROP TABLE lex; --": NONE,
    "\ue000": NONE,
}


@pytest.mark.parametrize("query", list(INJECTIONS))
@pytest.mark.parametrize("mode", ["any", "all", "phrase"])
def test_injection_strings_are_plain_text(index: LexicalIndex, query: str, mode: str) -> None:
    expected = INJECTIONS[query][mode]
    assert set(keys(index.search(query, mode, limit=100))) == expected
    strict = index.matching_keys(query, mode)
    assert strict is None if mode == "any" else strict == expected
    assert len(index) == 7  # nothing was dropped or added


def test_operator_words_are_matched_as_words(index: LexicalIndex) -> None:
    index.add([LexicalDoc(20, "", "salt and pepper or not", "", False)])
    assert keys(index.search("AND", "any")) == [20]
    assert keys(index.search("NOT", "all")) == [20]
    assert keys(index.search("or not", "phrase")) == [20]
    # "-running" and "body:running" search the words, not a column or exclusion.
    assert set(keys(index.search("-running"))) == {4, 6}
    assert 4 in keys(index.search("body:running"))
    # "not" is a stopword here (dropped beside other terms), never an exclusion operator.
    assert set(keys(index.search("NOT running", "all"))) == {4, 6}
    assert set(keys(index.search("running NOT", "any"))) == {4, 6}
    assert keys(index.search("pepper NOT salt", "all")) == [20]


def test_limits(index: LexicalIndex) -> None:
    assert len(index.search("清华", limit=100)) == 2
    with pytest.raises(LimitError) as err:
        index.search("清华", limit=101)
    assert "100 results" in err.value.message
    with pytest.raises(LimitError) as err:
        index.search("x" * 1025)
    assert "1,024 query bytes" in err.value.message
    with pytest.raises(LimitError) as err:
        index.search(" ".join(f"t{i}" for i in range(65)), "all")
    assert "64 query terms" in err.value.message
    with pytest.raises(LimitError):
        index.matching_keys(" ".join(f"t{i}" for i in range(65)), "any")
    with pytest.raises(LimitError):
        index.search("字" * 400, "phrase")
    assert index.search("清华", limit=0) == []
    with pytest.raises(UsageError):
        index.search("清华", limit=-1)


def test_limit_caps_results() -> None:
    ix = LexicalIndex()
    ix.add(LexicalDoc(i, "", f"common word number {i}", "", False) for i in range(150))
    assert len(ix.search("common", limit=100)) == 100
    assert len(ix.search("common", limit=5)) == 5


def test_invalid_mode(index: LexicalIndex) -> None:
    with pytest.raises(UsageError):
        index.search("清华", "fuzzy")
    with pytest.raises(UsageError):
        index.matching_keys("清华", "ANY")


def test_zero_usable_terms_is_empty(index: LexicalIndex) -> None:
    for mode in ("any", "all", "phrase"):
        assert index.search("", mode) == []
        assert index.search("！？。，", mode) == []
    assert index.matching_keys("", "all") == set()


def test_stopwords_dropped_only_when_other_terms_remain(index: LexicalIndex) -> None:
    index.add([LexicalDoc(30, "", "the", "", False)])
    assert keys(index.search("the cats", "all")) == [4]  # "the" dropped beside "cats"
    assert set(keys(index.search("the"))) == {4, 30}


def _round_trip(index: LexicalIndex) -> LexicalIndex:
    main, phrase = index.serialize_parts()
    return LexicalIndex.deserialize_parts(main, lambda: phrase, lambda keys: [])


def test_serialize_round_trip(index: LexicalIndex) -> None:
    copy = _round_trip(index)
    assert len(copy) == len(index)
    # expected keys by hand from DOCS, then the same ranking and scores as the original
    for q, mode, want in [("清华", "any", {1, 3}), ("北京 清华", "all", {1, 3}), ("running fast", "phrase", {4}),
                          ("學習", "any", {3}), ("python", "any", {5, 7})]:
        assert set(keys(copy.search(q, mode))) == want
        assert copy.search(q, mode) == index.search(q, mode)
    copy.add([LexicalDoc(40, "", "brand new", "", True)])
    assert keys(copy.search("brand")) == [40]
    assert index.search("brand") == []
    copy.remove([1])
    assert 1 not in keys(copy.search("清华"))




def test_thread_safe_concurrent_use() -> None:
    ix = LexicalIndex()
    errors: list[BaseException] = []

    def writer(base: int) -> None:
        try:
            for i in range(50):
                ix.add([LexicalDoc(base + i, "t", f"并发 测试 word{i}", "", False)])
        except BaseException as e:  # pragma: no cover
            errors.append(e)

    def reader() -> None:
        try:
            for _ in range(50):
                ix.search("并发 测试", "all", limit=10)
        except BaseException as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k * 1000,)) for k in range(3)]
    threads += [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(ix) == 150


def test_deleted_text_leaves_no_trace_in_the_serialized_index() -> None:
    """The serialized index goes into the vault as blobs: freed pages must be zeroed
    (secure_delete), or a deleted note's words would survive in every later snapshot."""
    ix = LexicalIndex()
    ix.add(LexicalDoc(i, f"title {i}", f"filler words number {i} " * 30, "", False) for i in range(200))
    ix.add([LexicalDoc(1000, "secret", "qzxcanaryword " * 50, "qzxcanarymeta", False)])
    assert b"qzxcanaryword" in b"".join(ix.serialize_parts())  # the probe is visible while the note exists
    ix.remove([1000])
    data = b"".join(ix.serialize_parts())
    assert b"qzxcanaryword" not in data and b"qzxcanarymeta" not in data
    assert keys(_round_trip(ix).search("qzxcanaryword")) == []


def test_per_group_gives_each_record_once_in_every_mode() -> None:
    """Three chunks of record 100 outrank record 200's one chunk; with per_group a search
    for two results gives both records, each by its best chunk."""
    ix = LexicalIndex()
    ix.add([LexicalDoc(1, "", "tide tide tide pools", "", False, group=100),
            LexicalDoc(2, "", "tide tide pools", "", False, group=100),
            LexicalDoc(3, "", "tide pools again", "", True, group=100),
            LexicalDoc(4, "", "the tide pools of a long shore with many other words in it", "", True, group=200)])
    for mode in ("any", "all", "phrase"):
        plain = keys(ix.search("tide pools", mode, limit=2))
        assert len(plain) == 2 and set(plain) <= {1, 2, 3}, mode
        assert keys(ix.search("tide pools", mode, limit=2, per_group=True)) == [plain[0], 4], mode
        assert keys(ix.search("tide pools", mode, limit=5, cards_only=True, per_group=True)) == [3, 4], mode
