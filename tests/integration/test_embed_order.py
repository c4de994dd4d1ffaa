"""Background embedding order: newest and most recently read records first."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memories_tui.engine import Engine, NewRecord
from memories_tui.errors import CancelledError
from memories_tui.vault import store
from tests.helpers.onnx_models import build_gemma_shaped_model


@pytest.fixture
def gemma_engine(tmp_path: Path, cheap_kdf, gemma_tokenizer):
    model = tmp_path / "model"
    build_gemma_shaped_model(model)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'[rag]\nlocal_model_dir = "{model}"\nlocal_threads = 1\n')
    eng = Engine.open(home)
    vid = eng.create_vault("notes", "pw").vault_id
    eng.unlock(vid, "pw")
    yield eng, vid
    eng.close()


def _embedded_titles(eng: Engine, vid: str) -> set[str]:
    index = eng._context(vid).index()
    vectors = index.vectors
    assert vectors is not None
    return {c.title for key, c in index.chunks.items() if key in vectors}


def test_the_newest_and_the_just_read_records_are_embedded_first(gemma_engine, monkeypatch) -> None:
    eng, vid = gemma_engine
    stamps = iter(["2024-05-01T09:00:00Z", "2024-05-01T09:00:07Z"])  # the clock records are stamped with
    monkeypatch.setattr(store, "now_iso", lambda: next(stamps))
    old = eng.add_records(vid, [NewRecord("memory", f"old {i:02d}", f"an older note, number {i:02d}")
                                for i in range(40)])
    eng.add_record(vid, kind="memory", title="newest", body="written just now")
    eng.read_record(vid, old[10].id)  # opened in the reader: the user cares about it now
    stop = threading.Event()
    with pytest.raises(CancelledError):
        eng._context(vid).ensure_vectors(cancel=stop, progress=lambda _p: stop.set())  # stop after the first group
    first = _embedded_titles(eng, vid)
    assert 0 < len(first) <= 16  # one group
    # neither vault order (old 00…15 first) nor its reverse (newest, old 39…25) holds both
    assert {"newest", "old 10"} <= first
    # the rest follows on the next run; nothing is embedded twice
    report = eng._context(vid).ensure_vectors()
    assert report.embedded == 41 - len(first) and len(_embedded_titles(eng, vid)) == 41
