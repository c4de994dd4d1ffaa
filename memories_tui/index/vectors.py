"""An in-memory matrix of L2-normalised float32 vectors keyed by int (chunk id).

Brute-force cosine search: the vectors are normalised, so cosine is a dot product; one
matrix-vector product plus ``argpartition`` gives the top k. 10,000 x 768 float32 is 30 MiB
and a top-100 takes a few milliseconds single-threaded.

Storage grows by doubling, removal swaps the last row into the hole, so ``add``/``remove``
are amortised O(rows touched). All methods are thread-safe (one lock per matrix).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from contextlib import nullcontext

import numpy as np

try:  # optional: keep BLAS from spawning threads that fight onnxruntime's
    from threadpoolctl import threadpool_limits as _threadpool_limits
except ImportError:  # not a dependency; numpy's matvec at this size is fine single-threaded anyway
    _threadpool_limits = None

_MIN_CAPACITY = 64


def _blas_one_thread():
    return _threadpool_limits(limits=1, user_api="blas") if _threadpool_limits is not None else nullcontext()


class VectorMatrix:
    def __init__(self, dims: int) -> None:
        if int(dims) <= 0:
            raise ValueError(f"dims must be positive; got {dims}")
        self.dims = int(dims)
        self._lock = threading.RLock()
        self._n = 0
        self._buf = np.zeros((0, self.dims), dtype=np.float32)
        self._keys = np.zeros(0, dtype=np.int64)
        self._row: dict[int, int] = {}

    # --- inspection ----------------------------------------------------------------------

    def __len__(self) -> int:
        with self._lock:
            return self._n

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._row

    def keys(self) -> list[int]:
        with self._lock:
            return [int(k) for k in self._keys[:self._n]]

    def get(self, key: int) -> np.ndarray | None:
        with self._lock:
            row = self._row.get(int(key))
            return None if row is None else self._buf[row].copy()

    @property
    def nbytes(self) -> int:
        """Bytes allocated for vectors and keys (capacity, not just used rows)."""
        with self._lock:
            return int(self._buf.nbytes + self._keys.nbytes)

    # --- mutation ------------------------------------------------------------------------

    def _reserve(self, need: int) -> None:
        cap = self._buf.shape[0]
        if need <= cap:
            return
        new_cap = max(_MIN_CAPACITY, cap * 2, need)
        buf = np.zeros((new_cap, self.dims), dtype=np.float32)
        buf[:self._n] = self._buf[:self._n]
        keys = np.zeros(new_cap, dtype=np.int64)
        keys[:self._n] = self._keys[:self._n]
        self._buf, self._keys = buf, keys

    def add(self, keys: Sequence[int], vectors: np.ndarray) -> None:
        """Insert or replace rows. ``vectors`` is (len(keys), dims); it is stored as float32."""
        vecs = np.asarray(vectors, dtype=np.float32)
        if vecs.ndim == 1:
            vecs = vecs.reshape(1, -1)
        keys = [int(k) for k in keys]
        if vecs.shape != (len(keys), self.dims):
            raise ValueError(f"expected vectors of shape ({len(keys)}, {self.dims}); got {vecs.shape}")
        if not np.isfinite(vecs).all():
            raise ValueError("vectors contain NaN or infinity")
        with self._lock:
            new = [k for k in dict.fromkeys(keys) if k not in self._row]
            self._reserve(self._n + len(new))
            for i, key in enumerate(keys):
                row = self._row.get(key)
                if row is None:
                    row = self._n
                    self._row[key] = row
                    self._keys[row] = key
                    self._n += 1
                self._buf[row] = vecs[i]

    def remove(self, keys: Iterable[int]) -> int:
        """Delete rows; unknown keys are ignored. Returns how many were removed."""
        removed = 0
        with self._lock:
            for key in keys:
                row = self._row.pop(int(key), None)
                if row is None:
                    continue
                last = self._n - 1
                if row != last:
                    moved = int(self._keys[last])
                    self._buf[row] = self._buf[last]
                    self._keys[row] = moved
                    self._row[moved] = row
                self._n = last
                removed += 1
            if self._n < self._buf.shape[0] // 4 and self._buf.shape[0] > _MIN_CAPACITY:
                cap = max(_MIN_CAPACITY, self._n * 2)
                self._buf = self._buf[:cap].copy()
                self._keys = self._keys[:cap].copy()
        return removed

    def clear(self) -> None:
        with self._lock:
            self._n = 0
            self._buf = np.zeros((0, self.dims), dtype=np.float32)
            self._keys = np.zeros(0, dtype=np.int64)
            self._row.clear()

    # --- search --------------------------------------------------------------------------

    def top_k(self, query_vec: np.ndarray, k: int, allowed: set[int] | None = None) -> list[tuple[int, float]]:
        """The ``k`` best ``(key, cosine)`` pairs, best first (ties: smaller key first).

        ``allowed`` restricts the candidates to those keys (e.g. a filtered record set).
        """
        q = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dims:
            raise ValueError(f"query has {q.shape[0]} dims; the matrix has {self.dims}")
        if k <= 0:
            return []
        with self._lock:
            n = self._n
            if n == 0:
                return []
            if allowed is not None:
                rows = np.fromiter((r for r in (self._row.get(int(a)) for a in allowed) if r is not None),
                                   dtype=np.int64)
                if rows.size == 0:
                    return []
                rows.sort()
                with _blas_one_thread():
                    scores = self._buf[rows] @ q
                cand_keys = self._keys[rows]
            else:
                with _blas_one_thread():
                    scores = self._buf[:n] @ q
                cand_keys = self._keys[:n].copy()
        m = scores.shape[0]
        if k < m:
            part = np.argpartition(-scores, k - 1)[:k]
        else:
            part = np.arange(m)
        # Sort the survivors by score desc, then key asc, for a deterministic order.
        order = np.lexsort((cand_keys[part], -scores[part]))
        best = part[order]
        return [(int(cand_keys[i]), float(scores[i])) for i in best]
