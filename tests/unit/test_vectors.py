from __future__ import annotations

import threading

import numpy as np
import pytest

from memories_tui.index.vectors import VectorMatrix


def _unit(rng: np.random.Generator, n: int, dims: int) -> np.ndarray:
    x = rng.standard_normal((n, dims)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _brute(keys, vecs, q, k, allowed=None):
    scores = vecs @ q
    pairs = [(int(key), float(s)) for key, s in zip(keys, scores, strict=True) if allowed is None or key in allowed]
    pairs.sort(key=lambda p: (-p[1], p[0]))
    return pairs[:k]


def test_top_k_matches_brute_force():
    rng = np.random.default_rng(0)
    vecs = _unit(rng, 500, 32)
    keys = list(range(1000, 1500))
    m = VectorMatrix(32)
    m.add(keys, vecs)
    q = _unit(rng, 1, 32)[0]
    got = m.top_k(q, 10)
    want = _brute(keys, vecs, q, 10)
    assert [k for k, _ in got] == [k for k, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], rtol=1e-5)
    assert all(a[1] >= b[1] for a, b in zip(got, got[1:], strict=False))
    assert len(m.top_k(q, 10_000)) == 500
    assert m.top_k(q, 0) == []


def test_allowed_filter_small_and_large():
    rng = np.random.default_rng(1)
    vecs = _unit(rng, 200, 16)
    keys = list(range(200))
    m = VectorMatrix(16)
    m.add(keys, vecs)
    q = _unit(rng, 1, 16)[0]
    for allowed in ({3, 7, 150, 9999}, set(range(0, 200, 2)), set()):
        got = m.top_k(q, 5, allowed=allowed)
        want = _brute(keys, vecs, q, 5, allowed)
        assert [k for k, _ in got] == [k for k, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-5)
        assert all(k in allowed for k, _ in got)


def test_add_replaces_and_remove_swaps():
    m = VectorMatrix(4)
    eye = np.eye(4, dtype=np.float32)
    m.add([10, 20, 30, 40], eye)
    assert len(m) == 4 and 20 in m
    m.add([20], eye[3:4])  # replace
    assert len(m) == 4
    np.testing.assert_array_equal(m.get(20), eye[3])
    assert m.remove([10, 99]) == 1
    assert len(m) == 3 and 10 not in m
    assert sorted(m.keys()) == [20, 30, 40]
    # Row moved by the swap-delete still maps to its own vector.
    np.testing.assert_array_equal(m.get(40), eye[3])
    np.testing.assert_array_equal(m.get(30), eye[2])
    top = m.top_k(eye[3], 3)
    assert [k for k, _ in top[:2]] == [20, 40]  # tie on 1.0, smaller key first
    assert top[0][1] == pytest.approx(1.0)
    assert m.get(10) is None


def test_growth_shrink_and_nbytes():
    rng = np.random.default_rng(2)
    m = VectorMatrix(768)
    assert m.nbytes == 0
    for start in range(0, 1000, 100):
        m.add(range(start, start + 100), _unit(rng, 100, 768))
    assert len(m) == 1000
    assert m.nbytes >= 1000 * 768 * 4
    assert m.nbytes <= 2 * 1024 * (768 * 4 + 8)
    m.remove(range(990))
    assert len(m) == 10
    assert m.nbytes < 1000 * 768 * 4 // 2
    assert sorted(m.keys()) == list(range(990, 1000))
    m.clear()
    assert len(m) == 0 and m.top_k(np.ones(768, dtype=np.float32), 5) == []


def test_bad_input():
    m = VectorMatrix(3)
    with pytest.raises(ValueError):
        m.add([1, 2], np.zeros((1, 3)))
    with pytest.raises(ValueError):
        m.add([1], np.full((1, 3), np.nan))
    with pytest.raises(ValueError):
        m.top_k(np.zeros(4), 1)
    with pytest.raises(ValueError):
        VectorMatrix(0)
    m.add([5], np.array([1.0, 0.0, 0.0]))  # 1-D single vector accepted, float64 stored as float32
    assert m.get(5).dtype == np.float32


def test_thread_safety_concurrent_add_remove_search():
    dims = 32
    m = VectorMatrix(dims)
    rng = np.random.default_rng(5)
    base = _unit(rng, 2000, dims)
    errors: list[BaseException] = []

    def writer(offset: int):
        try:
            for i in range(0, 500, 25):
                keys = list(range(offset + i, offset + i + 25))
                m.add(keys, base[offset + i: offset + i + 25])
                if i % 50 == 0:
                    m.remove(keys[:5])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def reader():
        try:
            for _ in range(200):
                for key, score in m.top_k(base[0], 10):
                    assert -1.001 <= score <= 1.001
                    assert 0 <= key < 2000
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(o,)) for o in (0, 500, 1000, 1500)]
    threads += [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(m) == 4 * (500 - 10 * 5)
    for key in m.keys():
        np.testing.assert_array_equal(m.get(key), base[key])
