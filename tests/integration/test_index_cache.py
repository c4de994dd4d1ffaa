"""The in-memory index cache: invalidation, limits, LRU, lock."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memories_tui.engine import Engine
from memories_tui.errors import LimitError
from tests.helpers.bm25_reference import fts5_bm25
from tests.helpers.vaults import CHILD_PRELUDE, PASS


def _titles(engine, vid, query, **kw):
    return [h.title for h in engine.search(vid, query, **kw).results]


def test_add_update_delete_are_seen_by_the_next_query(engine):
    vid = engine.test_vault_id
    rec = engine.add_record(vid, kind="memory", title="Fruit", body="apples and pears")
    assert _titles(engine, vid, "apples") == ["Fruit"]
    engine.update_record(vid, rec.id, body="bananas only")
    assert _titles(engine, vid, "apples") == []
    assert _titles(engine, vid, "bananas") == ["Fruit"]
    engine.delete_record(vid, rec.id)
    assert _titles(engine, vid, "bananas") == []


def test_ingest_is_seen(engine, tmp_path):
    vid = engine.test_vault_id
    engine.search(vid, "anything")
    note = tmp_path / "n.md"
    note.write_text("# 茶葉\n\n烏龍茶的香氣", encoding="utf-8")
    engine.ingest(vid, [note])
    assert _titles(engine, vid, "烏龍茶") == ["茶葉"]


def test_unchanged_vault_reuses_the_index_and_policy_change_drops_it(engine):
    vid = engine.test_vault_id
    engine.add_record(vid, kind="memory", title="t", body="words")
    first = engine._context(vid).index()
    assert engine._context(vid).index() is first  # reused between queries
    engine.set_device_only(vid, True)
    assert engine._context(vid).index() is not first
    assert _titles(engine, vid, "words") == ["t"]


WRITER = CHILD_PRELUDE + """
from memories_tui.engine import Engine
eng = Engine.open(sys.argv[1]); eng.unlock(sys.argv[2], "correct horse")
eng.add_record(sys.argv[2], kind="memory", title="From another process", body="zeppelin airship")
eng.close()
"""


def test_write_by_another_process_is_seen(engine):
    vid = engine.test_vault_id
    assert _titles(engine, vid, "zeppelin") == []
    subprocess.run([sys.executable, "-c", WRITER, str(engine.home), vid], check=True)
    assert _titles(engine, vid, "zeppelin") == ["From another process"]


def test_lru_keeps_at_most_two_vaults_and_lock_clears(tmp_path, cheap_kdf):
    eng = Engine.open(tmp_path / "home")
    ids = []
    for name in ("a", "b", "c"):
        vid = eng.create_vault(name, "pw").vault_id
        eng.unlock(vid, "pw")
        eng.add_record(vid, kind="memory", title=name, body=f"vault {name}")
        eng.search(vid, "vault")
        ids.append(vid)
    assert eng._state.indexes.cached() == ids[1:]  # `a` was least recently used
    assert _titles(eng, ids[0], "vault") == ["a"]  # rebuilt on demand
    assert eng._state.indexes.cached() == [ids[2], ids[0]]
    eng.lock()
    assert eng._state.indexes.cached() == [] and not any(eng.is_unlocked(v) for v in ids)
    eng.close()


def test_over_limit_is_a_clear_error_never_a_partial_index(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    home.mkdir()
    eng = Engine.open(home)
    vid = eng.create_vault("v", "pw").vault_id
    eng.unlock(vid, "pw")
    for i in range(3):
        eng.add_record(vid, kind="memory", title=f"r{i}", body="text")
    eng.close()  # a write over the limit is refused, so the limit is lowered afterwards
    (home / "config.toml").write_text("[rag.limits]\nchunks = 2\n")
    eng = Engine.open(home)
    eng.unlock(vid, "pw")
    with pytest.raises(LimitError, match="2 chunks"):
        eng.search(vid, "text")
    assert eng._state.indexes.peek(vid) is None
    eng.close()


def test_source_limit(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    home.mkdir()
    eng = Engine.open(home)
    vid = eng.create_vault("v", "pw").vault_id
    eng.unlock(vid, "pw")
    eng.add_record(vid, kind="memory", title="big", body="x " * 2000)
    eng.close()
    (home / "config.toml").write_text("[rag.limits]\nsource_mib = 0.001\n")
    eng = Engine.open(home)
    eng.unlock(vid, "pw")
    with pytest.raises(LimitError, match="source_mib"):
        eng.search(vid, "x")
    eng.close()


@pytest.mark.parametrize("mode", ["any", "all", "phrase"])
def test_excluded_kinds_never_indexed_or_returned(engine, mode):
    vid = engine.test_vault_id
    canary = "canary 金絲雀 secret"
    for kind in ("private", "credential"):
        engine.add_record(vid, kind=kind, title=canary, body=canary)
    engine.add_record(vid, kind="memory", title="ok", body="nothing here")
    assert engine.search(vid, canary, match_mode=mode).results == []
    assert engine.memory_search(vid, canary, match_mode=mode) == []
    index = engine._context(vid).index()
    assert all(c.kind in ("memory", "card") for c in index.chunks.values())
    assert all("canary" not in c.chunk.text for c in index.chunks.values())


def test_memory_search_groups_by_record(engine):
    vid = engine.test_vault_id
    long_body = "\n\n".join(f"Paragraph {i} mentions the lighthouse keeper." for i in range(80))
    engine.add_record(vid, kind="memory", title="Long", body=long_body)
    engine.add_record(vid, kind="memory", title="Short", body="a lighthouse")
    rows = [r.to_json() for r in engine.memory_search(vid, "lighthouse")]
    assert sorted(r["title"] for r in rows) == ["Long", "Short"]
    long_row = next(r for r in rows if r["title"] == "Long")
    assert len(long_row["chunks"]) > 1 and "lighthouse" in long_row["snippet"]
    assert {"id", "revision", "title", "score", "snippet", "chunks"} <= set(long_row)


def test_search_results_carry_offsets_and_citations(engine):
    vid = engine.test_vault_id
    body = "前言。\n\n咖啡豆 coffee beans 的烘焙。"
    rec = engine.add_record(vid, kind="memory", title="咖啡", body=body)
    hits = engine.search(vid, "coffee").results
    assert [h.citation for h in hits] == ["S1"]
    hit = hits[0]
    assert hit.record_id == rec.id and hit.revision == 1
    assert body.encode()[hit.byte_start:hit.byte_end].decode() == hit.text
    import hashlib

    assert hit.chunk_hash == hashlib.sha256(hit.text.encode()).hexdigest()


def test_encrypted_snapshot_restores_and_only_changed_records_are_resegmented(tmp_path, cheap_kdf, monkeypatch):
    from memories_tui.index import lexical

    home = tmp_path / "home"
    eng = Engine.open(home)
    vid = eng.create_vault("v", "pw").vault_id
    eng.unlock(vid, "pw")
    recs = [eng.add_record(vid, kind="memory", title=f"t{i}", body=f"lighthouse keeper {i}") for i in range(20)]
    assert len(eng.search(vid, "lighthouse", limit=100).results) == 20
    eng.close()  # saves the snapshot

    added: list[int] = []
    real_add = lexical.LexicalIndex.add

    def counting_add(self, docs):
        docs = list(docs)
        added.append(len(docs))
        return real_add(self, docs)

    monkeypatch.setattr(lexical.LexicalIndex, "add", counting_add)
    eng = Engine.open(home)
    eng.unlock(vid, "pw")
    assert len(eng.search(vid, "lighthouse", limit=100).results) == 20
    assert sum(added) == 0  # nothing re-segmented
    eng.update_record(vid, recs[3].id, body="submarine captain")
    eng.delete_record(vid, recs[4].id)
    assert [h.title for h in eng.search(vid, "submarine").results] == ["t3"]
    assert len(eng.search(vid, "lighthouse", limit=100).results) == 18
    assert sum(added) == 1  # only the updated record
    hit = eng.search(vid, "submarine").results[0]
    assert hit.text == "submarine captain" and hit.byte_end == len(b"submarine captain")
    eng.close()
    # a restored index answers like a fresh one
    eng = Engine.open(home)
    eng.unlock(vid, "pw")
    assert [h.title for h in eng.search(vid, "submarine").results] == ["t3"]
    eng.close()


def test_tampered_snapshot_is_dropped_reported_and_rebuilt(tmp_path, cheap_kdf):
    """A snapshot failing AEAD is never used; search rebuilds from records."""
    from tests.helpers.tamper import flip

    home = tmp_path / "home"
    eng = Engine.open(home)
    vid = eng.create_vault("v", "pw").vault_id
    eng.unlock(vid, "pw")
    eng.add_record(vid, kind="memory", title="t", body="words")
    eng.search(vid, "words")
    eng.close()
    path = home / "vaults" / f"{vid}.mvault"
    flip(path, "blobs", "ciphertext", "name='lexical-index'", offset=100)
    eng = Engine.open(home)
    eng.unlock(vid, "pw")
    assert _titles(eng, vid, "words") == ["t"]
    assert any("lexical-index" in note for note in eng.status(vid).cache_repairs)
    eng.close()


def test_bm25_keeps_bm25_order_and_scores(engine):
    vid = engine.test_vault_id
    rows = {1: ("alpha", "tea tea tea green", ""), 2: ("beta", "tea", ""),
            3: ("gamma", "coffee milk", ""), 4: ("delta", "water", ""), 5: ("omega", "juice apple", "")}
    for title, body, _ in rows.values():
        engine.add_record(vid, kind="memory", title=title, body=body)
    hits = engine.search(vid, "tea green").results
    assert [h.title for h in hits] == ["alpha", "beta"]
    # scores are FTS5 bm25 of the chunk (formula written out in tests/helpers/bm25_reference.py)
    want = fts5_bm25(rows, ["tea", "green"])
    assert [h.score for h in hits] == pytest.approx([want[1], want[2]], rel=1e-6)
    assert all(h.scores["rerank"] is None and h.scores["bm25"] == pytest.approx(h.score) for h in hits)


def test_snapshot_is_rewritten_after_a_delete(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    eng = Engine.open(home)
    vid = eng.create_vault("v", "pw").vault_id
    eng.unlock(vid, "pw")
    keep = eng.add_record(vid, kind="memory", title="keep", body="kept words")
    gone = eng.add_record(vid, kind="memory", title="gone", body="zeppelin words")
    eng.search(vid, "words")
    eng.close()
    eng = Engine.open(home)
    eng.unlock(vid, "pw")
    eng.delete_record(vid, gone.id)
    assert [h.record_id for h in eng.search(vid, "words").results] == [keep.id]
    eng.close()
    eng = Engine.open(home)
    eng.unlock(vid, "pw")
    for blob in ("lexical-index", "lexical-phrase"):
        data = eng._vault(vid).get_blob(blob)
        assert data and gone.id.encode() not in data and b"zeppelin" not in data
    eng.close()


def test_snapshot_holding_an_older_revision_answers_from_the_current_one(tmp_path, cheap_kdf):
    """The saved index holds revision 1 of a note that another process has since rewritten
    (shorter, other words). Restoring it never shows a chunk of revision 1: the reopened engine
    finds the note only by its new words, with byte ranges into the new body, for plain and
    phrase queries, and saves a snapshot without the old text."""
    from memories_tui.config import Limits
    from memories_tui.index.cache import SNAPSHOT_BLOB, VaultIndex
    from tests.helpers.cli import call_cli

    home = tmp_path / "home"
    eng = Engine.open(home)
    vid = eng.create_vault("v", PASS).vault_id
    eng.unlock(vid, PASS)
    note = eng.add_record(vid, kind="memory", title="Lamp",
                          body="The lighthouse keeper trims the lamp wick every evening at dusk. " * 30)
    other = eng.add_record(vid, kind="memory", title="Harbour", body="Ferries leave past the lighthouse at noon.")
    assert set(_titles(eng, vid, "wick")) == {"Lamp"}  # several chunks
    eng.close()  # saves the snapshot: revision 1 of the note
    new_body = "Submarine captain logs depth."
    edited = call_cli(home, "memory", "update", "v", note.id, "--text", new_body)
    assert edited.code == 0, edited.stderr

    eng = Engine.open(home)
    eng.unlock(vid, PASS)
    vault = eng._vault(vid)
    stale = VaultIndex.restore(vid, Limits(), vault.get_blob(SNAPSHOT_BLOB), {})
    assert stale is not None and stale.record_revisions()[note.id] == 1  # the snapshot is the old one
    assert _titles(eng, vid, "wick") == [] and _titles(eng, vid, "lighthouse") == ["Harbour"]
    assert _titles(eng, vid, "lighthouse keeper", match_mode="phrase") == []
    for query, mode in (("submarine depth", "any"), ("submarine captain", "phrase")):
        (hit,) = eng.search(vid, query, match_mode=mode).results
        assert (hit.record_id, hit.revision, hit.text) == (note.id, 2, new_body)
        assert new_body.encode()[hit.byte_start:hit.byte_end].decode() == hit.text
    assert {h.record_id for h in eng.search(vid, "lighthouse wick submarine", limit=50).results} == {note.id, other.id}
    eng.close()
    eng = Engine.open(home)
    eng.unlock(vid, PASS)
    vault = eng._vault(vid)
    for blob in ("lexical-index", "lexical-phrase"):
        data = vault.get_blob(blob)
        assert data and b"wick" not in data
    eng.close()
