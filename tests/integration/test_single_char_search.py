"""A one-character Chinese query finds every note whose words hold it (燉 → 燉煮, 鴨 → 烤鴨,
王 → 王小明), in both scripts and in all three match modes, through the engine's search; the
character as a word of its own, or in a title, ranks above it inside a longer word."""

from __future__ import annotations

import pytest

from memories_tui.text import segment

NOTES = {
    "stew": ("紅燒肉食譜", "五花肉切塊，先煎後加醬油，小火燉煮一個半小時。"),
    "duck": ("北京烤鸭", "烤鸭要片成薄片，配葱丝和甜面酱吃。"),
    "name": ("同學錄", "王小明今天沒有來上課。"),
    "tea": ("泡茶筆記", "烏龍茶用九十度的熱水沖泡三分鐘。"),
    "run": ("Marathon", "Week 12 of marathon training. Long run: 28 km."),
}


@pytest.fixture
def notes(engine) -> dict[str, str]:
    vid = engine.test_vault_id
    return {name: engine.add_record(vid, kind="card", title=t, body=b).id for name, (t, b) in NOTES.items()}


def found(engine, query: str, match_mode: str) -> list[str]:
    hits = engine.search(engine.test_vault_id, query, mode="bm25", match_mode=match_mode, limit=10).results
    return [h.record_id for h in hits]


def test_the_characters_are_inside_longer_words_here() -> None:
    """Guard: Jieba keeps each character inside a longer word of its note, so only matching
    the character within words finds these notes (the words alone found none of them)."""
    assert "炖" not in segment.index_tokens(NOTES["stew"][1])
    assert "鸭" not in segment.index_tokens(NOTES["duck"][1])
    assert "王" not in segment.index_tokens(NOTES["name"][1])


@pytest.mark.parametrize("match_mode", ["any", "all", "phrase"])
@pytest.mark.parametrize(("query", "note"), [
    ("燉", "stew"), ("炖", "stew"),  # Traditional note; the query in either script
    ("鴨", "duck"), ("鸭", "duck"),  # Simplified note; the query in either script
    ("王", "name"),
])
def test_one_character_finds_the_word_holding_it(engine, notes, match_mode: str, query: str, note: str) -> None:
    assert found(engine, query, match_mode) == [notes[note]]


def test_any_and_all_agree_on_a_character_beside_other_words(engine, notes) -> None:
    """A one-character word in a longer query is met inside a word by ``all`` too."""
    assert found(engine, "燉 五花肉", "all") == [notes["stew"]]
    assert found(engine, "燉 五花肉", "any")[:1] == [notes["stew"]]


def test_the_character_as_its_own_word_or_in_a_title_ranks_higher(engine, notes) -> None:
    vid = engine.test_vault_id
    alone = engine.add_record(vid, kind="card", title="河邊", body="河邊有一隻鴨，還有兩隻鵝。").id
    titled = engine.add_record(vid, kind="card", title="鴨", body="今天去河邊散步。").id
    assert "鸭" in segment.index_tokens("河邊有一隻鴨，還有兩隻鵝。")
    for mode in ("any", "all"):
        got = found(engine, "鴨", mode)
        assert set(got[:2]) == {alone, titled} and got[2:] == [notes["duck"]], mode


def test_a_character_inside_a_longer_query_run_is_met_by_all_as_by_any(engine, notes) -> None:
    """竹 of 廠區竹 is cut off by Jieba and held by the query piece 區竹, which 新竹廠區 does not
    hold: ``all`` still meets it inside 新竹 (as ``any`` does), after notes that meet every
    word as a word or through the query's own pieces."""
    vid = engine.test_vault_id
    fab = engine.add_record(vid, kind="card", title="新竹廠區", body="新竹廠區的機台今天停機維修。").id
    assert "竹" not in segment.index_tokens("新竹廠區的機台今天停機維修。")
    assert found(engine, "廠區竹", "all") == [fab]
    assert found(engine, "厂区竹", "all") == [fab]  # the other script
    assert found(engine, "廠區竹", "any")[:1] == [fab]
    diary = engine.add_record(vid, kind="card", title="日記", body=DIARY).id
    assert {"厂区", "竹"} <= set(segment.index_tokens(DIARY))
    for query in ("廠區竹", "厂区竹"):
        # the diary holds every query word as a word: it ranks first in all, although the
        # factory note, with 廠區 in its title, scores higher (and ranks first in any)
        assert found(engine, query, "all") == [diary, fab], query
        assert found(engine, query, "any")[:2] == [fab, diary], query


DIARY = ("今天走過廠區，路邊有一根竹 倒在地上。後來我們去河邊散步，看見很多人在釣魚，也有人在放風箏，"
         "天氣很好，大家都很開心。")


@pytest.mark.parametrize("match_mode", ["any", "all", "phrase"])
def test_one_character_is_the_lexical_side_of_hybrid(tmp_path, cheap_kdf, srv, match_mode: str) -> None:
    """Hybrid search fuses the BM25 list that meets the character inside a word with a real
    vector list (embeddings over loopback; not the BM25 fallback): the note leads with a BM25
    score of its own, in either script."""
    from memories_tui.engine import NewRecord
    from tests.helpers.vaults import open_vault

    srv.embed_dims = 32
    config = (f'[rag.embedding]\nprotocol = "compatible"\nurl = "{srv.compat_embed_url}"\nmodel = "bag"\n'
              'dimensions = 32\n')
    eng, vid = open_vault(tmp_path / "home", config)
    try:
        ids = dict(zip(NOTES, (r.id for r in eng.add_records(vid, [NewRecord("card", t, b) for t, b in NOTES.values()])),
                       strict=True))
        eng.build_vector_index(vid)
        for query, note in (("燉", "stew"), ("炖", "stew"), ("鴨", "duck"), ("鸭", "duck"), ("王", "name")):
            got = eng.search(vid, query, mode="hybrid", match_mode=match_mode)
            assert got.fallback is None and got.results[0].record_id == ids[note], (query, match_mode)
            assert got.results[0].scores["bm25"] is not None and got.results[0].scores["vector"] is not None
            if match_mode != "any":
                assert [h.record_id for h in got.results] == [ids[note]], (query, match_mode)
    finally:
        eng.close()


def test_a_character_repeated_inside_words_ranks_higher(engine, notes) -> None:
    """Both notes hold 鴨 only inside longer words, of equal length: the one holding it three
    times ranks first, in both scripts and in ``any`` and ``all``."""
    vid = engine.test_vault_id
    once = engine.add_record(vid, kind="card", title="晚餐", body="今天晚上吃了北京烤鴨和白飯配青菜。").id
    thrice = engine.add_record(vid, kind="card", title="晚餐", body="今天晚上吃了烤鴨、鴨血和鴨舌配白飯。").id
    assert not {"鸭"} & set(segment.index_tokens("今天晚上吃了烤鴨、鴨血和鴨舌配白飯。"))
    for query in ("鴨", "鸭"):
        for mode in ("any", "all"):
            got = found(engine, query, mode)
            assert got.index(thrice) < got.index(once), (query, mode)
