"""BM25 over in-memory term postings with numpy: FTS5's ``bm25()`` formula without SQL.

Why: scoring through FTS5 cost ~2 ms a query on 14k chunks (the SQL round trip and
per-row auxiliary-function calls), 4-8x what bm25s takes. Here a query is a few numpy
operations over the postings of its terms, evaluated in the same order of operations as
SQLite FTS5's ``bm25(t, w_1, …, w_n)``, so on the same tokens the scores are identical
(``tests/unit/test_bm25.py`` checks rankings against a real FTS5 table):

    score(row) = Σ_t idf(t) · f(t,row)·(k1+1) / (f(t,row) + k1·(1 − b + b·len(row)/avgdl))
    idf(t)     = ln((N − n_t + 0.5) / (n_t + 0.5)), or 1e-6 when that is ≤ 0
    k1 = 1.2, b = 0.75; f = column-weighted term frequency; n_t = live rows holding t

A row has three fields, each with its own postings, lengths and statistics
(``bm25_postings.py``): the words, the pieces (CJK character bigrams, which let part of
a word match) and the CJK characters (a one-character query word meets every word holding
it). A query's score is its words' BM25 plus ``piece_weight`` times its pieces' BM25 plus
``char_weight`` times its characters'; without pieces or characters it is exactly the
words' FTS5 score. The caller gives each row its
weighted frequencies and lengths. Interface: ``add``/``remove`` rows by integer key,
``top_k`` (terms, pieces + ``any``/``all`` → best keys and scores), ``matching`` (keys of
rows an ``all`` query matches) and ``to_bytes``/``from_bytes`` for the encrypted snapshot.
A row may name a group (its record): ``top_k(..., per_group=True)`` then ranks groups by
their best row, which is how a document is scored from its chunks, however many it has.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..text.segment import is_cjk_word
from ..vocabulary import MATCH_ALL, MATCH_ANY, MatchMode
from .bm25_postings import FieldPostings

_MAGIC = b"MBM5"  # 5: a characters field; 4: a pieces field; 3: rows carry a group. Older images are refused.
_HEAD = struct.Struct("<4sQ")  # magic, rows
# An ``all`` requirement: a query word, the pieces that all together also satisfy it, pieces
# of which any one does, whether the characters field holding the word does (a word of one
# CJK character standing alone in the query), and whether it does in a second tier (a word of
# one CJK character inside a longer run of the query: 竹 of 廠區竹 meets 新竹廠區, ranked
# after the rows that meet every word as a word or through the query's own pieces).
Need = tuple[str, tuple[str, ...], tuple[str, ...], bool, bool]


@dataclass(frozen=True)
class BM25Row:
    key: int
    freqs: Mapping[str, float]  # term -> column-weighted frequency (> 0)
    length: int  # token count used for length normalisation
    card: bool = False
    group: int | None = None  # rows of one group (a record's chunks) share it; None: the key
    pieces: Mapping[str, float] = field(default_factory=dict)  # the pieces field, like ``freqs``
    pieces_length: int = 0
    chars: Mapping[str, float] = field(default_factory=dict)  # the characters field, like ``freqs``
    chars_length: int = 0


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
        cap = 64
        self._row_key = np.zeros(cap, np.int64)
        self._row_group = np.zeros(cap, np.int64)
        self._row_gidx = np.zeros(cap, np.int64)  # the group as a dense number (0, 1, …)
        self._row_card = np.zeros(cap, np.bool_)
        self._row_alive = np.zeros(cap, np.bool_)
        self._group_ids: dict[int, int] = {}
        self._n_slots = 0
        self._key_row: dict[int, int] = {}
        self._dead = 0
        self._shared: np.ndarray | None = None  # per slot: its group has another live row
        self._words = FieldPostings()
        self._pieces = FieldPostings(pairs=True)
        self._chars = FieldPostings(pairs=False, filled_average=True)

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
        for name in ("_row_key", "_row_group", "_row_gidx", "_row_card", "_row_alive"):
            old = getattr(self, name)
            arr = np.zeros(new, old.dtype)
            arr[:cap] = old
            setattr(self, name, arr)
        for fld in self._fields():
            fld.grow(new)

    def _fields(self) -> tuple[FieldPostings, FieldPostings, FieldPostings]:
        return self._words, self._pieces, self._chars

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
        end = start + len(rows)
        for slot, r in enumerate(rows, start):
            self._key_row[r.key] = slot
        groups = [r.key if r.group is None else r.group for r in rows]
        self._row_key[start:end] = [r.key for r in rows]
        self._row_group[start:end] = groups
        self._row_gidx[start:end] = self._dense_groups(groups)
        self._row_card[start:end] = [r.card for r in rows]
        self._row_alive[start:end] = True
        self._n_slots = end
        self._shared = None
        self._words.add(start, [r.freqs for r in rows], [r.length for r in rows], self._row_alive, self._dead)
        self._pieces.add(start, [r.pieces for r in rows], [r.pieces_length for r in rows], self._row_alive,
                         self._dead)
        self._chars.add(start, [r.chars for r in rows], [r.chars_length for r in rows], self._row_alive, self._dead)

    def _dense_groups(self, groups: Iterable[int]) -> list[int]:
        ids = self._group_ids
        return [ids.setdefault(g, len(ids)) for g in groups]

    def remove(self, keys: Iterable[int]) -> None:
        for key in keys:
            slot = self._key_row.pop(int(key), None)
            if slot is None:
                continue
            self._row_alive[slot] = False
            for fld in self._fields():
                fld.remove(slot)
            self._dead += 1
        self._shared = None
        for fld in self._fields():
            fld.stale()  # row count and lengths changed: every derived score too

    # -- queries --------------------------------------------------------------------------

    def _contributions(self, fld: FieldPostings, terms: Sequence[str], need_all: bool, scale: float = 1.0
                       ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        return fld.contributions(terms, need_all, self._row_alive, self._dead, len(self._key_row), self._n_slots,
                                 scale)

    def _all_masks(self, need: Sequence[Need]) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Slots meeting every requirement (a word, its pieces, its character), and those that
        meet them when the second-tier characters count too; None where none can."""
        strong: np.ndarray | None = None
        loose: np.ndarray | None = None
        size = self._n_slots
        scale = self._pieces.memo_scale  # only rows are read here: keep the memo as it is
        char_scale = self._chars.memo_scale
        for word, all_of, any_of, as_char, later in need:
            meets = np.zeros(size, np.bool_)
            for rows in self._contributions(self._words, [word], False)[0]:
                meets[rows] = True
            if all_of:
                parts = self._contributions(self._pieces, all_of, True, scale)[0]  # [] unless each is held
                if parts:
                    meets |= np.bincount(np.concatenate(parts), minlength=size) == len(parts)
            for rows in self._contributions(self._pieces, any_of, False, scale)[0]:
                meets[rows] = True
            wider = meets
            if as_char or later:
                wider = meets.copy() if later else meets
                for rows in self._contributions(self._chars, [word], False, char_scale)[0]:
                    wider[rows] = True
            strong = meets if strong is None else strong & meets
            loose = wider if loose is None else loose & wider
            if not loose.any():
                return None, None
        if strong is not None and not strong.any():
            strong = None
        return strong, loose

    def top_k(self, terms: Sequence[str], match_mode: MatchMode, k: int, cards_only: bool = False,
              per_group: bool = False, pieces: Sequence[str] = (), piece_weight: float = 1.0,
              need: Sequence[Need] | None = None, chars: Sequence[str] = (), char_weight: float = 1.0
              ) -> list[tuple[int, float]]:
        """Best ``k`` (key, score) pairs, score descending then key ascending. ``any``: rows with
        at least one term, piece or character; ``all``: rows meeting every requirement of
        ``need`` (default: holding every term). ``per_group``: the best row of each of the
        best ``k`` groups (a group ranks by its best row)."""
        if match_mode not in (MATCH_ANY, MATCH_ALL):
            raise ValueError(f"BM25Index handles {MATCH_ANY!r} and {MATCH_ALL!r}, not {match_mode!r}")
        need_all = match_mode == MATCH_ALL
        if need_all and need is None:
            need = [(t, (), (), False, False) for t in dict.fromkeys(terms)]
        # plain: every word itself required (no piece or character may stand in for one)
        plain = not need_all or not any(a or b or c or d for _, a, b, c, d in need or ())
        rows_l, vals_l = self._contributions(self._words, terms, need_all and plain)
        n_words = len(rows_l)
        if need_all and plain and not rows_l:
            return []
        if pieces:
            p_rows, p_vals = self._contributions(self._pieces, pieces, False, piece_weight)
            rows_l += p_rows
            vals_l += p_vals
        if chars:
            c_rows, c_vals = self._contributions(self._chars, chars, False, char_weight)
            rows_l += c_rows
            vals_l += c_vals
        if not rows_l or k <= 0:
            return []
        size = self._n_slots
        if len(rows_l) == 1 and plain:  # one term's rows: already the candidates, scored
            cand = rows_l[0]
            cand_scores = vals_l[0]
        else:
            rows = np.concatenate(rows_l)
            scores = np.bincount(rows, weights=np.concatenate(vals_l), minlength=size)
            if need_all and plain:
                cand = (np.bincount(np.concatenate(rows_l[:n_words]), minlength=size) == n_words).nonzero()[0]
            elif need_all:
                assert need is not None
                strong, loose = self._all_masks(need)
                if loose is None:
                    return []
                if strong is not None and not (loose is strong or np.array_equal(loose, strong)):
                    return self._tiers(strong, loose, scores, k, cards_only, per_group)
                cand = loose.nonzero()[0]
            else:
                # every matching row scores > 0 (idf is at least 1e-6); a scan of booleans
                # is several times faster than numpy's nonzero over floats (and the method
                # half the cost of np.flatnonzero's wrapper, here and below)
                cand = (scores > 0.0).nonzero()[0]
            cand_scores = scores[cand]
        if cards_only:
            keep = self._row_card[cand]
            cand, cand_scores = cand[keep], cand_scores[keep]
        return self._best(cand, cand_scores, k, per_group)

    def _tiers(self, strong: np.ndarray, loose: np.ndarray, scores: np.ndarray, k: int, cards_only: bool,
               per_group: bool) -> list[tuple[int, float]]:
        """``all``'s ranking when some rows meet a word only in the second tier: the rows that
        meet every word first, by score, then the others (a group already ranked is not repeated)."""
        out: list[tuple[int, float]] = []
        first = np.zeros(0, np.int64)
        for tier in (strong, loose & ~strong):
            if cards_only:
                tier = tier & self._row_card[:len(tier)]
            cand = tier.nonzero()[0]
            if per_group and len(first) and len(cand):
                cand = cand[~np.isin(self._row_gidx[cand], self._row_gidx[first])]
            out += self._best(cand, scores[cand], k - len(out), per_group) if len(cand) else []
            if len(out) >= k:
                break
            first = cand
        return out

    def _best(self, cand: np.ndarray, scores: np.ndarray, k: int, per_group: bool) -> list[tuple[int, float]]:
        """The best ``k`` candidates (score descending, then key ascending), or with
        ``per_group`` the best row of each of the best ``k`` groups (a group's best row: its
        first in that order). Only a prefix of the order is sorted: the rows scoring at least
        the ``take``-th best, every row tied with it included; groups outside the prefix score
        below all of it, so when the prefix holds ``k`` groups they are the best ``k``."""
        n = len(cand)
        take = 2 * k if per_group else k
        while True:
            if n > take:
                kth = np.partition(scores, n - take)[n - take]
                sel = (scores >= kth).nonzero()[0]
                rows, vals = cand[sel], scores[sel]
            else:
                rows, vals = cand, scores
            keys = self._row_key[rows]
            order = np.lexsort((keys, -vals))
            if per_group:
                order = self._first_of_each_group(rows, order)
                if len(order) < k and len(rows) < n:  # groups repeat in the prefix: a longer one
                    take *= 4
                    continue
            order = order[:k]
            return list(zip(keys[order].tolist(), vals[order].tolist(), strict=True))

    def _first_of_each_group(self, rows: np.ndarray, order: np.ndarray) -> np.ndarray:
        """``order`` without the rows whose group came earlier in it. Only rows of a group with
        more than one live row can repeat one (most groups are a short note: one row)."""
        if self._shared is None:
            live = self._row_alive[:self._n_slots]
            gidx = self._row_gidx[:self._n_slots]
            self._shared = np.bincount(gidx[live], minlength=len(self._group_ids))[gidx] > 1
        ordered = rows[order]
        shared = self._shared[ordered].nonzero()[0]
        if len(shared) > 64:
            return order[_first_of_each(self._row_gidx[ordered])]
        if len(shared) < 2:
            return order
        seen: set[int] = set()
        again = []
        for pos, group in zip(shared.tolist(), self._row_gidx[ordered[shared]].tolist(), strict=True):
            if group in seen:
                again.append(pos)
            else:
                seen.add(group)
        if not again:
            return order
        keep = np.ones(len(order), np.bool_)
        keep[again] = False
        return order[keep]

    def group_of(self, key: int) -> int | None:
        """The group of a row (its key when none was given); None for an unknown key."""
        slot = self._key_row.get(key)
        return None if slot is None else int(self._row_group[slot])

    def matching(self, terms: Sequence[str], need: Sequence[Need] | None = None) -> set[int]:
        """Keys of the rows an ``all`` query matches (``need``, default: every term)."""
        _, mask = self._all_masks([(t, (), (), False, False) for t in dict.fromkeys(terms)] if need is None else need)
        return set() if mask is None else set(self._row_key[np.flatnonzero(mask)].tolist())

    def rarity(self, terms: Sequence[str]) -> list[float]:
        """How rare each term is here: BM25's idf kept positive, ln(1 + (N − n + 0.5) / (n + 0.5)),
        n the rows holding the term as a word, else (a CJK term) as characters or pieces (the
        rarest piece of it: at least as many rows as hold the whole term)."""
        n_live = len(self._key_row)
        out = []
        for term in terms:
            held = self.doc_freq(term)
            if not held and is_cjk_word(term):
                held = (self.doc_freq(term, chars=True) if len(term) == 1 else
                        min(self.doc_freq(term[i:i + 2], pieces=True) for i in range(len(term) - 1)))
            out.append(math.log(1.0 + (n_live - held + 0.5) / (held + 0.5)))
        return out

    def doc_freq(self, term: str, pieces: bool = False, chars: bool = False) -> int:
        fld = self._chars if chars else self._pieces if pieces else self._words
        return fld.doc_freq(term, self._row_alive, self._dead)

    # -- persistence ----------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """Compact form: live rows renumbered in slot order, then each field (the snapshot must
        keep no token of deleted text: only terms live rows hold are written)."""
        for fld in self._fields():
            if fld.delta or self._dead:
                fld.merge(self._row_alive, self._dead)
        alive = np.flatnonzero(self._row_alive[:self._n_slots])
        remap = np.full(max(self._n_slots, 1), -1, np.int64)
        remap[alive] = np.arange(len(alive))
        return b"".join([
            _HEAD.pack(_MAGIC, len(alive)),
            self._row_key[alive].astype("<i8").tobytes(),
            self._row_group[alive].astype("<i8").tobytes(),
            self._row_card[alive].astype(np.uint8).tobytes(),
            self._words.to_bytes(alive, remap),
            self._pieces.to_bytes(alive, remap),
            self._chars.to_bytes(alive, remap),
        ])

    @classmethod
    def from_bytes(cls, data: bytes | memoryview) -> BM25Index:
        """Inverse of ``to_bytes``; raises ValueError on anything malformed or older."""
        view = memoryview(data)
        if len(view) < _HEAD.size:
            raise ValueError("truncated BM25 index")
        magic, n_rows = _HEAD.unpack_from(view)
        if magic != _MAGIC:
            raise ValueError("not a BM25 index of this version")
        off = _HEAD.size
        if off + 17 * n_rows > len(view):
            raise ValueError("truncated BM25 index")
        keys = np.frombuffer(view, "<i8", n_rows, off)
        groups = np.frombuffer(view, "<i8", n_rows, off + 8 * n_rows)
        cards = np.frombuffer(view, "u1", n_rows, off + 16 * n_rows)
        off += 17 * n_rows
        words, off = FieldPostings.from_view(view, off, n_rows, False)
        pieces, off = FieldPostings.from_view(view, off, n_rows, True)
        chars, off = FieldPostings.from_view(view, off, n_rows, False, filled_average=True)
        if off != len(view):
            raise ValueError("inconsistent BM25 index")
        index = cls()
        index._grow(n_rows)
        for fld in (words, pieces, chars):
            fld.grow(len(index._row_key))
        index._words, index._pieces, index._chars = words, pieces, chars
        index._row_key[:n_rows] = keys
        index._row_group[:n_rows] = groups
        index._row_gidx[:n_rows] = index._dense_groups(groups.tolist())
        index._row_card[:n_rows] = cards.astype(np.bool_)
        index._row_alive[:n_rows] = True
        index._n_slots = n_rows
        index._key_row = dict(zip(keys.tolist(), range(n_rows), strict=True))
        return index
