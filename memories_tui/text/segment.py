"""Segmentation and folding for the lexical index: the same terms for documents and queries.

* ``fold`` maps Traditional Chinese to Simplified (OpenCC ``hk2s`` then ``tw2s``, which
  measured best for Simplified/Traditional/Taiwan/Hong Kong round trips), full-width ASCII
  to ASCII and Latin letters to lower case. It is length-preserving character by character,
  so positions in ``fold(text)`` are positions in ``text``.
* ``index_tokens`` is Jieba search mode (``cut_for_search``: words and their parts) over the
  folded text, punctuation dropped, pure-Latin words stemmed with the Snowball English
  stemmer. Stopwords are kept in the index so a query made only of common words still works.
* ``index_pieces`` are the overlapping two-character pieces of every CJK run (folded): a
  second, lower-weighted field beside the Jieba words, so that a query that is part of a
  longer word (小明 in 王小明, 積電 in 台積電) or that spans two words (竹廠 in 新竹廠區) still
  matches; a third field holds each CJK character, so a one-character query word (燉, 鴨)
  meets every word holding it. ``query_pieces`` gives a query's pieces within the term limit.
* ``phrase_tokens`` is the precise token stream used for contiguous phrase matching:
  every CJK ideograph/kana is its own token, other runs of letters/digits are words
  (folded, not stemmed). Any substring of Chinese text is therefore a contiguous token
  sequence, whatever Jieba would have done with it.
* ``query_terms`` validates the query limits and returns distinct folded terms.

The segmenter is ``rjieba`` (jieba-rs) when importable and ``jieba`` otherwise; it is loaded
once per process, lazily and under a lock (``warm_up`` does it ahead of time; language_tools.py).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from memories_tui.errors import LimitError
from memories_tui.vocabulary import MATCH_MODES, MAX_RESULTS  # noqa: F401  (the index reads them here)

from ..i18n import msg
from .language_tools import OPENCC_CHAIN, backend, set_backend, warm_up  # noqa: F401  (callers use segment.*)
from .language_tools import load_converters as _load_converters
from .language_tools import load_segmenter as _load_segmenter
from .language_tools import stem_words as _stem_words

MAX_QUERY_BYTES = 1024
MAX_QUERY_TERMS = 64

# Lucene's English stopword list (the one bm25s calls "en").
STOPWORDS_EN = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)
# Chinese function words and question words that carry no topic (folded/Simplified forms).
STOPWORDS_ZH = frozenset(
    "的 了 是 在 和 与 及 或 也 都 而 之 其 这 那 这个 那个 这些 那些 被 把 为 对 由 从 以 于 "
    "吗 呢 吧 啊 呀 哪 哪个 哪些 哪里 哪儿 什么 谁 怎么 怎样 如何 几 多少 为什么 着 过 "
    "就 还 又 等 所 该 此".split()
)
STOPWORDS = STOPWORDS_EN | STOPWORDS_ZH

# Pieces FTS5's unicode61 tokenizer keeps as tokens: letters and numbers (no underscore).
_WORD_PIECE = re.compile(r"[^\W_]+")
_CJK_CHARS = (
    "\u3040-\u30ff"  # kana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\U00020000-\U0003134f"
)
_HAS_CJK = re.compile(f"[{_CJK_CHARS}]")
_CJK_SPLIT = re.compile(f"([{_CJK_CHARS}]+)")
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_MARK = re.compile(f"[{_MARKS}]")
_WORD_WITH_MARKS = re.compile(f"[^\\W_]+(?:[{_MARKS}]+[^\\W_]*)*")

# Full-width ASCII (U+FF01..U+FF5E) to ASCII, ideographic space to space.
_WIDTH_TABLE = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)}
_WIDTH_TABLE[0x3000] = 0x20
_WIDE = re.compile("[\uff01-\uff5e\u3000]")
# ASCII letters and digits kept, every other byte a space: ``[^\W_]+`` of ASCII text as a
# bytes.translate + split, ~2x faster than the regex on English chunks.
_ASCII_WORD_BYTES = bytes(c if chr(c).isalnum() and c < 128 else 32 for c in range(256))


def _convert_script(text: str) -> str:
    if text.isascii() or not _HAS_CJK.search(text):
        return text
    out = text
    for conv in _load_converters():
        out = conv.convert(out)
    if len(out) == len(text):
        return out
    # A phrase rule changed the length: fall back to character-by-character conversion.
    chars = []
    for ch in text:
        c = ch
        for conv in _load_converters():
            c = conv.convert(c)
        chars.append(c if len(c) == 1 else ch)
    return "".join(chars)


def fold(text: str) -> str:
    """Traditional→Simplified, full-width→ASCII, lower case; same length as ``text``."""
    out = _convert_script(text)
    if not out.isascii() and _WIDE.search(out):
        out = out.translate(_WIDTH_TABLE)
    lowered = out.lower()
    if len(lowered) != len(out):
        lowered = "".join(low if len(low := ch.lower()) == 1 else ch for ch in out)
    return lowered


def _strip_marks(piece: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", piece) if not unicodedata.combining(c))


def _latin_words(part: str) -> list[str]:
    """Letter/digit words of a non-CJK stretch; combining marks stay attached to their word."""
    if _MARK.search(part):
        return _WORD_WITH_MARKS.findall(part)
    return _WORD_PIECE.findall(part)


# Kana-block characters that are not letters (゛ ゜ ゠ ・): FTS5 and Latin text treat such
# characters as separators, so Jieba tokens made of them are dropped (or split) too.
_CJK_NON_WORD = re.compile("[\u309b\u309c\u30a0\u30fb]")
# ASCII word -> its index token (Snowball stem when alphabetic, else the word): stemming
# was a third of the indexing time, and vocabularies repeat. Entries are never removed
# (thread-safe reads); past the cap new words are stemmed without being remembered.
_ASCII_TOKEN: dict[str, str] = {}
_ASCII_TOKEN_MAX = 200_000


def _ascii_index_tokens(words: list[str]) -> list[str]:
    cache = _ASCII_TOKEN
    try:
        return list(map(cache.__getitem__, words))
    except KeyError:
        pass
    missing = [w for w in dict.fromkeys(words) if w not in cache]
    alpha = [w for w in missing if w.isalpha()]
    fresh = dict(zip(alpha, _stem_words(alpha), strict=True))
    for w in missing:
        fresh.setdefault(w, w)
    if len(cache) < _ASCII_TOKEN_MAX:
        cache.update(fresh)
        return list(map(cache.__getitem__, words))
    return [fresh.get(w) or cache[w] for w in words]


def _other_index_tokens(words: list[str]) -> list[str]:
    """Index tokens of the words of a non-ASCII, non-CJK stretch (accents stripped when that
    leaves a plain ASCII word, which is then stemmed like any English word)."""
    out = []
    for word in words:
        if not word.isascii():
            bare = _strip_marks(word)
            if bare.isascii() and bare.isalnum():
                word = bare
        out.append(word)
    plain = [i for i, w in enumerate(out) if w.isascii()]
    for i, token in zip(plain, _ascii_index_tokens([out[i] for i in plain]), strict=True):
        out[i] = token
    return out


def _bigrams(run: str, out: list[str], separated: bool | None = None) -> None:
    """Append the overlapping two-character pieces of a CJK run (kana-block separators break
    it; ``separated``: whether the run holds one, when the caller knows)."""
    if separated is None:
        separated = _CJK_NON_WORD.search(run) is not None
    for part in _WORD_PIECE.findall(run) if separated else (run,):
        out.extend(map(str.__add__, part, part[1:]))


def _tokens_from_folded(folded: str, phrase: list[str] | None = None, pieces: list[str] | None = None,
                        chars: list[str] | None = None) -> list[str]:
    """CJK runs go through Jieba search mode; everything else is split into letter/digit words.
    When ``phrase`` is given, the phrase token stream is appended to it in the same pass, and
    likewise the CJK pieces to ``pieces`` and the CJK characters to ``chars``."""
    if folded.isascii():
        words = folded.encode("ascii").translate(_ASCII_WORD_BYTES).decode("ascii").split()
        if phrase is not None:
            phrase.extend(words)
        return _ascii_index_tokens(words)
    cut = _load_segmenter()
    tokens: list[str] = []
    # ASCII words of every Latin stretch are mapped to index tokens in one call at the end
    spans: list[tuple[int, int]] = []
    ascii_words: list[str] = []
    for i, part in enumerate(_CJK_SPLIT.split(folded)):
        if not part:
            continue
        if i % 2:  # a run of CJK characters
            words = cut(part)
            separated = _CJK_NON_WORD.search(part) is not None
            if separated:
                words = [piece for w in words for piece in _WORD_PIECE.findall(w)]
            tokens.extend(words)
            if phrase is not None:
                phrase.extend(part)
            if pieces is not None:
                if separated:
                    _bigrams(part, pieces, True)
                else:
                    pieces.extend(map(str.__add__, part, part[1:]))
            if chars is not None:
                chars.extend(_CJK_NON_WORD.sub("", part) if separated else part)
            continue
        if part.isascii():
            words = part.encode("ascii").translate(_ASCII_WORD_BYTES).decode("ascii").split()
            if words:
                spans.append((len(tokens), len(words)))
                ascii_words.extend(words)
                tokens.extend(words)
        else:
            words = _latin_words(part)
            if words:
                tokens.extend(_other_index_tokens(words))
        if phrase is not None:
            phrase.extend(words)
    if ascii_words:
        mapped = _ascii_index_tokens(ascii_words)
        done = 0
        for start, n in spans:
            tokens[start:start + n] = mapped[done:done + n]
            done += n
    return tokens


def index_tokens(text: str) -> list[str]:
    """Search-mode tokens for indexing and ranking (folded, stemmed, punctuation dropped)."""
    return _tokens_from_folded(fold(text)) if text else []


def _phrase_from_folded(folded: str) -> list[str]:
    out: list[str] = []
    for i, part in enumerate(_CJK_SPLIT.split(folded)):
        if i % 2:
            out.extend(part)
        elif part:
            out.extend(_latin_words(part))
    return out


def phrase_tokens(text: str, folded: str | None = None) -> list[str]:
    """Precise token stream for phrase matching: CJK one character per token, other words whole."""
    return _phrase_from_folded(fold(text) if folded is None else folded) if text else []


def index_and_phrase_tokens(text: str) -> tuple[list[str], list[str]]:
    """``(index_tokens(text), phrase_tokens(text))`` folding and splitting the text only once."""
    phrase: list[str] = []
    return (_tokens_from_folded(fold(text), phrase), phrase) if text else ([], [])


def index_phrase_pieces(text: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """``index_and_phrase_tokens(text)``, the text's CJK pieces (``index_pieces``) and its CJK
    characters (folded, each one a term of the index's characters field), in one pass."""
    if not text:
        return [], [], [], []
    phrase: list[str] = []
    pieces: list[str] = []
    chars: list[str] = []
    return _tokens_from_folded(fold(text), phrase, pieces, chars), phrase, pieces, chars


def index_pieces(text: str) -> list[str]:
    """Overlapping two-character pieces of every CJK run of the folded text, in order."""
    pieces: list[str] = []
    for run in _CJK_SPLIT.split(fold(text))[1::2]:
        _bigrams(run, pieces)
    return pieces


def is_cjk_word(term: str) -> bool:
    """True for a token made of CJK characters (Jieba words of a CJK run)."""
    return bool(term) and _CJK_SPLIT.fullmatch(term) is not None


def single_chars(terms: Sequence[str], pieces: Sequence[str]) -> list[str]:
    """The terms of one CJK character that no query piece holds (the query's character stands
    alone: 燉, 鴨 煮): the characters field meets them wherever they stand."""
    held = set("".join(pieces))
    return [t for t in terms if len(t) == 1 and t not in held and _HAS_CJK.match(t) is not None]


def query_pieces(folded: str, budget: int) -> list[str]:
    """A folded query's distinct CJK pieces in order, at most ``budget`` of them: a query's
    words and pieces together stay within the term limit."""
    pieces: list[str] = []
    for run in _CJK_SPLIT.split(folded)[1::2] if budget > 0 else ():
        _bigrams(run, pieces)
    return list(dict.fromkeys(pieces))[:budget]


_stop_cache: frozenset[str] | None = None


def _stopwords() -> frozenset[str]:
    """Stopwords as they appear in token streams (raw and stemmed forms)."""
    global _stop_cache
    if _stop_cache is None:
        _stop_cache = STOPWORDS | frozenset(_stem_words(sorted(STOPWORDS_EN)))
    return _stop_cache


def check_query_bytes(query: str) -> None:
    if (size := len(query.encode("utf-8", "surrogatepass"))) > MAX_QUERY_BYTES:
        raise LimitError(msg("Query is {size:,} bytes; the limit is {max_query_bytes:,} query bytes.",
                             size=size, max_query_bytes=MAX_QUERY_BYTES))


def _check_terms(count: int) -> None:
    if count > MAX_QUERY_TERMS:
        raise LimitError(msg("Query has {count:,} terms; the limit is {max_query_terms:,} query terms.",
                             count=count, max_query_terms=MAX_QUERY_TERMS))


def query_terms(query: str, folded: str | None = None, pieces: list[str] | None = None) -> list[str]:
    """Validate the query limits and return its distinct folded (and stemmed) terms, in order.

    Raises ``LimitError`` over 1,024 bytes or 64 distinct terms. Stopwords are kept here;
    ``search_terms`` drops them for ranking when other terms remain. ``folded``: ``fold(query)``
    when the caller has it already (folding is most of a Chinese query's segmentation cost);
    then ``pieces`` gets the CJK pieces of the query appended in the same pass.
    """
    check_query_bytes(query)
    tokens = index_tokens(query) if folded is None else _tokens_from_folded(folded, pieces=pieces)
    terms = list(dict.fromkeys(tokens))
    _check_terms(len(terms))
    return terms


def search_terms(query: str, folded: str | None = None, pieces: list[str] | None = None) -> list[str]:
    """``query_terms`` without stopwords (unless the query is nothing but stopwords)."""
    terms = query_terms(query, folded, pieces)
    stops = _stopwords()
    kept = [t for t in terms if t not in stops]
    return kept or terms


def search_terms_and_pieces(query: str, folded: str) -> tuple[list[str], list[str]]:
    """``search_terms`` and ``query_pieces`` in the room the terms leave, from one pass."""
    found: list[str] = []
    terms = search_terms(query, folded, found)
    return terms, list(dict.fromkeys(found))[:max(0, MAX_QUERY_TERMS - len(terms))]


def query_phrase(query: str) -> list[str]:
    """Validate limits and return the phrase token sequence of the raw query."""
    query_terms(query)  # the same byte and term limits as the other modes
    return phrase_tokens(query)
