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
