"""The snapshot's phrase part (FTS5 image) is loaded only when needed, and rebuilt from the
vault's records when it is missing or belongs to another build."""

from __future__ import annotations

import sqlite3

from memories_tui.engine import Engine
from memories_tui.index import lexical
from memories_tui.index.cache import PHRASE_BLOB
from memories_tui.index.lexical import LexicalDoc, LexicalIndex

DOCS = [
    LexicalDoc(1, "清華大學", "我來到北京清華大學讀書。", "tag:学校", True),
    LexicalDoc(2, "Notes", "machine learning with python, fast", "python", False),
    LexicalDoc(3, "More", "learning machine", "", True),
]
QUERIES = [("清华大学", "phrase"), ("machine learning", "phrase"), ("python", "phrase"), ("machine", "any")]


def _answers(ix: LexicalIndex) -> list[list[tuple[int, float]]]:
    out = [[(h.key, round(h.score, 9)) for h in ix.search(q, m)] for q, m in QUERIES]
    out.append([(h.key, round(h.score, 9)) for h in ix.search("learning", "phrase", cards_only=True)])
    return out


def test_parts_round_trip_lazily_and_rebuild_when_the_phrase_part_is_unusable() -> None:
    ix = LexicalIndex()
    ix.add(DOCS)
    main, phrase = ix.serialize_parts()
    calls: list[str] = []

    def loader(data: bytes | None):
        def load() -> bytes | None:
            calls.append("load")
            return data
        return load

    def rebuild(keys: set[int]) -> list[LexicalDoc]:
        calls.append("rebuild")
        return [d for d in DOCS if d.key in keys]

    copy = LexicalIndex.deserialize_parts(main, loader(phrase), rebuild)
    assert [h.key for h in copy.search("machine", "any")] == [h.key for h in ix.search("machine", "any")]
    assert calls == []  # BM25 queries do not touch the phrase part
    assert _answers(copy) == _answers(ix)
    assert calls == ["load"]
    _, other_build = ix.serialize_parts()  # same content, another build id
    for unusable in (None, other_build, phrase[:40]):
        calls.clear()
        copy = LexicalIndex.deserialize_parts(main, loader(unusable), rebuild)
        assert _answers(copy) == _answers(ix)
        assert calls == ["load", "rebuild"]
    # writes load the phrase part first, so it never misses rows
    copy = LexicalIndex.deserialize_parts(main, loader(phrase), rebuild)
    copy.add([LexicalDoc(9, "", "machine learning again", "", False)])
    assert {h.key for h in copy.search("machine learning", "phrase")} == {2, 9}


def test_engine_rebuilds_a_deleted_phrase_blob_from_the_records(tmp_path, cheap_kdf, monkeypatch):
    home = tmp_path / "home"
    eng = Engine.open(home)
    vid = eng.create_vault("v", "pw").vault_id
    eng.unlock(vid, "pw")
    eng.add_record(vid, kind="memory", title="港口", body="老船長在燈塔旁邊講故事。", tags=["航海"])
    eng.add_record(vid, kind="memory", title="Harbour", body="The old captain tells stories by the lighthouse.")
    want = {q: [(h.record_id, h.score) for h in eng.search(vid, q, match_mode="phrase").results]
            for q in ("燈塔旁邊", "old captain", "航海")}
    assert all(want.values())
    eng.close()

    loads: list[int] = []
    real = lexical.LexicalIndex._ensure_phrase

    def counting(self):
        if self._phrase_loader is not None:
            loads.append(1)
        return real(self)

    monkeypatch.setattr(lexical.LexicalIndex, "_ensure_phrase", counting)
    eng = Engine.open(home)
    eng.unlock(vid, "pw")
    assert eng.search(vid, "captain").results  # BM25 after unlock: phrase part not loaded
    assert loads == []
    assert {q: [(h.record_id, h.score) for h in eng.search(vid, q, match_mode="phrase").results]
            for q in want} == want
    assert loads == [1]
    eng.close()

    path = home / "vaults" / f"{vid}.mvault"
    conn = sqlite3.connect(path)
    assert conn.execute("DELETE FROM blobs WHERE name = ?", (PHRASE_BLOB,)).rowcount == 1
    conn.commit()
    conn.close()
    eng = Engine.open(home)
    eng.unlock(vid, "pw")
    assert {q: [(h.record_id, h.score) for h in eng.search(vid, q, match_mode="phrase").results]
            for q in want} == want
    eng.close()  # the rebuilt part is saved again
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM blobs WHERE name = ?", (PHRASE_BLOB,)).fetchone()[0] == 1
    conn.close()


def test_phrase_rows_of_a_build_wait_for_the_first_phrase_query() -> None:
    ix = LexicalIndex()
    ix.add(DOCS)

    def phrase_rows() -> int:
        return ix._conn.execute("SELECT COUNT(*) FROM phr").fetchone()[0]

    assert phrase_rows() == 0
    assert {h.key for h in ix.search("machine", "any")} == {2, 3}  # BM25 does not need them
    assert phrase_rows() == 0
    assert [h.key for h in ix.search("machine learning", "phrase")] == [2]
    assert phrase_rows() == 3
    ix.add([LexicalDoc(2, "Notes", "replaced text", "", False)])  # replacing flushes, then deletes
    assert ix.search("machine learning", "phrase") == []
    assert [h.key for h in ix.search("replaced text", "phrase")] == [2]


def test_an_index_snapshot_of_an_older_format_is_rebuilt_not_read(tmp_path, cheap_kdf, monkeypatch):
    """A vault saved by an older version (another snapshot format, or BM25 rows without
    groups) unlocks, searches and saves the current format: never a crash, never a misread."""
    from memories_tui.index import bm25, cache

    home = tmp_path / "home"
    restored: list[bool] = []
    real_restore = cache.VaultIndex.restore.__func__  # type: ignore[attr-defined]

    def spying(cls, *args, **kwargs):
        got = real_restore(cls, *args, **kwargs)
        restored.append(got is not None)
        return got

    monkeypatch.setattr(cache.VaultIndex, "restore", classmethod(spying))
    for old in ({"SNAPSHOT_FORMAT": 3}, {"_MAGIC": b"MBM2"}):
        eng = Engine.open(home)
        vid = eng.create_vault(f"v{len(restored)}", "pw").vault_id
        eng.unlock(vid, "pw")
        eng.add_record(vid, kind="memory", title="港口", body="老船長在燈塔旁邊講故事。")
        eng.add_record(vid, kind="memory", title="Harbour", body="The old captain tells stories by the lighthouse.")
        with monkeypatch.context() as older:
            for name, value in old.items():
                older.setattr(cache if name == "SNAPSHOT_FORMAT" else bm25, name, value)
            assert eng.search(vid, "captain").results
            eng.close()  # the snapshot is written in the older layout
        restored.clear()
        eng = Engine.open(home)
        eng.unlock(vid, "pw")
        assert [h.title for h in eng.search(vid, "燈塔").results] == ["港口"]
        assert [h.title for h in eng.search(vid, "captain", match_mode="phrase").results] == ["Harbour"]
        assert restored == [False]  # refused, built again from the records
        eng.close()
        restored.clear()
        eng = Engine.open(home)
        eng.unlock(vid, "pw")
        assert [h.title for h in eng.search(vid, "captain").results] == ["Harbour"]
        assert restored == [True]  # the current format was saved and is read back
        eng.close()
