"""Batch shapes chosen with bench/bench_gemma.py: length windows and the thread default."""

from __future__ import annotations

import os

from memories_tui.config import default_local_threads, parse_config
from memories_tui.index.embedding import length_windows


def _item(key: int, title: str, text: str) -> tuple[int, str, str, str]:
    return (key, title, text, f"h{key}")


def test_length_windows_sorts_inside_each_window_and_keeps_window_order() -> None:
    items = [_item(0, "a", "x" * 50), _item(1, "b", "x" * 5), _item(2, "c", "x" * 20),
             _item(3, "d", "x" * 1), _item(4, "e", "x" * 90)]
    out = length_windows(items, window=3)
    assert [k for k, *_ in out] == [1, 2, 0, 3, 4]  # window [0,1,2] sorted, then window [3,4]
    assert sorted(out) == sorted(items)  # nothing lost or changed


def test_length_windows_measures_utf8_so_chinese_counts_like_its_tokens() -> None:
    # 100 Chinese characters are 300 UTF-8 bytes: they sort after 150 ASCII characters.
    zh, en = _item(0, "", "記" * 100), _item(1, "", "word " * 30)
    assert [k for k, *_ in length_windows([zh, en])] == [1, 0]


def test_local_threads_default_is_half_the_cpus_between_1_and_4(tmp_path, monkeypatch) -> None:
    for cpus, want in ((None, 1), (1, 1), (2, 1), (4, 2), (8, 4), (64, 4)):
        monkeypatch.setattr(os, "cpu_count", lambda cpus=cpus: cpus)
        assert default_local_threads() == want
        cfg = parse_config({}, tmp_path / "config.toml", tmp_path)
        assert cfg.rag.local_threads == want
    assert parse_config({"rag": {"local_threads": 3}}, tmp_path / "c.toml", tmp_path).rag.local_threads == 3


class _RecordingEmbedder:
    """Deterministic vectors; remembers the texts of every embed_documents call, in order."""

    dims = 4
    space_key = "test:4"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed_documents(self, items, batch_size=16, cancel=None):
        import numpy as np

        from memories_tui.models.local_onnx import EmbedResult

        self.calls.append([text for _title, text in items])
        vectors = np.ones((len(items), self.dims), dtype=np.float32) / 2
        return EmbedResult(vectors, [False] * len(items), sum(len(t) for _t, t in items))


class _DictStore:
    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def embedding_names(self, space_key, chunk_hashes):
        return [f"{space_key}:{h}" for h in chunk_hashes]

    def get_cache_blobs(self, names):
        return {n: self.blobs[n] for n in names if n in self.blobs}

    def put_cache_blobs(self, items):
        self.blobs.update(items)


def test_ensure_vectors_embeds_the_highest_priority_records_first() -> None:
    from memories_tui.config import Limits
    from memories_tui.index.cache import VaultIndex
    from memories_tui.index.embedding import BATCH_CHUNKS, ensure_vectors
    from memories_tui.vault.records import Record

    records = [Record(id=f"r{i}", revision=1, kind="memory", title=f"t{i}", body=f"note number {i:03d} " * 3)
               for i in range(3 * BATCH_CHUNKS)]
    index = VaultIndex("v", Limits())
    index.sync(records)
    newest = {"r7": 3.0, "r40": 2.0}  # e.g. just written, just read
    embedder = _RecordingEmbedder()
    report = ensure_vectors(index, embedder, _DictStore(), priority=lambda rid: newest.get(rid, 0.0))
    assert report.embedded == len(records)
    first_batch = embedder.calls[0]
    assert "note number 007 " * 3 in first_batch and "note number 040 " * 3 in first_batch
    # equal lengths, so only the priority moves them; without one the vault order stands
    index2 = VaultIndex("v", Limits())
    index2.sync(records)
    plain = _RecordingEmbedder()
    ensure_vectors(index2, plain, _DictStore())
    assert "note number 040 " * 3 not in plain.calls[0]
