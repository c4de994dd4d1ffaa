"""A search query parsed once: checked, folded and segmented at the boundary.

The same `Query` value then feeds the lexical index, vector-candidate filtering, rerank and
highlighting, so one search runs the segmenter once, and the three panes of the TUI share
one parse (`with_mode`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import LimitError, UsageError
from ..i18n import msg
from ..vocabulary import (
    DEFAULT_LIMIT,
    DEFAULT_MATCH_MODE,
    DEFAULT_MODE,
    MATCH_MODES,
    MATCH_PHRASE,
    MAX_RESULTS,
    MODES,
    MatchMode,
    Mode,
)
from . import segment


@dataclass(frozen=True)
class Query:
    text: str
    mode: Mode
    match_mode: MatchMode
    limit: int
    terms: tuple[str, ...]  # folded search terms (stopwords dropped unless that is all there is)
    phrase: tuple[str, ...]  # the phrase token stream; empty unless match_mode is "phrase"
    folded: str  # the whole query folded (script, width, case), whitespace collapsed
    pieces: tuple[str, ...] = ()  # CJK two-character pieces (any/all), within the term limit
    chars: tuple[str, ...] = ()  # terms of one CJK character no piece holds, met inside words (any/all)

    @property
    def highlight_terms(self) -> tuple[str, ...]:
        """What a hit's text is marked at: the words and the pieces (a piece inside a longer word)."""
        return tuple(dict.fromkeys(self.terms + self.pieces))

    def with_mode(self, mode: str) -> Query:
        """The same parsed query in another search mode (no second segmentation)."""
        checked, _, _ = check_options(mode, self.match_mode, self.limit)
        return dataclasses.replace(self, mode=checked)


def check_options(mode: str, match_mode: str, limit: int) -> tuple[Mode, MatchMode, int]:
    """Mode, match mode and limit, checked before any index or model work (they may come
    from a command line or an AI client as any string); returned as the engine's types."""
    if mode not in MODES:
        raise UsageError(msg("Unknown search mode {mode!r}; use one of {names}.", mode=mode, names=', '.join(MODES)))
    if match_mode not in MATCH_MODES:
        raise UsageError(msg("Unknown match mode {match_mode!r}; use one of {names}.",
                             match_mode=match_mode, names=', '.join(MATCH_MODES)))
    if type(limit) is not int or limit < 1:  # a mistake (usage), not a request over a limit
        raise UsageError(msg("--limit must be a whole number from 1 to {max_results}; got {limit!r}.",
                             max_results=MAX_RESULTS, limit=limit))
    if limit > MAX_RESULTS:
        raise LimitError(msg("--limit {limit} is out of range; at most {max_results} results may be requested "
                             "(and at least 1).", limit=limit, max_results=MAX_RESULTS))
    return mode, match_mode, limit


def parse_query(text: str, *, mode: str = DEFAULT_MODE, match_mode: str = DEFAULT_MATCH_MODE,
                limit: int = DEFAULT_LIMIT) -> Query:
    """Check the request and segment the query text once; raises UsageError / LimitError."""
    mode, match_mode, limit = check_options(mode, match_mode, limit)
    if not text or not text.strip():
        raise UsageError(msg("The query is empty; give some words to search for."))
    segment.check_query_bytes(text)  # before any work
    folded = segment.fold(text)  # once: terms, phrase and the rerank's folded text share it
    pieces: list[str] = []
    if match_mode == MATCH_PHRASE:
        terms = segment.search_terms(text, folded)  # also checks the term limit
        phrase = segment.phrase_tokens(text, folded)
    else:
        terms, pieces = segment.search_terms_and_pieces(text, folded)
        phrase = []
    return Query(text=text, mode=mode, match_mode=match_mode, limit=limit, terms=tuple(terms),
                 phrase=tuple(phrase), folded=" ".join(folded.split()), pieces=tuple(pieces),
                 chars=tuple(segment.single_chars(terms, pieces)) if match_mode != MATCH_PHRASE else ())


def word_needs(terms: Sequence[str], pieces: Sequence[str], chars: Sequence[str] = ()
               ) -> list[tuple[str, tuple[str, ...], tuple[str, ...], bool, bool]]:
    """How ``all`` may meet each query word: as the word itself, or through the query's pieces.
    A CJK word of two or more characters is also met where every piece of it occurs (王小明
    holds 小明 as a piece, not as a word). A single CJK character is met wherever the index's
    characters field holds it, as ``any`` and ``phrase`` meet it: when it stands alone in the
    query (``chars``: 燉, 鴨 煮) like a word (燉 meets 燉煮); inside a longer run of the query
    (淇淋 cut into 淇 and 淋, 竹 of 廠區竹) first where a query piece holding it occurs, then,
    ranked after those rows, inside any word (竹 in 新竹廠區). Latin words are met only as
    themselves."""
    held = set(pieces)
    alone = set(chars)
    needs = []
    for term in terms:
        all_of: tuple[str, ...] = ()
        any_of: tuple[str, ...] = ()
        later = False
        if segment.is_cjk_word(term):
            if len(term) > 1:
                grams = tuple(segment.index_pieces(term)) if held else ()
                all_of = grams if grams and held.issuperset(grams) else ()
            elif term not in alone:
                any_of = tuple(p for p in pieces if term in p)
                later = bool(any_of)
        needs.append((term, all_of, any_of, term in alone, later))
    return needs
