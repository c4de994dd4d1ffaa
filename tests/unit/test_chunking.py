from __future__ import annotations

import hashlib
import random
import unicodedata

import pytest

from memories_tui.text.chunking import Chunk, chunk_text


def _check_offsets(body: str, chunks: list[Chunk], max_chars: int = 768) -> None:
    raw = body.encode("utf-8")
    for i, c in enumerate(chunks):
        assert c.index == i
        assert body[c.char_start : c.char_end] == c.text
        assert raw[c.byte_start : c.byte_end].decode("utf-8") == c.text
        assert c.byte_start == len(body[: c.char_start].encode("utf-8"))
        assert c.chunk_hash == hashlib.sha256(c.text.encode("utf-8")).hexdigest()
        assert 0 < len(c.text) <= max_chars
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert a.char_start < b.char_start
        assert b.char_start <= a.char_end  # contiguous or overlapping: nothing but whitespace skipped
        assert not body[a.char_end : b.char_start].strip()


def _covers(body: str, chunks: list[Chunk]) -> None:
    covered = [False] * len(body)
    for c in chunks:
        for i in range(c.char_start, c.char_end):
            covered[i] = True
    missing = "".join(ch for ch, ok in zip(body, covered, strict=True) if not ok)
    assert not missing.strip()


def test_empty_and_blank() -> None:
    assert chunk_text("") == []
    assert chunk_text("  \n\n\t ") == []


def test_short_body_is_one_chunk() -> None:
    chunks = chunk_text("Hello, 世界! 🙂")
    assert len(chunks) == 1
    c = chunks[0]
    assert c.text == "Hello, 世界! 🙂"
    assert (c.char_start, c.char_end, c.byte_start) == (0, 12, 0)
    assert c.byte_end == len("Hello, 世界! 🙂".encode())


def _mixed_body(n_sentences: int, seed: int = 1) -> str:
    rnd = random.Random(seed)
    parts = []
    pieces = [
        "北京是中华人民共和国的首都。",
        "The quick brown fox jumps over the lazy dog. ",
        "我们今天去看了🙂表情符号！",
        "Café crème, naïve résumé? ",
        "e\u0301le\u0300ve combining marks; ",
        "line one\r\nline two\r\n",
        "家庭𠮷野家；",
        "👨‍👩‍👧 family ZWJ sequence. ",
        "\n\n",
    ]
    for _ in range(n_sentences):
        parts.append(rnd.choice(pieces))
    return "".join(parts)


@pytest.mark.parametrize("seed", range(8))
def test_offsets_with_cjk_emoji_marks_crlf(seed: int) -> None:
    body = _mixed_body(400, seed)
    chunks = chunk_text(body)
    assert len(chunks) > 3
    _check_offsets(body, chunks)
    _covers(body, chunks)


def test_never_splits_crlf_or_combining_or_zwj() -> None:
    # Worst case: no boundaries but the unsplittable pairs themselves.
    for unit in ("\r\n", "e\u0301", "a\u0301\u0302", "👨\u200d👩", "👍🏽", "❤\ufe0f"):
        body = unit * 1000
        chunks = chunk_text(body)
        _check_offsets(body, chunks)
        for c in chunks:
            if c.char_end < len(body):
                cut = c.char_end
                assert not (body[cut - 1] == "\r" and body[cut] == "\n")
                assert unicodedata.combining(body[cut]) == 0
                assert body[cut - 1] != "\u200d"
                assert body[cut] not in "\ufe0f" and not (0x1F3FB <= ord(body[cut]) <= 0x1F3FF)


def test_prefers_paragraph_then_sentence_boundaries() -> None:
    para = "这是一个句子。" * 60  # 420 chars
    body = para + "\n\n" + para + "\n\n" + para
    chunks = chunk_text(body)
    assert chunks[0].text.endswith("\n\n")
    assert chunks[0].char_end == len(para) + 2

    english = ("This is a sentence about retrieval. " * 40).strip()
    chunks = chunk_text(english)
    for c in chunks[:-1]:
        assert c.text.rstrip().endswith(".")


def test_chinese_sentence_boundary_without_spaces() -> None:
    body = "甲" * 500 + "。" + "乙" * 500
    chunks = chunk_text(body)
    assert chunks[0].text == "甲" * 500 + "。"


def test_hard_cut_and_whitespace_fallback() -> None:
    body = "x" * 2000
    chunks = chunk_text(body)
    _check_offsets(body, chunks)
    assert len(chunks[0].text) == 768
    words = " ".join(["word"] * 500)
    chunks = chunk_text(words)
    _check_offsets(words, chunks)
    for c in chunks:
        assert c.text.startswith("word")
        assert c.text.endswith("word")


def test_overlap_is_about_128() -> None:
    body = " ".join(f"w{i}" for i in range(3000))
    chunks = chunk_text(body)
    for a, b in zip(chunks, chunks[1:], strict=False):
        overlap = a.char_end - b.char_start
        assert 64 <= overlap <= 192
    chunks = chunk_text(body, overlap=0)
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert b.char_start >= a.char_end


def test_hash_stable_when_end_changes() -> None:
    body = _mixed_body(600, seed=3)
    before = chunk_text(body)
    edited = body[:-50] + "一个新的结尾。 A brand new ending with more words. " * 20
    after = chunk_text(edited)
    edit_at = len(body) - 50
    unchanged = [c for c in before if c.char_end + 770 < edit_at]
    assert len(unchanged) >= 3
    for c in unchanged:
        assert after[c.index] == c


def test_hash_stable_for_unchanged_prefix_of_other_docs() -> None:
    a = chunk_text("共同的开头。" * 300)
    b = chunk_text("共同的开头。" * 300 + "不同的结尾。" * 100)
    assert a[0].chunk_hash == b[0].chunk_hash


def test_custom_sizes_and_bad_arguments() -> None:
    body = "alpha beta gamma. " * 100
    chunks = chunk_text(body, max_chars=100, overlap=20)
    _check_offsets(body, chunks, max_chars=100)
    with pytest.raises(ValueError):
        chunk_text(body, max_chars=100, overlap=80)
    with pytest.raises(ValueError):
        chunk_text(body, max_chars=4)
