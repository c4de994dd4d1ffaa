"""The language tools segmentation needs, each loaded once per process and lazily: the
OpenCC converters, the Jieba segmenter (``rjieba`` when importable, else ``jieba``) and the
Snowball English stemmer (one per thread).

Kept apart from segment.py because loading and choosing the tools is its own job (a lock,
process-wide state, a backend benchmarks and tests can force), while segment.py only uses them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

# OpenCC configurations applied in order by ``fold``.
OPENCC_CHAIN = ("hk2s", "tw2s")

_lock = threading.Lock()
_cut_for_search: Callable[[str], list[str]] | None = None
_backend_name: str | None = None
_converters: list | None = None


def load_converters() -> list:
    """The OpenCC converters ``fold`` applies, in OPENCC_CHAIN's order."""
    global _converters
    if _converters is None:
        with _lock:
            if _converters is None:
                import opencc

                _converters = [opencc.OpenCC(name) for name in OPENCC_CHAIN]
    return _converters


def _load_backend(name: str) -> Callable[[str], list[str]]:
    if name == "rjieba":
        import rjieba

        rjieba.cut_for_search("预热")
        return rjieba.cut_for_search
    if name == "jieba":
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        return jieba.lcut_for_search
    raise ValueError(f"unknown segmentation backend {name!r}")


def load_segmenter() -> Callable[[str], list[str]]:
    """Jieba's search-mode cut: rjieba when importable, else jieba."""
    global _cut_for_search, _backend_name
    if _cut_for_search is None:
        with _lock:
            if _cut_for_search is None:
                try:
                    cut, name = _load_backend("rjieba"), "rjieba"
                except ImportError:
                    cut, name = _load_backend("jieba"), "jieba"
                _backend_name = name
                _cut_for_search = cut
    return _cut_for_search


def set_backend(name: str) -> None:
    """Force the segmentation backend ("rjieba" or "jieba"; benchmarks and tests). An index
    must be queried with the backend it was built with."""
    global _cut_for_search, _backend_name
    with _lock:
        cut = _load_backend(name)
        _cut_for_search, _backend_name = cut, name


def backend() -> str:
    """Name of the segmentation backend in use ("rjieba" or "jieba")."""
    load_segmenter()
    assert _backend_name is not None
    return _backend_name


def warm_up() -> None:
    """Load the segmenter dictionary, OpenCC tables and the stemmer (call off the UI thread)."""
    load_segmenter()
    load_converters()
    stem_words(["warm"])


_stemmer_local = threading.local()


def stem_words(words: list[str]) -> list[str]:
    stemmer = getattr(_stemmer_local, "stemmer", None)
    if stemmer is None:  # PyStemmer objects are not thread-safe: one per thread
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
        _stemmer_local.stemmer = stemmer
    return stemmer.stemWords(words)
