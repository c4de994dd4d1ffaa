"""One field of the BM25 index: its vocabulary, term-major postings and row lengths.

The index (``bm25.py``) holds the rows (keys, groups, cards, which are alive) and one of
these per field: the Jieba words, and the CJK character pieces that let part of a word
match. Each field has its own term statistics and length normalisation, so adding pieces
leaves the words' scores exactly as they were.

Storage: a term-major CSR of (row, weighted tf) postings built in bulk, plus a small delta of
rows added since, merged in when it grows. Removed rows are masked out (their postings are
dropped at the next merge). While the field holds no delta and no removed row's postings
(a bulk build, a restored snapshot, after a merge), every posting's score contribution is
computed at once, on the first query after a write: a query then only slices its terms'
arrays (computing a term's contributions at its first use cost ~10 numpy calls, and a
Chinese question with its pieces has ~7 such terms). Otherwise per-term contributions are
memoised until the next write.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping, Sequence
from itertools import chain

import numpy as np

from .bm25_vocab import PairVocabulary, Vocabulary, WordVocabulary

K1 = 1.2
B = 0.75
_MERGE_MIN = 20_000  # delta postings before merging, or a quarter of the base if larger
_MEMO_POSTINGS = 2_000_000  # bounded by the postings held
# Postings are stored as narrow as they fit, in memory and in the snapshot (read at every
# unlock): row numbers as uint16 below 65,536 rows, frequencies as uint16 when whole numbers.
CODES = {b"H": "<u2", b"i": "<i4", b"f": "<f4"}
_HEAD = struct.Struct("<QQQ2s")  # terms, postings, vocabulary bytes, dtype codes of (row, tf)


class FieldPostings:
    """``pairs``: the field of CJK pieces. Its terms are all two characters (kept as codes,
    see bm25_vocab), and its average length is taken over rows with at least one token in
    this field, so a field most rows lack (pieces in a mostly English vault) is not
    normalised against a near-zero average (``filled_average``, also the CJK characters field's
    choice). The words field keeps FTS5's average over all rows."""

    def __init__(self, pairs: bool = False, vocab: Vocabulary | None = None, filled_average: bool | None = None
                 ) -> None:
        self.filled_average = pairs if filled_average is None else filled_average
        self.vocab: Vocabulary = vocab if vocab is not None else PairVocabulary() if pairs else WordVocabulary()
        self.lens = np.zeros(64, np.float64)
        self.total_len = 0
        self.filled = 0  # live rows whose length here is > 0
        self.ptr = np.zeros(1, np.int64)
        self.prow = np.zeros(0, np.int32)
        self.ptf = np.zeros(0, np.float32)
        self.delta: dict[int, tuple[list[int], list[float]]] = {}
        self.delta_n = 0
        self.norm: np.ndarray | None = None
        self.memo: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.memo_size = 0
        self.memo_scale = 1.0  # the weight the memoised (or precomputed) contributions carry
        self.clean = True  # no delta, and no postings of removed rows: ``contrib`` may be used
        self.contrib: np.ndarray | None = None  # every posting's contribution, aligned with prow

    # -- writes ---------------------------------------------------------------------------

    def grow(self, cap: int) -> None:
        if cap > len(self.lens):
            lens = np.zeros(cap, np.float64)
            lens[:len(self.lens)] = self.lens
            self.lens = lens

    def stale(self) -> None:
        self.norm = None
        self.contrib = None
        self.memo = {}
        self.memo_size = 0

    def add(self, start: int, freqs: Sequence[Mapping[str, float]], lengths: Sequence[int],
            alive: np.ndarray, dead: int) -> None:
        """Postings of rows ``start``, ``start + 1``, … (slots already allocated)."""
        end = start + len(freqs)
        self.lens[start:end] = lengths
        self.total_len += sum(lengths)
        self.filled += sum(1 for n in lengths if n > 0)
        terms = list(chain.from_iterable(freqs))
        tfs = np.fromiter(chain.from_iterable(f.values() for f in freqs), np.float32, len(terms))
        prow = np.repeat(np.arange(start, end, dtype=np.int32), [len(f) for f in freqs])
        tids = self.vocab.ids(terms)
        self.stale()
        if len(self.prow) == 0 and not self.delta:
            self._set_base(tids, prow, tfs)
            return
        self.clean = False
        delta = self.delta
        for tid, slot, tf in zip(tids.tolist(), prow.tolist(), tfs.tolist(), strict=True):
            entry = delta.get(tid)
            if entry is None:
                entry = delta[tid] = ([], [])
            entry[0].append(slot)
            entry[1].append(tf)
        self.delta_n += len(tids)
        if self.delta_n > max(_MERGE_MIN, len(self.prow) // 4):
            self.merge(alive, dead)

    def remove(self, slot: int) -> None:
        self.clean = False  # its postings stay until the next merge
        length = int(self.lens[slot])
        self.total_len -= length
        self.filled -= length > 0

    def _set_base(self, tids: np.ndarray, rows: np.ndarray, tfs: np.ndarray) -> None:
        order = np.argsort(tids, kind="stable")  # keeps rows ascending within a term
        n_terms = len(self.vocab)
        counts = np.bincount(tids, minlength=n_terms) if len(tids) else np.zeros(n_terms, np.int64)
        self.ptr = np.zeros(n_terms + 1, np.int64)
        np.cumsum(counts, out=self.ptr[1:])
        self.prow = _narrow(rows[order], whole=True)
        self.ptf = _narrow(tfs[order], whole=False)
        self.clean = True
        self.contrib = None

    def merge(self, alive: np.ndarray, dead: int) -> None:
        """Fold the delta into the base CSR and drop postings of removed rows."""
        n_base = len(self.ptr) - 1
        base_tids = np.repeat(np.arange(n_base, dtype=np.int64), np.diff(self.ptr))
        d_tids: list[int] = []
        d_rows: list[int] = []
        d_tfs: list[float] = []
        for tid, (rs, fs) in self.delta.items():
            d_tids.extend([tid] * len(rs))
            d_rows.extend(rs)
            d_tfs.extend(fs)
        tids = np.concatenate([base_tids, np.asarray(d_tids, np.int64)])
        rows = np.concatenate([self.prow, np.asarray(d_rows, np.int32)])
        tfs = np.concatenate([self.ptf, np.asarray(d_tfs, np.float32)])
        if dead:
            keep = alive[rows]
            tids, rows, tfs = tids[keep], rows[keep], tfs[keep]
        self.delta = {}
        self.delta_n = 0
        self._set_base(tids, rows, tfs)

    # -- queries --------------------------------------------------------------------------

    def postings(self, tid: int, alive: np.ndarray, dead: int) -> tuple[np.ndarray, np.ndarray]:
        inside = tid < len(self.ptr) - 1
        rows = self.prow[self.ptr[tid]:self.ptr[tid + 1]] if inside else self.prow[:0]
        tfs = self.ptf[self.ptr[tid]:self.ptr[tid + 1]] if inside else self.ptf[:0]
        extra = self.delta.get(tid)
        if extra is not None:
            rows = np.concatenate([rows, np.asarray(extra[0], np.int32)])
            tfs = np.concatenate([tfs, np.asarray(extra[1], np.float32)])
        if dead:
            keep = alive[rows]
            rows, tfs = rows[keep], tfs[keep]
        return rows, tfs

    def _denominators(self, n_live: int, n_slots: int) -> np.ndarray:
        """k1·(1 − b + b·len/avgdl) per slot, evaluated in FTS5's order of operations."""
        if self.norm is None:
            rows = self.filled if self.filled_average else n_live
            avgdl = self.total_len / rows if rows and self.total_len else 1.0
            self.norm = K1 * (1 - B + B * self.lens[:n_slots] / avgdl)
        return self.norm

    def contributions(self, terms: Sequence[str], need_all: bool, alive: np.ndarray, dead: int, n_live: int,
                      n_slots: int, scale: float = 1.0) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per distinct term (in query order) its live rows and score contributions (times
        ``scale``, the field's weight); empty lists when ``need_all`` and some term matches nothing."""
        norm = self._denominators(n_live, n_slots)
        if scale != self.memo_scale:
            self.stale()
            self.memo_scale = scale
        rows_out: list[np.ndarray] = []
        vals_out: list[np.ndarray] = []
        memo = self.memo
        every = self._all_contributions(n_live, norm) if self.clean else None
        ptr = self.ptr
        for tid in self.vocab.lookup(list(dict.fromkeys(terms))):
            if tid is None:
                if need_all:
                    return [], []
                continue
            if every is not None:
                start, end = ptr[tid:tid + 2].tolist()
                if start == end:
                    if need_all:
                        return [], []
                    continue
                rows_out.append(self.prow[start:end])
                vals_out.append(every[start:end])
                continue
            got = memo.get(tid)
            if got is not None:
                rows_out.append(got[0])
                vals_out.append(got[1])
                continue
            rows, tfs = self.postings(tid, alive, dead)
            hits = len(rows)
            if hits == 0:
                if need_all:
                    return [], []
                continue
            idf = _idf(n_live, hits)
            f = tfs.astype(np.float64)
            vals = idf * ((f * (K1 + 1.0)) / (f + norm[rows]))
            if scale != 1.0:
                vals *= scale
            rows_out.append(rows)
            vals_out.append(vals)
            if self.memo_size + hits <= _MEMO_POSTINGS:
                memo[tid] = (rows, vals)
                self.memo_size += hits
        return rows_out, vals_out

    def _all_contributions(self, n_live: int, norm: np.ndarray) -> np.ndarray | None:
        """Every posting's contribution (times the weight), the same numbers ``contributions``
        computes term by term; None past the memo's bound (then terms are memoised instead)."""
        if self.contrib is None:
            n_post = len(self.prow)
            if n_post > _MEMO_POSTINGS:
                return None
            counts = np.diff(self.ptr)
            held, which = np.unique(counts, return_inverse=True)  # idf depends on the row count only
            idf = np.array([_idf(n_live, hits) for hits in held.tolist()], np.float64)
            f = self.ptf.astype(np.float64)
            vals = np.repeat(idf[which], counts) * ((f * (K1 + 1.0)) / (f + norm[self.prow]))
            if self.memo_scale != 1.0:
                vals *= self.memo_scale
            self.contrib = vals
        return self.contrib

    def doc_freq(self, term: str, alive: np.ndarray, dead: int) -> int:
        (tid,) = self.vocab.lookup([term])
        return 0 if tid is None else len(self.postings(tid, alive, dead)[0])

    # -- persistence ----------------------------------------------------------------------

    def to_bytes(self, alive_slots: np.ndarray, remap: np.ndarray) -> bytes:
        """This field for live rows renumbered by ``remap`` (merged first by the caller): only
        terms that live rows hold (the snapshot must keep no token of deleted text)."""
        rows = remap[self.prow].astype(np.int32)
        counts = np.diff(self.ptr)
        used = np.flatnonzero(counts)
        ptr = np.zeros(len(used) + 1, np.int64)
        np.cumsum(counts[used], out=ptr[1:])
        vocab = self.vocab.joined(used)
        row_code = b"H" if len(alive_slots) <= 65536 else b"i"
        tfs = self.ptf
        whole = len(tfs) == 0 or (float(tfs.max()) <= 65535 and bool(np.all(tfs == np.floor(tfs))))
        tf_code = b"H" if whole else b"f"
        return b"".join([
            _HEAD.pack(len(used), len(rows), len(vocab), row_code + tf_code),
            self.lens[alive_slots].astype("<i4").tobytes(),
            ptr.astype("<i8").tobytes(),
            rows.astype(CODES[row_code]).tobytes(),
            tfs.astype(CODES[tf_code]).tobytes(),
            vocab,
        ])

    @classmethod
    def from_view(cls, view: memoryview, off: int, n_rows: int, pairs: bool, filled_average: bool | None = None
                  ) -> tuple[FieldPostings, int]:
        """The field stored at ``view[off:]`` and the offset after it; ValueError when malformed.
        The arrays are copied out of the snapshot: there they start at any byte, and numpy
        reads unaligned arrays many times slower (a query's ``take``/fancy indexing ~40x);
        the copies also let the snapshot's bytes be freed."""
        if off + _HEAD.size > len(view):
            raise ValueError("truncated BM25 index")
        n_terms, n_post, n_vocab, codes = _HEAD.unpack_from(view, off)
        if codes[:1] not in (b"H", b"i") or codes[1:] not in (b"H", b"f"):
            raise ValueError("not a BM25 index")
        off += _HEAD.size

        def take(dtype: str, count: int) -> np.ndarray:
            nonlocal off
            size = np.dtype(dtype).itemsize * count
            if count < 0 or off + size > len(view):
                raise ValueError("truncated BM25 index")
            arr = np.frombuffer(view, dtype, count, off).copy()
            off += size
            return arr

        field = cls(pairs, filled_average=filled_average)
        lens = take("<i4", n_rows)
        field.ptr = take("<i8", n_terms + 1)
        field.prow = take(CODES[codes[:1]], n_post)
        field.ptf = take(CODES[codes[1:]], n_post)
        if off + n_vocab > len(view):
            raise ValueError("truncated BM25 index")
        read = PairVocabulary.from_joined if pairs else WordVocabulary.from_joined
        try:
            field.vocab = read(bytes(view[off:off + n_vocab]), n_terms)
        except UnicodeError as exc:
            raise ValueError("inconsistent BM25 index") from exc
        off += n_vocab
        if (int(field.ptr[-1]) != n_post
                or (n_post and int(field.prow.max()) >= n_rows)):
            raise ValueError("inconsistent BM25 index")
        field.grow(n_rows)
        field.lens[:n_rows] = lens
        field.total_len = int(lens.sum(dtype=np.int64))
        field.filled = int(np.count_nonzero(lens))
        return field, off


def _idf(n_live: int, hits: int) -> float:
    """ln((N − n + 0.5) / (n + 0.5)), or 1e-6 when that is not above 0 (FTS5's floor)."""
    idf = math.log((n_live - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else 1e-6


def _narrow(values: np.ndarray, whole: bool) -> np.ndarray:
    """``values`` as uint16 when they all fit (row numbers below 65,536, as in every vault
    within the default chunk limit; frequencies that are whole numbers): half the memory of
    the postings, as a restored snapshot already holds them."""
    if len(values) and (float(values.max()) > 65535 or float(values.min()) < 0
                        or not (whole or bool(np.all(values == np.floor(values))))):
        return values
    return values.astype(np.uint16)
