from __future__ import annotations

import threading

import pytest

from memories_tui.errors import LimitError
from memories_tui.text import segment
from memories_tui.text.segment import (
    MATCH_MODES,
    MAX_QUERY_BYTES,
    MAX_QUERY_TERMS,
    MAX_RESULTS,
    fold,
    index_tokens,
    phrase_tokens,
    query_terms,
    warm_up,
)


def test_constants() -> None:
    assert (MAX_QUERY_BYTES, MAX_QUERY_TERMS, MAX_RESULTS) == (1024, 64, 100)
    assert MATCH_MODES == ("any", "all", "phrase")


@pytest.mark.parametrize(
    "trad, simp",
    [
        ("中華人民共和國", "中华人民共和国"),
        ("軟體開發", "软体开发"),
        ("學習機器", "学习机器"),
        ("臺灣", "台湾"),
        ("裡面", "里面"),
    ],
)
def test_fold_traditional_to_simplified(trad: str, simp: str) -> None:
    assert fold(trad) == fold(simp)
    assert fold(simp) == simp


def test_fold_is_length_preserving() -> None:
    samples = ["ＡＢＣ　ｄｅｆ", "İstanbul ẞ Straße", "Hello WORLD", "中華民國🙂e\u0301", "乾隆皇帝 乾燥", ""]
    for s in samples:
        assert len(fold(s)) == len(s)
    assert fold("ＡＢＣ　Ｄｅｆ") == "abc def"
    assert fold("Hello WORLD") == "hello world"


def test_index_tokens_search_mode_and_folding() -> None:
    toks = index_tokens("我來到北京清華大學")
    assert {"清华", "大学", "清华大学", "北京"} <= set(toks)  # words and their parts
    assert index_tokens("Running CATS, running!") == ["run", "cat", "run"]
    assert "python" in index_tokens("Python编程")
    assert "编程" in index_tokens("Python编程")
    assert index_tokens("！？。，、 ... --- ") == []
    assert index_tokens("") == []
    # Diacritics: precomposed and decomposed forms agree.
    assert index_tokens("café") == index_tokens("cafe\u0301") == ["cafe"]


def test_phrase_tokens_are_per_character_for_cjk() -> None:
    assert phrase_tokens("人民共和国 Hello, World-Wide") == ["人", "民", "共", "和", "国", "hello", "world", "wide"]
    assert phrase_tokens("人民共和國") == phrase_tokens("人民共和国")


def test_query_terms_distinct_and_folded() -> None:
    assert query_terms("Cats cats CATS") == ["cat"]
    assert query_terms("") == []
    assert query_terms("  !!! ") == []
    assert "清华" in query_terms("清華")


def test_query_byte_limit() -> None:
    ok = "a" * 1024
    query_terms(ok)
    with pytest.raises(LimitError) as err:
        query_terms("字" * 434)  # 1,302 bytes
    assert "1,302 bytes" in err.value.message
    assert "1,024 query bytes" in err.value.message


def test_query_term_limit() -> None:
    query_terms(" ".join(f"w{i}" for i in range(64)))
    with pytest.raises(LimitError) as err:
        query_terms(" ".join(f"w{i}" for i in range(65)))
    assert "64 query terms" in err.value.message
    # Repeated terms count once.
    query_terms(" ".join(["same"] * 200))


def test_search_terms_drop_stopwords_only_when_others_remain() -> None:
    assert segment.search_terms("the effect of the drug") == ["effect", "drug"]
    assert segment.search_terms("the of") == ["the", "of"]
    assert segment.search_terms("北京的天气") == ["北京", "天气"]


def test_warm_up_thread_safe() -> None:
    errors: list[BaseException] = []

    def work() -> None:
        try:
            warm_up()
            assert index_tokens("中文分词") != []
        except BaseException as e:  # pragma: no cover - surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert segment.backend() in ("rjieba", "jieba")


def test_jieba_fallback_backend_gives_similar_tokens() -> None:  # jieba is a core dependency
    current = segment.backend()
    text = "我来到北京清华大学，研究自然语言处理。"
    try:
        segment.set_backend("jieba")
        via_jieba = index_tokens(text)
    finally:
        segment.set_backend(current)
    assert set(via_jieba) >= {"北京", "清华大学", "自然语言", "处理"}
    with pytest.raises(ValueError):
        segment.set_backend("nope")


def test_index_and_phrase_tokens_matches_separate_calls() -> None:
    for text in ["", "我來到北京 Running e-mail 3.5 café", "ＡＢＣ 中華人民共和國成立了。"]:
        assert segment.index_and_phrase_tokens(text) == (index_tokens(text), phrase_tokens(text))


def test_index_and_phrase_tokens_known_values() -> None:
    """Written by hand: index tokens are folded to Simplified, cut in Jieba search mode (the long
    word and its parts), English stemmed and accent-folded; phrase tokens are one per CJK
    character and whole, unstemmed Latin words; full-width letters become ASCII."""
    assert segment.index_and_phrase_tokens("我來到北京 Running e-mail 3.5 café") == (
        ["我", "来到", "北京", "run", "e", "mail", "3", "5", "cafe"],
        ["我", "来", "到", "北", "京", "running", "e", "mail", "3", "5", "café"])
    assert segment.index_and_phrase_tokens("ＡＢＣ 中華人民共和國成立了。") == (
        ["abc", "中华", "华人", "人民", "共和", "共和国", "中华人民共和国", "成立", "了"],
        ["abc", "中", "华", "人", "民", "共", "和", "国", "成", "立", "了"])
