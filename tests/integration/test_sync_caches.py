"""A pull updates the puller's search index incrementally: only the records the pull changed are
segmented again, what it deleted or replaced is no longer found, and nothing of the index
reaches the target (it holds one head and one bundle per push, whatever was indexed)."""

from __future__ import annotations

from memories_tui.index import lexical
from tests.helpers.sync import first_device, joined_device


def test_a_pull_re_segments_only_the_changed_records(tmp_path, cheap_kdf, monkeypatch):
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    ids = [a.add(f"t{i}", f"lighthouse keeper {i}") for i in range(20)]
    a.sync()
    b = joined_device(tmp_path / "b", str(folder))
    assert len(b.engine.search(b.vault_id, "lighthouse", limit=100).results) == 20  # b's index is built

    added: list[int] = []
    real_add = lexical.LexicalIndex.add

    def counting_add(self, docs):  # noqa: ANN001, ANN202 - the real add, counted
        docs = list(docs)
        added.append(len(docs))
        return real_add(self, docs)

    monkeypatch.setattr(lexical.LexicalIndex, "add", counting_add)
    a.edit(ids[3], "submarine captain")
    a.delete(ids[4])
    a.add("new", "lighthouse of the new note")
    a.sync()
    b.sync()
    assert [h.title for h in b.engine.search(b.vault_id, "submarine").results] == ["t3"]
    assert len(b.engine.search(b.vault_id, "lighthouse", limit=100).results) == 19
    assert sum(added) == 2, added  # the edited record and the new one, not the vault
    objects = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert len(objects) == 5, objects  # the join record; a's two bundles and head; b's head: no index
    assert all(n == "key" or n.endswith("/head") or n.rsplit("/", 1)[-1].isdigit() for n in objects), objects
    a.close()
    b.close()
