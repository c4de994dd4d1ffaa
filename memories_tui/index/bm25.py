"""BM25 over in-memory term postings with numpy: FTS5's ``bm25()`` formula without SQL.

Why: scoring through FTS5 cost ~2 ms a query on 14k chunks (the SQL round trip and
per-row auxiliary-function calls), 4-8x what bm25s takes. Here a query is a few numpy
operations over the postings of its terms, evaluated in the same order of operations as
SQLite FTS5's ``bm25(t, w_1, …, w_n)``, so on the same tokens the scores are identical
(``tests/unit/test_bm25.py`` checks rankings against a real FTS5 table):

    score(row) = Σ_t idf(t) · f(t,row)·(k1+1) / (f(t,row) + k1·(1 − b + b·len(row)/avgdl))
    idf(t)     = ln((N − n_t + 0.5) / (n_t + 0.5)), or 1e-6 when that is ≤ 0
    k1 = 1.2, b = 0.75; f = column-weighted term frequency; n_t = live rows holding t

The caller gives each row its weighted frequencies and its length (the caller decides
what counts toward it). Interface: ``add``/``remove`` rows by integer key, ``top_k``
(prepared terms + ``any``/``all`` → best keys and scores), ``matching`` (keys of rows
holding every term) and ``to_bytes``/``from_bytes`` for the encrypted snapshot. A row may
name a group (its record): ``top_k(..., per_group=True)`` then ranks groups by their best
row, which is how a document is scored from its chunks, however many chunks that takes.

Storage: a term-major CSR of (row, weighted tf) postings built in bulk, plus a small
delta of rows added since, merged in when it grows. Removed rows are masked out (their
postings are dropped at the next merge).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

K1 = 1.2
B = 0.75
_MAGIC = b"MBM3"  # 3: rows carry a group; older images are refused (the caller rebuilds)
_HEAD = struct.Struct("<4sQQQ2s")  # magic, rows, terms, postings, dtype codes of (row, tf) columns
# Postings are stored as narrow as they fit (the snapshot is read at every unlock):
# row numbers as uint16 below 65,536 rows, frequencies as uint16 when whole numbers.
_CODES = {b"H": "<u2", b"i": "<i4", b"f": "<f4"}
_MERGE_MIN = 20_000  # delta postings before merging, or a quarter of the base if larger
# Per-term (rows, contributions) are memoised until the next write: queries share terms,
# and a hit saves ~8 numpy calls. Bounded by the postings held.
_MEMO_POSTINGS = 2_000_000
_TINY = float(np.finfo(np.float64).tiny)  # below every score of a matching row


@dataclass(frozen=True)
class BM25Row:
    key: int
    freqs: Mapping[str, float]  # term -> column-weighted frequency (> 0)
    length: int  # token count used for length normalisation
    card: bool = False
    group: int | None = None  # rows of one group (a record's chunks) share it; None: the key


def _first_of_each(values: np.ndarray) -> np.ndarray:
    """Ascending positions of the first occurrence of each distinct value (numpy's unique
    with return_index costs ~50x a stable argsort here)."""
    if len(values) == 0:
        return np.zeros(0, np.int64)
    by_value = np.argsort(values, kind="stable")
    ordered = values[by_value]
    starts = np.empty(len(ordered), np.bool_)
    starts[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    return np.sort(by_value[starts])


class BM25Index:
    """Not thread-safe on its own: the owner (``LexicalIndex``) serialises access."""

    def __init__(self) -> None:
        self._vocab: dict[str, int] = {}
        self._terms: list[str] = []
        cap = 64
        self._row_key = np.zeros(cap, np.int64)
        self._row_group = np.zeros(cap, np.int64)
        self._row_gidx = np.zeros(cap, np.int64)  # the group as a dense number (0, 1, …)
        self._group_ids: dict[int, int] = {}
        self._row_len = np.zeros(cap, np.float64)
        self._row_card = np.zeros(cap, np.bool_)
        self._row_alive = np.zeros(cap, np.bool_)
        self._n_slots = 0
        self._key_row: dict[int, int] = {}
        self._total_len = 0
        self._dead = 0
        # base CSR (term-major)
        self._ptr = np.zeros(1, np.int64)
        self._prow = np.zeros(0, np.int32)
        self._ptf = np.zeros(0, np.float32)
        # delta: term id -> (rows, tfs) as lists, and its count
        self._delta: dict[int, tuple[list[int], list[float]]] = {}
        self._delta_n = 0
        self._norm: np.ndarray | None = None  # per-slot denominator term; None when stale
        self._memo: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._memo_size = 0

    # -- writes ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._key_row)

    def __contains__(self, key: object) -> bool:
        return key in self._key_row

    def _grow(self, need: int) -> None:
        cap = len(self._row_key)
        if need <= cap:
            return
        new = max(need, cap * 2)
        for name in ("_row_key", "_row_group", "_row_gidx", "_row_len", "_row_card", "_row_alive"):
            old = getattr(self, name)
            arr = np.zeros(new, old.dtype)
            arr[:cap] = old
            setattr(self, name, arr)

    def add(self, rows: Sequence[BM25Row]) -> None:
        """Add rows; a key already present is replaced (the last one wins)."""
        if not rows:
            return
        self.remove([r.key for r in rows if r.key in self._key_row])
        last: dict[int, BM25Row] = {}
        for r in rows:
            last.pop(r.key, None)
            last[r.key] = r
        rows = list(last.values())
        start = self._n_slots
        self._grow(start + len(rows))
        terms: list[str] = []
        ptf: list[float] = []
        for slot, r in enumerate(rows, start):
            self._key_row[r.key] = slot
            terms.extend(r.freqs)
            ptf.extend(r.freqs.values())
        end = start + len(rows)
        prow = np.repeat(np.arange(start, end, dtype=np.int32), [len(r.freqs) for r in rows])
        lengths = [r.length for r in rows]
        self._row_key[start:end] = [r.key for r in rows]
        groups = [r.key if r.group is None else r.group for r in rows]
        self._row_group[start:end] = groups
        self._row_gidx[start:end] = self._dense_groups(groups)
        self._row_len[start:end] = lengths
        self._row_card[start:end] = [r.card for r in rows]
        self._row_alive[start:end] = True
        self._total_len += sum(lengths)
        vocab = self._vocab
        fresh = sorted(set(terms).difference(vocab))
        vocab.update(zip(fresh, range(len(self._terms), len(self._terms) + len(fresh)), strict=True))
        self._terms.extend(fresh)
        tids = list(map(vocab.__getitem__, terms))
        self._n_slots = end
        self._stale()
        if len(self._prow) == 0 and not self._delta:
            self._set_base(np.asarray(tids, np.int64), prow, np.asarray(ptf, np.float32))
            return
        delta = self._delta
        for tid, slot, tf in zip(tids, prow.tolist(), ptf, strict=True):
            entry = delta.get(tid)
            if entry is None:
                entry = delta[tid] = ([], [])
            entry[0].append(slot)
            entry[1].append(tf)
        self._delta_n += len(tids)
        if self._delta_n > max(_MERGE_MIN, len(self._prow) // 4):
            self._merge()

    def _dense_groups(self, groups: Iterable[int]) -> list[int]:
        ids = self._group_ids
        return [ids.setdefault(g, len(ids)) for g in groups]

    def remove(self, keys: Iterable[int]) -> None:
        for key in keys:
            slot = self._key_row.pop(int(key), None)
            if slot is None:
                continue
            self._row_alive[slot] = False
            self._total_len -= int(self._row_len[slot])
            self._dead += 1
        self._stale()

    def _stale(self) -> None:
        """Row count, lengths or postings changed: every derived score must be recomputed."""
        self._norm = None
        self._memo = {}
        self._memo_size = 0

    def _set_base(self, tids: np.ndarray, rows: np.ndarray, tfs: np.ndarray) -> None:
        order = np.argsort(tids, kind="stable")  # keeps rows ascending within a term
        counts = np.bincount(tids, minlength=len(self._terms)) if len(tids) else np.zeros(len(self._terms), np.int64)
        self._ptr = np.zeros(len(self._terms) + 1, np.int64)
        np.cumsum(counts, out=self._ptr[1:])
        self._prow = rows[order]
        self._ptf = tfs[order]

    def _merge(self) -> None:
        """Fold the delta into the base CSR and drop postings of removed rows."""
        n_base = len(self._ptr) - 1
        base_tids = np.repeat(np.arange(n_base, dtype=np.int64), np.diff(self._ptr))
        d_tids: list[int] = []
        d_rows: list[int] = []
        d_tfs: list[float] = []
        for tid, (rs, fs) in self._delta.items():
            d_tids.extend([tid] * len(rs))
            d_rows.extend(rs)
            d_tfs.extend(fs)
        tids = np.concatenate([base_tids, np.asarray(d_tids, np.int64)])
        rows = np.concatenate([self._prow, np.asarray(d_rows, np.int32)])
        tfs = np.concatenate([self._ptf, np.asarray(d_tfs, np.float32)])
        if self._dead:
            keep = self._row_alive[rows]
            tids, rows, tfs = tids[keep], rows[keep], tfs[keep]
        self._delta = {}
        self._delta_n = 0
        self._set_base(tids, rows, tfs)

    # -- queries --------------------------------------------------------------------------

    def _postings(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        rows = self._prow[self._ptr[tid]:self._ptr[tid + 1]] if tid < len(self._ptr) - 1 else self._prow[:0]
        tfs = self._ptf[self._ptr[tid]:self._ptr[tid + 1]] if tid < len(self._ptr) - 1 else self._ptf[:0]
        extra = self._delta.get(tid)
        if extra is not None:
            rows = np.concatenate([rows, np.asarray(extra[0], np.int32)])
            tfs = np.concatenate([tfs, np.asarray(extra[1], np.float32)])
        if self._dead:
            keep = self._row_alive[rows]
            rows, tfs = rows[keep], tfs[keep]
        return rows, tfs

    def _denominators(self) -> np.ndarray:
        """k1·(1 − b + b·len/avgdl) per slot, evaluated in FTS5's order of operations."""
        if self._norm is None:
            n = len(self._key_row)
            avgdl = self._total_len / n if n else 1.0
            self._norm = K1 * (1 - B + B * self._row_len[:self._n_slots] / avgdl)
        return self._norm

    def _contributions(self, terms: Sequence[str], need_all: bool) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per term (in query order) its live rows and score contributions; empty lists when
        ``need_all`` and some term matches nothing."""
        n = len(self._key_row)
        norm = self._denominators()
        rows_out: list[np.ndarray] = []
        vals_out: list[np.ndarray] = []
        memo = self._memo
        for term in dict.fromkeys(terms):
            tid = self._vocab.get(term)
            if tid is None:
                if need_all:
                    return [], []
                continue
            got = memo.get(tid)
            if got is not None:
                rows_out.append(got[0])
                vals_out.append(got[1])
                continue
            rows, tfs = self._postings(tid)
            hits = len(rows)
            if hits == 0:
                if need_all:
                    return [], []
                continue
            idf = math.log((n - hits + 0.5) / (hits + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            f = tfs.astype(np.float64)
            vals = idf * ((f * (K1 + 1.0)) / (f + norm[rows]))
            rows_out.append(rows)
            vals_out.append(vals)
            if self._memo_size + hits <= _MEMO_POSTINGS:
                memo[tid] = (rows, vals)
                self._memo_size += hits
        return rows_out, vals_out

    def top_k(self, terms: Sequence[str], match_mode: str, k: int, cards_only: bool = False,
              per_group: bool = False) -> list[tuple[int, float]]:
        """Best ``k`` (key, score) pairs, score descending then key ascending. ``any``: rows with
        at least one term; ``all``: rows with every term. ``per_group``: the best row of each of
        the best ``k`` groups (a group ranks by its best row)."""
        if match_mode not in ("any", "all"):
            raise ValueError(f"BM25Index handles 'any' and 'all', not {match_mode!r}")
        need_all = match_mode == "all"
        rows_l, vals_l = self._contributions(terms, need_all)
        if not rows_l or k <= 0:
            return []
        size = self._n_slots
        if len(rows_l) == 1:
            cand = rows_l[0]
            cand_scores = vals_l[0]
        else:
            rows = np.concatenate(rows_l)
            scores = np.bincount(rows, weights=np.concatenate(vals_l), minlength=size)
            if need_all:
                cand = np.flatnonzero(np.bincount(rows, minlength=size) == len(rows_l))
            else:
                # every matching row scores > 0 (idf is at least 1e-6); a scan of booleans
                # is several times faster than numpy's nonzero over floats
                cand = np.flatnonzero(scores > 0.0)
            cand_scores = scores[cand]
        if cards_only:
            keep = self._row_card[cand]
            cand, cand_scores = cand[keep], cand_scores[keep]
        if per_group:
            return self._best_per_group(cand, cand_scores, k)
        if len(cand) > k:
            # every candidate tied with the k-th best stays, so ties resolve by key below
            kth = np.partition(cand_scores, len(cand_scores) - k)[len(cand_scores) - k]
            keep = cand_scores >= kth
            cand, cand_scores = cand[keep], cand_scores[keep]
        keys = self._row_key[cand]
        order = np.lexsort((keys, -cand_scores))[:k]
        return list(zip(keys[order].tolist(), cand_scores[order].tolist(), strict=True))

    def _best_per_group(self, cand: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The best row of each of the best ``k`` groups (ties: the lower key, as for rows)."""
        if len(cand) == 0:
            return []
        gidx = self._row_gidx[cand]
        best = np.zeros(len(self._group_ids), np.float64)
        np.maximum.at(best, gidx, scores)  # each group's best score (every score is > 0)
        n = len(best)
        kth = np.partition(best, n - k)[n - k] if n > k else 0.0
        kth = max(kth, _TINY)  # groups tied with the k-th stay, as rows do
        sel = np.flatnonzero((scores >= kth) & (scores == best[gidx]))  # rows at their group's best
        rows, vals = cand[sel], scores[sel]
        keys = self._row_key[rows]
        order = np.lexsort((keys, -vals))
        if len(sel) > np.count_nonzero(best >= kth):  # a group with two rows tied at its best
            order = order[_first_of_each(gidx[sel][order])]
        order = order[:k]
        return list(zip(keys[order].tolist(), vals[order].tolist(), strict=True))

    def group_of(self, key: int) -> int | None:
        """The group of a row (its key when none was given); None for an unknown key."""
        slot = self._key_row.get(key)
        return None if slot is None else int(self._row_group[slot])

    def matching(self, terms: Sequence[str]) -> set[int]:
        """Keys of the rows that hold every term (``all``)."""
        rows_l, _ = self._contributions(terms, True)
        if not rows_l:
            return set()
        rows = np.concatenate(rows_l)
        hit = np.flatnonzero(np.bincount(rows, minlength=self._n_slots) == len(rows_l))
        return set(self._row_key[hit].tolist())

    def doc_freq(self, term: str) -> int:
        tid = self._vocab.get(term)
        return 0 if tid is None else len(self._postings(tid)[0])

    # -- persistence ----------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """Compact form: live rows renumbered in slot order, one CSR, and only the terms that
        live rows hold (the snapshot must keep no token of deleted text)."""
        if self._delta or self._dead:
            self._merge()
        alive = np.flatnonzero(self._row_alive[:self._n_slots])
        remap = np.full(max(self._n_slots, 1), -1, np.int64)
        remap[alive] = np.arange(len(alive))
        rows = remap[self._prow].astype(np.int32)
        counts = np.diff(self._ptr)
        used = np.flatnonzero(counts)
        ptr = np.zeros(len(used) + 1, np.int64)
        np.cumsum(counts[used], out=ptr[1:])
        terms = self._terms
        vocab = "\x00".join([terms[i] for i in used.tolist()]).encode("utf-8")
        row_code = b"H" if len(alive) <= 65536 else b"i"
        tfs = self._ptf
        tf_code = b"H" if len(tfs) == 0 or (float(tfs.max()) <= 65535 and bool(np.all(tfs == np.floor(tfs)))) else b"f"
        parts = [
            _HEAD.pack(_MAGIC, len(alive), len(used), len(rows), row_code + tf_code),
            self._row_key[alive].astype("<i8").tobytes(),
            self._row_group[alive].astype("<i8").tobytes(),
            self._row_len[alive].astype("<i4").tobytes(),
            self._row_card[alive].astype(np.uint8).tobytes(),
            ptr.astype("<i8").tobytes(),
            rows.astype(_CODES[row_code]).tobytes(),
            tfs.astype(_CODES[tf_code]).tobytes(),
            vocab,
        ]
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, data: bytes | memoryview) -> BM25Index:
        """Inverse of ``to_bytes``; raises ValueError on anything malformed."""
        view = memoryview(data)
        if len(view) < _HEAD.size:
            raise ValueError("truncated BM25 index")
        magic, n_rows, n_terms, n_post, codes = _HEAD.unpack_from(view)
        if magic != _MAGIC or codes[:1] not in (b"H", b"i") or codes[1:] not in (b"H", b"f"):
            raise ValueError("not a BM25 index")
        index = cls()
        off = _HEAD.size

        def take(dtype: str, count: int) -> np.ndarray:
            nonlocal off
            size = np.dtype(dtype).itemsize * count
            if off + size > len(view):
                raise ValueError("truncated BM25 index")
            arr = np.frombuffer(view, dtype, count, off)
            off += size
            return arr

        keys = take("<i8", n_rows)
        groups = take("<i8", n_rows)
        lens = take("<i4", n_rows)
        cards = take("u1", n_rows)
        ptr = take("<i8", n_terms + 1)
        rows = take(_CODES[codes[:1]], n_post)
        tfs = take(_CODES[codes[1:]], n_post)
        terms = bytes(view[off:]).decode("utf-8").split("\x00") if n_terms else []
        if len(terms) != n_terms or int(ptr[-1]) != n_post or (n_post and int(rows.max()) >= n_rows):
            raise ValueError("inconsistent BM25 index")
        index._grow(n_rows)
        index._row_key[:n_rows] = keys
        index._row_group[:n_rows] = groups
        index._row_gidx[:n_rows] = index._dense_groups(groups.tolist())
        index._row_len[:n_rows] = lens
        index._row_card[:n_rows] = cards.astype(np.bool_)
        index._row_alive[:n_rows] = True
        index._n_slots = n_rows
        index._key_row = dict(zip(keys.tolist(), range(n_rows), strict=True))
        index._total_len = int(lens.sum(dtype=np.int64))
        index._terms = terms
        index._vocab = dict(zip(terms, range(n_terms), strict=True))
        # read-only views on the snapshot: base arrays are replaced, never written in place
        index._ptr = ptr
        index._prow = rows
        index._ptf = tfs
        return index
