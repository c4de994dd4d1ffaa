"""What the clear-text names of cached vectors give away: nothing about the chunks they belong to.

A vault file stores each cached vector under a readable name (its row key). Two vaults that hold
the same note, embedded by the same service, must not share a single such name: a name anyone
could compute from a chunk's text or hash would be the same in both, and would let whoever has
the file test whether it holds a given text.
"""

from __future__ import annotations

import hashlib
import sqlite3

from memories_tui.engine import Engine, NewRecord
from tests.helpers.model_server import ModelServer
from tests.helpers.vaults import PASS

NOTES = [("Safe", "The spare key is under the blue flower pot."), ("Trip", "Kyoto in April: book the ryokan early.")]


def _vector_names(path) -> set[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {name for (name,) in conn.execute("SELECT name FROM blobs WHERE name LIKE 'emb:%'")}
    finally:
        conn.close()


def test_the_same_chunk_has_unrelated_vector_names_in_two_vaults(tmp_path, cheap_kdf):
    with ModelServer() as srv:
        home = tmp_path / "home"
        home.mkdir()
        (home / "config.toml").write_text(f'[rag.embedding]\nprotocol = "compatible"\nurl = "{srv.compat_embed_url}"\n'
                                          'model = "bag"\ndimensions = 8\n', encoding="utf-8")
        eng = Engine.open(home)
        vaults = []
        for name in ("first", "second"):
            vid = eng.create_vault(name, PASS).vault_id
            eng.unlock(vid, PASS)
            eng.add_records(vid, [NewRecord("memory", title, body) for title, body in NOTES])
            assert eng.build_vector_index(vid).embedded == len(NOTES)
            vaults.append(vid)
        hits = eng.search(vaults[0], "key ryokan", limit=10).results
        eng.close()
    first, second = (_vector_names(home / "vaults" / f"{vid}.mvault") for vid in vaults)
    assert len(first) == len(second) == len(NOTES)
    assert not first & second
    known = {h.chunk_hash for h in hits} | {hashlib.sha256(h.text.encode()).hexdigest() for h in hits}
    assert len(known) >= 2
    for name in first | second:
        assert not any(k[:16] in name for k in known)
