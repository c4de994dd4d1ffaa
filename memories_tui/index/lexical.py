"""In-memory BM25 index over chunks.

* ``any``/``all`` queries are ranked by ``bm25.BM25Index``: Jieba search-mode tokens
  (folded, English stemmed) of title, body and metadata weighted 5/1/2 (2/1/2 for a title
  without CJK: weights.py), scored with FTS5's bm25 formula in numpy (~10x less time than FTS5). A row's
  length counts its tokens plus its distinct tokens, as the former FTS5 table with a
  zero-weight "terms" column did, so rankings did not move. Beside the words, a second
  field holds every CJK run's overlapping two-character pieces (same 5/1/2 columns, its own
  statistics), scored at PIECE_WEIGHT: a query that is part of a word (小明 → 王小明) or
  spans two (竹廠 → 新竹廠區) matches through them, and a whole-word match still ranks first
  at equal frequency, because it scores as a word and as pieces. A third field holds each
  CJK character (same columns), scored at CHAR_WEIGHT for query words of one CJK character
  no query piece holds (燉 meets 燉煮, 鴨 烤鴨; as a word, in a title or repeated it ranks
  higher). ``all`` accepts a word met by its pieces or such a character by the characters
  field; one inside a longer query run (竹 of 廠區竹) is met there too, ranked after the rows
  meeting it as a word or through a query piece (``text.query.word_needs``).
* ``phr(title, body, meta)`` is an SQLite FTS5 table holding the precise phrase stream (one
  token per CJK character, whole Latin words, folded, not stemmed) and ranks ``phrase``
  queries with ``bm25(phr, 5.0, 1.0, 2.0)``. A phrase query is the raw query's phrase
  stream as one FTS5 phrase, so any contiguous Chinese substring, English word sequence or
  mixed sequence matches regardless of how Jieba would cut it.

User text never reaches ``MATCH`` raw: the phrase is a double-quoted FTS5 string with
internal quotes doubled, and its tokens only ever contain letters and digits anyway.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

from memories_tui.errors import LimitError, UsageError
from memories_tui.index.bm25 import BM25Index, BM25Row
from memories_tui.text import segment
from memories_tui.text.query import Query, word_needs
from memories_tui.text.segment import MATCH_MODES, MAX_RESULTS
from memories_tui.vocabulary import DEFAULT_MATCH_MODE, MATCH_ALL, MATCH_ANY, MATCH_PHRASE, MatchMode

from ..i18n import msg
from .weights import (
    CHAR_WEIGHT,
    PIECE_WEIGHT,
    WEIGHTS,
    row_frequencies,
    title_weight,
    without_pieces,
)

# Two-part snapshot: the BM25 part is needed by the first search after unlock, the phrase
# part (the FTS5 image, ~2/3 of the bytes) only by phrase queries and writes, so it is
# loaded on first use. Both carry one random build id, so parts of different builds never mix.
_MAIN_MAGIC = b"MLB3"
_PHRASE_MAGIC = b"MLP3"
_BUILD_ID = 16
_TOKENIZE = "unicode61 remove_diacritics 2"
# Merge the FTS5 b-trees after this many inserted/removed rows (faster queries).
_OPTIMIZE_AFTER = 256


@dataclass(frozen=True)
class LexicalDoc:
    key: int
    title: str
    body: str
    meta: str
    is_card: bool
    group: int | None = None  # chunks of one record share it (``search(per_group=True)``)


class LexicalHit(NamedTuple):
    """A typed pair; a NamedTuple because a 100-hit query builds 100 of them (a frozen
    dataclass cost a quarter of such a query)."""

    key: int
    score: float


# LexicalHit from a (key, score) pair without NamedTuple's Python-level __new__ (a third of
# building 100 hits).
_hit = partial(tuple.__new__, LexicalHit)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _check_mode(match_mode: str) -> None:
    if match_mode not in MATCH_MODES:
        raise UsageError(msg("Unknown match mode {match_mode!r}; use one of: {names}.",
                             match_mode=match_mode, names=', '.join(MATCH_MODES)))


def _check_limit(limit: int) -> None:
    if limit > MAX_RESULTS:
        raise LimitError(msg("Requested {limit:,} results; the limit is {max_results} results.",
                             limit=limit, max_results=MAX_RESULTS))
    if limit < 0:
        raise UsageError(msg("The result limit must not be negative."))


def _secure_delete(conn: sqlite3.Connection) -> None:
    # the database is serialized into the vault: freed pages must not keep deleted text
    conn.execute("PRAGMA secure_delete=ON")


def _connect() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    _secure_delete(conn)
    return conn


class LexicalIndex:
    def __init__(self, pieces: bool = True) -> None:
        """``pieces=False`` indexes and scores the words alone, as before the pieces field
        (the benchmarks measure what the pieces cost with it)."""
        self._pieces = pieces
        self._lock = threading.RLock()
        self._conn = _connect()
        self._keys: set[int] = set()
        self._bm25 = BM25Index()
        self._dirty = 0
        # Set by deserialize_parts until the phrase image is loaded (see _ensure_phrase).
        self._phrase_loader: Callable[[], bytes | None] | None = None
        self._phrase_rebuild: Callable[[set[int]], Iterable[LexicalDoc]] | None = None
        self._build_id = b""
        self._phrase_pending: tuple[list[tuple[int, str, str, str]], list[tuple[int, int]]] | None = None
        self._create_schema()

    # -- schema and persistence -------------------------------------------------------

    def _create_schema(self) -> None:
        c = self._conn
        c.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS phr USING fts5(title, body, meta, tokenize='{_TOKENIZE}')")
        c.execute("CREATE TABLE IF NOT EXISTS docs(key INTEGER PRIMARY KEY, card INTEGER NOT NULL)")

    def serialize_parts(self) -> tuple[bytes, bytes]:
        """(BM25 part, phrase part) for ``deserialize_parts``; a fresh build id ties them."""
        with self._lock:
            self._ensure_phrase()
            self._maybe_optimize(force=True)
            build = os.urandom(_BUILD_ID)
            image = self._conn.serialize()
            return (b"".join((_MAIN_MAGIC, build, self._bm25.to_bytes())),
                    b"".join((_PHRASE_MAGIC, build, image)))

    @classmethod
    def deserialize_parts(cls, main: bytes | memoryview, load_phrase: Callable[[], bytes | None],
                          rebuild: Callable[[set[int]], Iterable[LexicalDoc]]) -> LexicalIndex:
        """The BM25 part now; the phrase part through ``load_phrase`` on first use. When that
        part is missing or from another build, ``rebuild(keys)`` gives the documents of those
        keys and the phrase table is built again from them."""
        view = memoryview(main)
        if bytes(view[:4]) != _MAIN_MAGIC or len(view) < 4 + _BUILD_ID:
            raise ValueError("not a lexical index image")
        index = cls()
        with index._lock:
            index._bm25 = BM25Index.from_bytes(view[4 + _BUILD_ID:])
            index._keys = set(index._bm25._key_row)
            index._build_id = bytes(view[4:4 + _BUILD_ID])
            index._phrase_loader, index._phrase_rebuild = load_phrase, rebuild
        return index

    def _ensure_phrase(self) -> None:
        """Make the phrase table current (caller holds the lock): insert the rows of the last
        add(), or load the pending phrase image of a restored index (rebuilt when unusable)."""
        if self._phrase_pending is not None:
            rows_phr, rows_docs = self._phrase_pending
            c = self._conn
            c.execute("BEGIN")
            try:
                c.executemany("INSERT INTO phr(rowid, title, body, meta) VALUES (?, ?, ?, ?)", rows_phr)
                c.executemany("INSERT INTO docs(key, card) VALUES (?, ?)", rows_docs)
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
            self._phrase_pending = None
            self._dirty += len(rows_docs)
        loader, rebuild = self._phrase_loader, self._phrase_rebuild
        if loader is None or rebuild is None:
            return
        data = loader()  # may raise (e.g. the vault was locked): then it is tried again later
        self._phrase_loader = self._phrase_rebuild = None
        head = 4 + _BUILD_ID
        if data is not None and data[:4] == _PHRASE_MAGIC and data[4:head] == self._build_id:
            try:
                self._conn.deserialize(memoryview(data)[head:])
                _secure_delete(self._conn)
                self._create_schema()
                return
            except sqlite3.DatabaseError:
                self._conn.close()
                self._conn = _connect()
                self._create_schema()
        docs = list(rebuild(set(self._keys)))
        rows_phr, rows_docs = [], []
        for d in docs:
            title, body, meta = (" ".join(segment.phrase_tokens(x)) for x in (d.title, d.body, d.meta))
            rows_phr.append((d.key, title, body, meta))
            rows_docs.append((d.key, 1 if d.is_card else 0))
        c = self._conn
        c.execute("BEGIN")
        c.executemany("INSERT INTO phr(rowid, title, body, meta) VALUES (?, ?, ?, ?)", rows_phr)
        c.executemany("INSERT INTO docs(key, card) VALUES (?, ?)", rows_docs)
        c.execute("COMMIT")
        self._dirty += len(rows_phr)

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            self._keys.clear()

    # -- writes -------------------------------------------------------------------------

    def add(self, docs: Iterable[LexicalDoc]) -> None:
        """Index chunks; a key that is already present is replaced."""
        rows_lex = []
        rows_phr = []
        rows_docs = []
        # Chunks of one document repeat its title and metadata: segment each distinct one once.
        seen: dict[str, tuple[list[str], list[str], list[str], list[str]]] = {}

        def tokens_of(text: str) -> tuple[list[str], list[str], list[str], list[str]]:
            got = seen.get(text)
            if got is None:
                got = seen[text] = split(text)
            return got

        split = segment.index_phrase_pieces if self._pieces else without_pieces

        for d in docs:
            key = int(d.key)
            title, ptitle, gtitle, ctitle = tokens_of(d.title)
            body, pbody, gbody, cbody = split(d.body)
            meta, pmeta, gmeta, cmeta = tokens_of(d.meta)
            freqs = row_frequencies(title, body, meta, title_weight(title))
            pieces = row_frequencies(gtitle, gbody, gmeta) if gtitle or gbody or gmeta else {}
            chars = row_frequencies(ctitle, cbody, cmeta) if ctitle or cbody or cmeta else {}
            length = len(title) + len(body) + len(meta) + len(freqs)
            rows_lex.append(BM25Row(key, freqs, length, d.is_card, d.group, pieces,
                                    len(gtitle) + len(gbody) + len(gmeta), chars,
                                    len(ctitle) + len(cbody) + len(cmeta)))
            rows_phr.append((key, " ".join(ptitle), " ".join(pbody), " ".join(pmeta)))
            rows_docs.append((key, 1 if d.is_card else 0))
        if not rows_docs:
            return
        with self._lock:
            self._ensure_phrase()
            replaced = [(r[0],) for r in rows_docs if r[0] in self._keys]
            new_keys = [r[0] for r in rows_docs]
            if len(set(new_keys)) != len(new_keys):
                # Last one wins within one batch.
                last = {r[0]: i for i, r in enumerate(rows_docs)}
                keep = sorted(last.values())
                rows_lex = [rows_lex[i] for i in keep]
                rows_phr = [rows_phr[i] for i in keep]
                rows_docs = [rows_docs[i] for i in keep]
            if replaced:
                c = self._conn
                c.execute("BEGIN")
                try:
                    self._delete_rows(replaced)
                    c.execute("COMMIT")
                except BaseException:
                    c.execute("ROLLBACK")
                    raise
            # The FTS5 phrase rows go in on the next phrase query, write or snapshot: a first
            # BM25 result after a cold build does not wait for them (~1/5 of the build).
            self._phrase_pending = (rows_phr, rows_docs)
            self._keys.update(r[0] for r in rows_docs)
            self._bm25.add(rows_lex)

    def _delete_rows(self, keys: list[tuple[int]]) -> None:
        c = self._conn
        c.executemany("DELETE FROM phr WHERE rowid = ?", keys)
        c.executemany("DELETE FROM docs WHERE key = ?", keys)

    def remove(self, keys: Iterable[int]) -> None:
        with self._lock:
            present = [(int(k),) for k in set(keys) if int(k) in self._keys]
            if not present:
                return
            self._ensure_phrase()
            c = self._conn
            c.execute("BEGIN")
            try:
                self._delete_rows(present)
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
            self._keys.difference_update(k for (k,) in present)
            self._bm25.remove(k for (k,) in present)
            self._dirty += len(present)

    def _maybe_optimize(self, force: bool = False) -> None:
        if self._dirty and (force or self._dirty >= _OPTIMIZE_AFTER):
            self._conn.execute("INSERT INTO phr(phr) VALUES ('optimize')")
            self._dirty = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._keys)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._keys

    # -- queries ------------------------------------------------------------------------

    def _phrase_expression(self, query: str | Query) -> str | None:
        """The FTS5 MATCH string of a ``phrase`` query, or None when nothing usable is left."""
        tokens = list(query.phrase) if isinstance(query, Query) else segment.query_phrase(query)
        return _quote(" ".join(tokens)) if tokens else None

    def _terms(self, query: str | Query) -> tuple[list[str], list[str], list[str]]:
        """The query's words, CJK pieces (together within the term limit) and one-character words."""
        if isinstance(query, Query):
            if not self._pieces:
                return list(query.terms), [], []
            return list(query.terms), list(query.pieces), list(query.chars)
        segment.check_query_bytes(query)
        folded = segment.fold(query)
        if not self._pieces:
            return segment.search_terms(query, folded), [], []
        terms, pieces = segment.search_terms_and_pieces(query, folded)
        return terms, pieces, segment.single_chars(terms, pieces)

    def search(
        self, query: str | Query, match_mode: MatchMode = DEFAULT_MATCH_MODE, limit: int = 10, cards_only: bool = False,
        per_group: bool = False,
    ) -> list[LexicalHit]:
        """Best chunks first; score is the BM25 score (FTS5's bm25() negated: higher is better).
        With a parsed `Query`, its terms and match mode are used and `match_mode` is ignored.
        ``per_group``: only the best chunk of each group (record), ``limit`` groups: a record
        ranks by its best chunk however deep that is, not only within the best ``limit`` chunks."""
        if isinstance(query, Query):
            match_mode = query.match_mode
        _check_mode(match_mode)
        _check_limit(limit)
        if match_mode != MATCH_PHRASE:
            terms, pieces, chars = self._terms(query)
            if not terms or limit == 0:
                return []
            need = word_needs(terms, pieces, chars) if match_mode == MATCH_ALL else None
            with self._lock:
                ranked = self._bm25.top_k(terms, match_mode, limit, cards_only, per_group, pieces, PIECE_WEIGHT, need,
                                          chars, CHAR_WEIGHT)
            return list(map(_hit, ranked))
        match = self._phrase_expression(query)
        if match is None or limit == 0:
            return []
        w = ", ".join(str(x) for x in WEIGHTS)
        # The card filter is a correlated lookup so that FTS5 always drives the query.
        card = " AND (SELECT card FROM docs WHERE key = phr.rowid) = 1" if cards_only else ""
        sql = f"SELECT rowid, bm25(phr, {w}) AS s FROM phr WHERE phr MATCH ?{card} ORDER BY s, rowid LIMIT ?"
        with self._lock:
            self._ensure_phrase()
            self._maybe_optimize()
            if not per_group:
                rows = self._conn.execute(sql, (match, limit)).fetchall()
            else:  # read in rank order until `limit` groups are seen
                rows, seen = [], set()
                for key, score in self._conn.execute(sql, (match, -1)):
                    group = self._bm25.group_of(int(key))
                    if group not in seen:
                        seen.add(group)
                        rows.append((key, score))
                        if len(rows) == limit:
                            break
        return [LexicalHit(key=int(k), score=-float(s)) for k, s in rows]

    def rarity(self, terms: list[str]) -> list[float]:
        """Each folded term's rarity here (``BM25Index.rarity``): what weighs an answer's terms."""
        with self._lock:
            return self._bm25.rarity(terms)

    def matching_keys(self, query: str | Query, match_mode: MatchMode = DEFAULT_MATCH_MODE) -> set[int] | None:
        """Keys of every chunk the query matches under a strict mode; None for ``any``."""
        if isinstance(query, Query):
            match_mode = query.match_mode
        _check_mode(match_mode)
        if match_mode == MATCH_ANY:
            if not isinstance(query, Query):
                segment.query_terms(query)  # same limits as search (a Query was checked when parsed)
            return None
        if match_mode == MATCH_ALL:
            terms, pieces, chars = self._terms(query)
            with self._lock:
                return self._bm25.matching(terms, word_needs(terms, pieces, chars)) if terms else set()
        match = self._phrase_expression(query)
        if match is None:
            return set()
        with self._lock:
            self._ensure_phrase()
            self._maybe_optimize()
            rows = self._conn.execute("SELECT rowid FROM phr WHERE phr MATCH ?", (match,)).fetchall()
        return {int(r[0]) for r in rows}
