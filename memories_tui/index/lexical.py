"""In-memory SQLite FTS5 BM25 index over chunks (R-LEX-1 … R-LEX-4).

Two FTS5 tables share the caller's chunk key as rowid:

* ``lex(title, body, meta, terms)`` holds Jieba search-mode tokens (folded, English
  stemmed) and is ranked with ``bm25(lex, 5.0, 1.0, 2.0, 0.0)``; ``any``/``all`` queries run
  here. ``terms`` (weight 0) lists each row's distinct tokens once; it lets a big ``any``
  query score only the rows that hold one of its rarer terms (see ``_any_expression``).
  Note FTS5's bm25 normalises by the whole row's length, so ``terms`` takes part in length
  normalisation (measured neutral to slightly positive on SciFact and CMRC).
* ``phr(title, body, meta)`` holds the precise phrase stream (one token per CJK character,
  whole Latin words, folded, not stemmed). A ``phrase`` query is the raw query's phrase
  stream as one FTS5 phrase, so any contiguous Chinese substring, English word sequence or
  mixed sequence matches regardless of how Jieba would cut it.

User text never reaches ``MATCH`` raw: every term is a double-quoted FTS5 string with
internal quotes doubled, and terms only ever contain letters and digits anyway.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from memories_tui.errors import LimitError, UsageError
from memories_tui.text import segment
from memories_tui.text.query import Query
from memories_tui.text.segment import MATCH_MODES, MAX_RESULTS

WEIGHTS = (5.0, 1.0, 2.0)  # title, body, meta (lex has a fourth, zero-weight "terms" column)
# "any" queries on big indexes: terms are taken rarest first until their summed document
# frequency reaches this fraction of the rows; only rows holding one of those terms are
# scored (with every term), which keeps bm25() from scoring most of the table.
_DRIVER_FRACTION = 0.05
_DRIVER_MIN_ROWS = 2000
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


@dataclass(frozen=True)
class LexicalHit:
    key: int
    score: float


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _check_mode(match_mode: str) -> None:
    if match_mode not in MATCH_MODES:
        raise UsageError(f"Unknown match mode {match_mode!r}; use one of: {', '.join(MATCH_MODES)}.")


def _check_limit(limit: int) -> None:
    if limit > MAX_RESULTS:
        raise LimitError(f"Requested {limit:,} results; the limit is {MAX_RESULTS} results.")
    if limit < 0:
        raise UsageError("The result limit must not be negative.")


class LexicalIndex:
    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        # the database is serialized into the vault: freed pages must not keep deleted text
        self._conn.execute("PRAGMA secure_delete=ON")
        self._keys: set[int] = set()
        self._df: Counter[str] = Counter()  # term -> number of rows holding it (for query planning)
        # After deserialize the counts are fetched per term on first use (a full vocabulary
        # scan costs ~0.15 s on 10k chunks, a term lookup ~0.07 ms); add/remove keep
        # adjusting _df, and a lookup reads the live table, so both stay exact.
        self._df_known: set[str] | None = None  # None: every count in _df is exact
        self._dirty = 0
        self._create_schema()

    # -- schema and persistence -------------------------------------------------------

    def _create_schema(self) -> None:
        c = self._conn
        c.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS lex USING fts5(title, body, meta, terms, tokenize='{_TOKENIZE}')"
        )
        c.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS phr USING fts5(title, body, meta, tokenize='{_TOKENIZE}')")
        c.execute("CREATE TABLE IF NOT EXISTS docs(key INTEGER PRIMARY KEY, card INTEGER NOT NULL)")

    def serialize(self) -> bytes:
        with self._lock:
            self._maybe_optimize(force=True)
            return bytes(self._conn.serialize())

    @classmethod
    def deserialize(cls, data: bytes) -> LexicalIndex:
        index = cls()
        with index._lock:
            index._conn.deserialize(data)
            index._create_schema()
            index._keys = {row[0] for row in index._conn.execute("SELECT key FROM docs")}
            index._conn.execute("CREATE VIRTUAL TABLE temp.lexv USING fts5vocab(main, lex, 'row')")
            index._df_known = set()
        return index

    def _doc_freq(self, term: str) -> int:
        if self._df_known is not None and term not in self._df_known:
            row = self._conn.execute("SELECT doc FROM temp.lexv WHERE term = ?", (term,)).fetchone()
            self._df[term] = row[0] if row else 0
            self._df_known.add(term)
        return self._df.get(term, 0)

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
        seen: dict[str, tuple[list[str], list[str]]] = {}

        def tokens_of(text: str) -> tuple[list[str], list[str]]:
            got = seen.get(text)
            if got is None:
                got = seen[text] = segment.index_and_phrase_tokens(text)
            return got

        for d in docs:
            key = int(d.key)
            title, ptitle = tokens_of(d.title)
            body, pbody = segment.index_and_phrase_tokens(d.body)
            meta, pmeta = tokens_of(d.meta)
            distinct = " ".join(dict.fromkeys(title + body + meta))
            rows_lex.append((key, " ".join(title), " ".join(body), " ".join(meta), distinct))
            rows_phr.append((key, " ".join(ptitle), " ".join(pbody), " ".join(pmeta)))
            rows_docs.append((key, 1 if d.is_card else 0))
        if not rows_docs:
            return
        with self._lock:
            c = self._conn
            c.execute("BEGIN")
            try:
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
                    self._delete_rows(replaced)
                c.executemany("INSERT INTO lex(rowid, title, body, meta, terms) VALUES (?, ?, ?, ?, ?)", rows_lex)
                c.executemany("INSERT INTO phr(rowid, title, body, meta) VALUES (?, ?, ?, ?)", rows_phr)
                c.executemany("INSERT INTO docs(key, card) VALUES (?, ?)", rows_docs)
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
            self._keys.update(r[0] for r in rows_docs)
            for r in rows_lex:
                self._df.update(r[4].split())
            self._dirty += len(rows_docs)

    def _delete_rows(self, keys: list[tuple[int]]) -> None:
        c = self._conn
        for (key,) in keys:
            row = c.execute("SELECT terms FROM lex WHERE rowid = ?", (key,)).fetchone()
            if row:
                self._df.subtract(row[0].split())
        c.executemany("DELETE FROM lex WHERE rowid = ?", keys)
        c.executemany("DELETE FROM phr WHERE rowid = ?", keys)
        c.executemany("DELETE FROM docs WHERE key = ?", keys)

    def remove(self, keys: Iterable[int]) -> None:
        with self._lock:
            present = [(int(k),) for k in set(keys) if int(k) in self._keys]
            if not present:
                return
            c = self._conn
            c.execute("BEGIN")
            try:
                self._delete_rows(present)
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
            self._keys.difference_update(k for (k,) in present)
            self._dirty += len(present)

    def _maybe_optimize(self, force: bool = False) -> None:
        if self._dirty and (force or self._dirty >= _OPTIMIZE_AFTER):
            self._conn.execute("INSERT INTO lex(lex) VALUES ('optimize')")
            self._conn.execute("INSERT INTO phr(phr) VALUES ('optimize')")
            self._dirty = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._keys)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._keys

    # -- queries ------------------------------------------------------------------------

    def _expression(self, query: str | Query, match_mode: str) -> tuple[str, str, list[str]] | None:
        """(table, MATCH expression, terms) for the query, or None when nothing usable is left.
        A parsed `Query` brings its own terms and match mode (no second segmentation)."""
        if isinstance(query, Query):
            match_mode = query.match_mode
            tokens = list(query.phrase if match_mode == "phrase" else query.terms)
        else:
            _check_mode(match_mode)
            tokens = segment.query_phrase(query) if match_mode == "phrase" else segment.search_terms(query)
        if not tokens:
            return None
        if match_mode == "phrase":
            return "phr", _quote(" ".join(tokens)), tokens
        joiner = " AND " if match_mode == "all" else " OR "
        return "lex", joiner.join(_quote(t) for t in tokens), tokens

    def _any_expression(self, terms: list[str]) -> str:
        """OR of the terms; on big indexes only rows with one of the rarer terms are scored."""
        every = " OR ".join(_quote(t) for t in terms)
        n = len(self._keys)
        if n < _DRIVER_MIN_ROWS or len(terms) < 2:
            return every
        ranked = sorted(terms, key=self._doc_freq)
        budget = _DRIVER_FRACTION * n
        drivers: list[str] = []
        total = 0
        for t in ranked:
            df = self._doc_freq(t)
            if drivers and total + df > budget:
                break
            drivers.append(t)
            total += df
        if len(drivers) == len(terms):
            return every
        # Only rows holding a driver term match (the filter runs on the zero-weight "terms"
        # column, so it adds nothing to the score); every term is still scored once by bm25.
        return "terms : (" + " OR ".join(_quote(t) for t in drivers) + ") AND (" + every + ")"

    def search(
        self, query: str | Query, match_mode: str = "any", limit: int = 10, cards_only: bool = False
    ) -> list[LexicalHit]:
        """Best chunks first; score is the negated FTS5 bm25 (higher is better). With a parsed
        `Query`, its match mode is used and `match_mode` is ignored."""
        if isinstance(query, Query):
            match_mode = query.match_mode
        _check_mode(match_mode)
        _check_limit(limit)
        with self._lock:
            expr = self._expression(query, match_mode)
            if expr is None or limit == 0:
                return []
            table, full, terms = expr
            match = self._any_expression(terms) if match_mode == "any" else full
            w = ", ".join(str(x) for x in WEIGHTS) + (", 0.0" if table == "lex" else "")
            # The card filter is a correlated lookup so that FTS5 always drives the query.
            card = f" AND (SELECT card FROM docs WHERE key = {table}.rowid) = 1" if cards_only else ""
            sql = f"SELECT rowid, bm25({table}, {w}) AS s FROM {table} WHERE {table} MATCH ?{card} ORDER BY s LIMIT ?"
            self._maybe_optimize()
            rows = self._conn.execute(sql, (match, limit)).fetchall()
            if match != full and len(rows) < limit:
                # The rare-term plan found fewer rows than asked for: score every match instead.
                rows = self._conn.execute(sql, (full, limit)).fetchall()
        return [LexicalHit(key=int(k), score=-float(s)) for k, s in rows]

    def matching_keys(self, query: str | Query, match_mode: str = "any") -> set[int] | None:
        """Keys of every chunk the query matches under a strict mode; None for ``any``."""
        if isinstance(query, Query):
            match_mode = query.match_mode
        _check_mode(match_mode)
        if match_mode == "any":
            if not isinstance(query, Query):
                segment.query_terms(query)  # same limits as search (a Query was checked when parsed)
            return None
        expr = self._expression(query, match_mode)
        if expr is None:
            return set()
        table, match, _ = expr
        with self._lock:
            self._maybe_optimize()
            rows = self._conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (match,)).fetchall()
        return {int(r[0]) for r in rows}
