"""A BM25 field's vocabulary: term → dense term number, and back for the snapshot.

Two kinds with one interface. Words are kept in a dict (any string). The CJK pieces are
always two characters, and there are many of them (hundreds of thousands in a large Chinese
vault): as Python strings in a dict they cost ~150 bytes each, most of the field's memory.
So a piece is held as one int64 code in numpy arrays (its UTF-32 bytes read as one
little-endian number: the first code point in the low 32 bits, the second above), ~24 bytes
a term, looked up with a binary search.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

import numpy as np


class Vocabulary(Protocol):
    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[str]: ...

    def ids(self, terms: Sequence[str]) -> np.ndarray:
        """Each term's number (int64), new terms numbered after the known ones."""
        ...

    def lookup(self, terms: Sequence[str]) -> list[int | None]:
        """Each term's number, None for a term not held (nothing is added)."""
        ...

    def joined(self, ids: np.ndarray) -> bytes:
        """UTF-8 of the terms numbered ``ids``, NUL-separated (the snapshot's vocabulary)."""
        ...

    def nbytes(self) -> int:
        """About what the vocabulary holds in memory (benchmarks)."""
        ...


class WordVocabulary:
    def __init__(self, terms: Sequence[str] = ()) -> None:
        self.terms: list[str] = list(terms)
        self.index: dict[str, int] = {t: i for i, t in enumerate(self.terms)}

    def __len__(self) -> int:
        return len(self.terms)

    def __iter__(self) -> Iterator[str]:
        return iter(self.terms)

    def ids(self, terms: Sequence[str]) -> np.ndarray:
        index = self.index
        # new terms numbered in order of first use (no sort: ~a tenth of a bulk build)
        fresh = [t for t in dict.fromkeys(terms) if t not in index]
        index.update(zip(fresh, range(len(self.terms), len(self.terms) + len(fresh)), strict=True))
        self.terms.extend(fresh)
        return np.fromiter(map(index.__getitem__, terms), np.int64, len(terms))

    def lookup(self, terms: Sequence[str]) -> list[int | None]:
        return [self.index.get(t) for t in terms]

    def joined(self, ids: np.ndarray) -> bytes:
        return "\x00".join([self.terms[i] for i in ids.tolist()]).encode("utf-8")

    @classmethod
    def from_joined(cls, blob: bytes, n_terms: int) -> WordVocabulary:
        terms = blob.decode("utf-8").split("\x00") if n_terms else []
        if len(terms) != n_terms:
            raise ValueError("inconsistent BM25 index")
        return cls(terms)

    def nbytes(self) -> int:
        import sys

        return (sys.getsizeof(self.index) + sys.getsizeof(self.terms)
                + sum(sys.getsizeof(t) for t in self.terms))


_SENTINEL = np.iinfo(np.int64).max  # above every code (a code point needs 21 bits: codes < 2**53)


class PairVocabulary:
    """Two-character terms as int64 codes: ``codes`` in term-number order, plus the same codes
    sorted (``search_codes``) with their numbers (``search_ids``) for the binary search."""

    def __init__(self, codes: np.ndarray | None = None) -> None:
        self.codes = np.zeros(0, np.int64) if codes is None else codes.astype(np.int64)
        order = np.argsort(self.codes, kind="stable")
        self._sorted(self.codes[order], order.astype(np.int64))

    def _sorted(self, codes: np.ndarray, ids: np.ndarray) -> None:
        self.search_codes = np.append(codes, _SENTINEL)
        self.search_ids = np.append(ids, -1)

    def __len__(self) -> int:
        return len(self.codes)

    def __iter__(self) -> Iterator[str]:
        return iter(_decode(self.codes))

    def ids(self, terms: Sequence[str]) -> np.ndarray:
        codes = _encode(terms)
        found, tids = self._find(codes)
        if not found.all():
            fresh = np.unique(codes[~found])
            start = len(self.codes)
            self.codes = np.concatenate([self.codes, fresh])
            all_codes = np.concatenate([self.search_codes[:-1], fresh])
            all_ids = np.concatenate([self.search_ids[:-1], np.arange(start, start + len(fresh), dtype=np.int64)])
            order = np.argsort(all_codes, kind="stable")
            self._sorted(all_codes[order], all_ids[order])
            found, tids = self._find(codes)
        return tids

    def lookup(self, terms: Sequence[str]) -> list[int | None]:
        if not terms:
            return []
        if all(len(t) == 2 for t in terms):  # pieces only (always, from the index's own callers)
            codes = _encode_text("".join(terms))
        else:
            codes = np.array([ord(t[0]) | ord(t[1]) << 32 if len(t) == 2 else -1 for t in terms], np.int64)
        found, tids = self._find(codes)
        return [tid if hit else None for hit, tid in zip(found.tolist(), tids.tolist(), strict=True)]

    def _find(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Whether each code is held, and its number where it is. The search runs over the
        sorted codes plus a sentinel above every code, so no position falls off the end."""
        pos = self.search_codes.searchsorted(codes)
        return self.search_codes.take(pos) == codes, self.search_ids.take(pos)

    def joined(self, ids: np.ndarray) -> bytes:
        codes = self.codes[ids]
        if not len(codes):
            return b""
        points = np.zeros((len(codes), 3), "<u4")
        points[:, :2] = codes.astype("<i8").view("<u4").reshape(-1, 2)
        return points.tobytes().decode("utf-32-le", "surrogatepass")[:-1].encode("utf-8", "surrogatepass")

    @classmethod
    def from_joined(cls, blob: bytes, n_terms: int) -> PairVocabulary:
        text = blob.decode("utf-8")
        if n_terms == 0:
            if text:
                raise ValueError("inconsistent BM25 index")
            return cls()
        # "ab\0cd\0…\0yz": every term two characters, a NUL after each but the last
        if len(text) != 3 * n_terms - 1 or text[2::3].strip("\x00"):
            raise ValueError("inconsistent BM25 index")
        points = np.frombuffer((text + "\x00").encode("utf-32-le", "surrogatepass"), "<u4").reshape(-1, 3)
        if np.any(points[:, :2] == 0):
            raise ValueError("inconsistent BM25 index")
        return cls(np.ascontiguousarray(points[:, :2]).view("<i8").reshape(-1).astype(np.int64))

    def nbytes(self) -> int:
        return self.codes.nbytes + self.search_codes.nbytes + self.search_ids.nbytes


def _encode(terms: Sequence[str]) -> np.ndarray:
    """Codes of two-character terms (the pieces are bigrams by construction; a total length
    check keeps a wrong caller from shifting every code after it)."""
    text = "".join(terms)
    if len(text) != 2 * len(terms):
        raise ValueError("a piece is two characters")
    return _encode_text(text)


def _encode_text(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), "<i8")


def _decode(codes: np.ndarray) -> list[str]:
    text = codes.astype("<i8").tobytes().decode("utf-32-le", "surrogatepass")
    return [text[i:i + 2] for i in range(0, len(text), 2)]
