"""A pull updates the puller's search index incrementally: only the records the pull changed are
segmented again, what it deleted or replaced is no longer found, and nothing of the index
reaches the target (it holds one head and one bundle per push, whatever was indexed); the
embedding cache embeds only the chunks the pull brought."""

from __future__ import annotations

import pytest

from memories_tui.index import lexical
from memories_tui.sync import run, stream
from tests.helpers.sync import SYNC_PASS, first_device, joined_device


@pytest.mark.parametrize("streamed", [False, True])
def test_a_pull_re_segments_only_the_changed_records(tmp_path, cheap_kdf, monkeypatch, streamed):
    """`streamed`: b has nothing of its own to send, so its pull commits each bundle as it reads
    it (sync/stream.py; here at every bundle): the index follows those commits the same way."""
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
    commits: list[int] = []
    if streamed:
        real_commit = run._merge_and_commit
        monkeypatch.setattr(stream, "STREAM_BYTES", 1)
        monkeypatch.setattr(run, "_merge_and_commit",
                            lambda *args, **kwargs: commits.append(1) or real_commit(*args, **kwargs))
    b.sync()
    assert len(commits) == (2 if streamed else 0)  # the bundle as read, then the sync's own (nothing left)
    assert [h.title for h in b.engine.search(b.vault_id, "submarine").results] == ["t3"]
    assert len(b.engine.search(b.vault_id, "lighthouse", limit=100).results) == 19
    assert sum(added) == 2, added  # the edited record and the new one, not the vault
    objects = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert len(objects) == 5, objects  # the join record; a's two bundles and head; b's head: no index
    assert all(n == "key" or n.endswith("/head") or n.rsplit("/", 1)[-1].isdigit() for n in objects), objects
    a.close()
    b.close()


def test_after_a_pull_only_the_new_chunks_are_embedded(tmp_path, cheap_kdf):
    from tests.helpers.paths import require_minilm
    from tests.integration.test_semantic import MINILM, _config

    require_minilm()  # skips with a reason outside CI, fails in CI
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    ids = [a.add(title, body) for title, body in (
        ("Bread", "Knead the dough, let it rise overnight, then bake it in a hot oven."),
        ("Bikes", "To fix a flat tyre, remove the inner tube and patch the puncture."),
        ("Garden", "Tomatoes need full sun and regular watering."))]
    a.sync()
    _config(tmp_path / "b", MINILM, "sentence-transformers")
    b = joined_device(tmp_path / "b", str(folder))
    assert b.engine.build_vector_index(b.vault_id).embedded == 3
    a.edit(ids[2], "Cucumbers climb a trellis and want rich soil.")
    a.add("Tax", "The income tax declaration is due at the end of May.")
    a.sync()
    b.engine.lock()  # the in-memory vectors go: what b keeps is its encrypted embedding cache
    b.engine.unlock(b.vault_id, SYNC_PASS)
    b.sync()
    report = b.engine.build_vector_index(b.vault_id)
    assert (report.embedded, report.reused, report.missing) == (2, 2, 0), report  # only the new chunks embedded
    assert b.engine.search(b.vault_id, "cucumber trellis", mode="vector").results[0].title == "Garden"
    a.close()
    b.close()
