"""Offline extractive answers: the sentences of the retrieved chunks that best
support the question, each with its `[S#]`, labelled extractive, never as generated.

Sentences are split at Chinese 。！？； and line breaks, and at English . ! ? before a
space. Each sentence is scored by the question terms it shares (Jieba search-mode terms,
folded, stopwords dropped), weighted by how rare each term is among the candidate
sentences, plus the question's character bigrams it contains (robust where Jieba cuts the
question and the passage differently), with a small prior for higher-ranked sources. The
best sentence is taken first; sentences right after it in the same source come next when
the budget allows (answers often follow the sentence that repeats the question's words),
then the next best sentences, all within ``max_chars``.

A question that asks for an amount (how many / how long / what temperature / 多少 / 幾 / 多久 /
哪一年 …) also rewards sentences that state a number, more when a unit follows it ("250 °C",
"20 minutes", "九十二度"), so the sentence with the figure beats one that only repeats the
question's words. A single line break inside hard-wrapped prose does not end a sentence.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..notes import EXTRACTIVE as EXTRACTIVE_NOTE
from ..notes import NO_SHARED_WORD
from ..text.offsets import char_span_to_bytes
from ..text.segment import fold, search_terms
from .types import EXTRACTIVE, INSUFFICIENT, Answer, Citation, ExtractedSentence, Source

MAX_SENTENCES = 3
MAX_CHARS = 200
TOP_SOURCES = 3
RANK_PRIOR = 0.25  # score lost per rank below the first source
BIGRAM_WEIGHT = 0.5
QUANTITY_WEIGHT = 0.3  # a number with a unit, in answer to a question asking for an amount (half without a unit)
WRAP_COLUMNS = 40  # a line at least this wide that stops mid-sentence was wrapped, not ended

_CLOSERS = "\"'”’」』）)]】》〉"
# A blank line ends a sentence; a single line break does too unless it only wraps prose
# (see _wraps).
_SENTENCE_END = re.compile(
    rf"(?:[。！？；!?;]+|(?<=[^\d])\.(?=\s|$)|…+)[{re.escape(_CLOSERS)}]*|\n(?:[ \t]*\n)+|\n")
_BLOCK_START = re.compile(r"[ \t]*(?:[-*+>|#]|\d+[.)])\s")  # a list item, quote, table row or heading
_LINE_END_STOPS = set("。！？；!?;:：.…" + _CLOSERS)
_QUANTITY_QUESTION = re.compile(
    r"\bhow\s+(?:many|much|long|far|old|big|large|tall|high|hot|cold|warm|heavy|often|fast|deep|wide|soon)\b"
    r"|\b(?:what|which|at\s+what)\s+(?:temperature|temp|time|year|date|day|age|size|price|cost|percentage|"
    r"percent|number|amount|weight|length|distance|speed|dose|ratio|rate|height|depth|volume)s?\b|\bwhen\b"
    r"|多少|幾|几|多久|多長|多长|多大|多高|多重|多遠|多远|多快|多深|多寬|多宽|何時|何时|什麼時候|什么时候|哪一?年|哪一?天"
    r"|溫度|温度|價格|价格|比例", re.IGNORECASE)
_CJK_NUMERAL = "零〇一二三四五六七八九十百千萬万億亿兩两"
_CJK_MEASURE = "度年月日號号歲岁個个元圓圆塊块公克斤里米分秒時时天週周次倍層层件名位人%％"
_NUMBER = re.compile(rf"\d|[{_CJK_NUMERAL}]+[{_CJK_MEASURE}]")
_NUMBER_WITH_UNIT = re.compile(
    rf"\d[\d.,]*\s?(?:[%‰°℃℉]|[A-Za-zµμ]{{1,8}}\b|[{_CJK_MEASURE}])|[{_CJK_NUMERAL}]+[{_CJK_MEASURE}]")
_PUNCT_ONLY = re.compile(r"^[\W_]*$")
_HEADING = re.compile(r"#{1,6}\s")  # a Markdown heading repeats the title: not a supporting sentence


@dataclass(frozen=True)
class Sentence:
    source_index: int
    start: int  # character offsets in the source text
    end: int
    text: str


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _wraps(text: str, pos: int) -> bool:
    """Whether the single line break at `pos` only wraps a sentence: the next line goes on in
    lower case ("It is\nready"), or a wide line stops mid-sentence and the next line goes on
    with a letter or digit of the same script ("… and local\nJR lines"), not with a list item
    or heading."""
    rest = text[pos + 1:].lstrip(" \t")
    if not rest or not rest[0].isalnum() or _BLOCK_START.match(text, pos + 1):
        return False
    if "a" <= rest[0] <= "z":
        return True
    line = text[text.rfind("\n", 0, pos) + 1:pos].rstrip()
    return bool(line) and line[-1] not in _LINE_END_STOPS and _width(line) >= WRAP_COLUMNS \
        and not line.lstrip().startswith("#") and _is_cjk(line[-1]) == _is_cjk(rest[0])  # one script across it


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character ranges of the sentences of `text` (zh and en), whitespace trimmed."""
    ranges: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if m.group() == "\n" and _wraps(text, m.start()):
            continue
        end = m.end()
        ranges.append((start, end))
        start = end
    if start < len(text):
        ranges.append((start, len(text)))
    out: list[tuple[int, int]] = []
    for a, b in ranges:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a and not _PUNCT_ONLY.match(text[a:b]) and not _HEADING.match(text, a):
            out.append((a, b))
    return out


def _bigrams(folded: str) -> set[str]:
    chars = [c for c in folded if c.isalnum()]  # CJK ideographs are alphanumeric too
    return {chars[i] + chars[i + 1] for i in range(len(chars) - 1)}


def _terms(text: str) -> set[str]:
    try:
        return set(search_terms(text))
    except Exception:  # a sentence over the query limits: score it on bigrams alone
        return set()


@dataclass(frozen=True)
class Scored:
    sentence: Sentence
    score: float


def score_sentences(question: str, sources: Sequence[Source], top_sources: int = TOP_SOURCES) -> list[Scored]:
    """Every sentence of the first `top_sources` sources with its support score."""
    q_terms = _terms(question)
    q_bigrams = _bigrams(fold(question))
    sentences: list[Sentence] = []
    for si, source in enumerate(sources[:top_sources]):
        for a, b in split_sentences(source.text):
            sentences.append(Sentence(si, a, b, source.text[a:b]))
    if not sentences:
        return []
    s_terms = [_terms(s.text) & q_terms for s in sentences]
    s_bigrams = [_bigrams(fold(s.text)) & q_bigrams for s in sentences]
    df = Counter(t for ts in s_terms for t in ts)
    n = len(sentences)
    idf = {t: math.log(1 + n / df[t]) for t in df}
    max_terms = sum(math.log(1 + n) for _ in q_terms) or 1.0
    wants_amount = bool(_QUANTITY_QUESTION.search(question))
    out = []
    for s, ts, bs in zip(sentences, s_terms, s_bigrams, strict=True):
        term_score = sum(idf[t] for t in ts) / max_terms
        bigram_score = len(bs) / len(q_bigrams) if q_bigrams else 0.0
        score = term_score + BIGRAM_WEIGHT * bigram_score
        if wants_amount and score > 0:
            score += quantity_score(s.text)
        out.append(Scored(s, score - RANK_PRIOR * s.source_index))
    return out


def quantity_score(sentence: str) -> float:
    """What a sentence earns for stating an amount: a number with its unit, or a bare number."""
    if _NUMBER_WITH_UNIT.search(sentence):
        return QUANTITY_WEIGHT
    return QUANTITY_WEIGHT / 2 if _NUMBER.search(sentence) else 0.0


def select(scored: list[Scored], max_sentences: int = MAX_SENTENCES, max_chars: int = MAX_CHARS) -> list[Scored]:
    """Best sentence, then its followers in the same source, then the next best; in budget."""
    if not scored:
        return []
    ranked = sorted(scored, key=lambda x: -x.score)
    best = ranked[0]
    if best.score <= 0:
        return []
    chosen = [best]
    used = len(best.sentence.text)
    order = {id(x): i for i, x in enumerate(scored)}
    position = order[id(best)]
    follower = scored[position + 1] if position + 1 < len(scored) else None
    queue = []
    if follower is not None and follower.sentence.source_index == best.sentence.source_index:
        queue.append(follower)
    queue += [x for x in ranked[1:] if x.score > 0]
    for cand in queue:
        if len(chosen) >= max_sentences:
            break
        if any(c is cand for c in chosen) or used + len(cand.sentence.text) > max_chars:
            continue
        chosen.append(cand)
        used += len(cand.sentence.text)
    return chosen


def one_line(text: str) -> str:
    """A wrapped sentence as one line: a break between two CJK characters disappears, any
    other run of whitespace becomes one space."""
    def join(m: re.Match[str]) -> str:
        before, after = text[m.start() - 1:m.start()], text[m.end():m.end() + 1]
        return "" if "\n" in m.group() and _is_cjk(before) and _is_cjk(after) else " "

    return re.sub(r"\s+", join, text).strip()


def _is_cjk(ch: str) -> bool:
    return bool(ch) and unicodedata.east_asian_width(ch) in "WF"


def extract_answer(question: str, sources: Sequence[Source], *, max_sentences: int = MAX_SENTENCES,
                   max_chars: int = MAX_CHARS) -> Answer:
    """The extractive answer: ≤ `max_sentences` sentences, each followed by its `[S#]`."""
    picked = select(score_sentences(question, sources), max_sentences, max_chars)
    if not picked:
        return Answer(INSUFFICIENT, "", sources=list(sources),
                      notes=[NO_SHARED_WORD])
    # Present them in reading order: source rank, then position in the source.
    picked.sort(key=lambda x: (x.sentence.source_index, x.sentence.start))
    sentences: list[ExtractedSentence] = []
    citations: dict[str, Citation] = {}
    for p in picked:
        source = sources[p.sentence.source_index]
        b0, b1 = char_span_to_bytes(source.text, p.sentence.start, p.sentence.end, base=source.byte_start)
        sentences.append(ExtractedSentence(source.label, p.sentence.text, source.record_id, source.revision,
                                           b0, b1, round(p.score, 4)))
        citations.setdefault(source.label, Citation.of(source))
    text = " ".join(f"{one_line(s.text)} [{s.label}]" for s in sentences)
    return Answer(EXTRACTIVE, text, citations=list(citations.values()), sources=list(sources), sentences=sentences,
                  notes=[EXTRACTIVE_NOTE])
