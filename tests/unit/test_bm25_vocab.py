"""The pieces field's vocabulary keeps two-character terms as int64 codes (a fraction of
what Python strings in a dict cost); it must number, find and store terms exactly as the
words' dict does, and refuse a damaged snapshot instead of misreading it."""

from __future__ import annotations

import numpy as np
import pytest

from memories_tui.index.bm25_vocab import PairVocabulary, WordVocabulary

PIECES = ["王小", "小明", "积电", "台积", "小明", "𠀋𠀍", "ab", "王小"]  # repeats; an astral CJK pair


@pytest.mark.parametrize("kind", [WordVocabulary, PairVocabulary])
def test_numbers_terms_like_a_dict_and_round_trips(kind) -> None:
    vocab = kind()
    ids = vocab.ids(PIECES).tolist()
    assert len(vocab) == len(set(PIECES)) == len(set(ids))
    assert [ids[PIECES.index(t)] for t in PIECES] == ids  # one number per distinct term
    more = vocab.ids(["新竹", "小明"]).tolist()
    assert more[1] == ids[1] and more[0] == len(vocab) - 1  # new terms come after the known ones
    assert vocab.lookup(["小明", "竹廠", "王", "王小明", "新竹"]) == [ids[1], None, None, None, more[0]]
    every = np.arange(len(vocab))
    assert sorted(vocab.joined(every).decode().split("\x00")) == sorted(set(PIECES) | {"新竹"})
    copy = kind.from_joined(vocab.joined(every), len(vocab))
    assert copy.lookup(PIECES + ["新竹"]) == vocab.lookup(PIECES + ["新竹"])
    assert sorted(copy) == sorted(vocab)
    subset = np.array([ids[2], more[0]])
    assert kind.from_joined(vocab.joined(subset), 2).lookup(["积电", "新竹", "小明"]) == [0, 1, None]


def test_pair_vocabulary_refuses_damaged_snapshots() -> None:
    good = PairVocabulary()
    good.ids(["王小", "小明", "积电"])
    blob = good.joined(np.arange(3))
    assert PairVocabulary.from_joined(blob, 3).lookup(["积电"]) == good.lookup(["积电"])
    for bad, n in ((blob, 2), (blob, 4), (blob.replace(b"\x00", b"x", 1), 3),
                   ("王小\x00小明\x00积".encode(), 3), ("王\x00\x00小明\x00积电".encode(), 3), (b"", 1), (b"ab", 0)):
        with pytest.raises(ValueError):
            PairVocabulary.from_joined(bad, n)
    with pytest.raises(ValueError):
        good.ids(["王小明"])  # only pieces of two characters are held
    assert PairVocabulary().lookup(["王小"]) == [None] and len(PairVocabulary.from_joined(b"", 0)) == 0


def test_pair_vocabulary_holds_far_less_than_strings() -> None:
    rng = np.random.default_rng(3)
    pieces = ["".join(map(chr, p)) for p in rng.integers(0x4E00, 0x9FA5, (20_000, 2)).tolist()]
    words, pairs = WordVocabulary(), PairVocabulary()
    words.ids(pieces)
    assert pairs.ids(pieces).tolist() == pairs.lookup(pieces) and len(words) == len(pairs)
    assert pairs.nbytes() * 4 < words.nbytes()
