"""Offline extractive answers: the sentences of the retrieved chunks that answer the
question, each with its `[S#]`, labelled extractive, never as generated; or none.

Sentences are split at Chinese 。！？ and line breaks, and at English . ! ? before a space
(not after an initial or a title: Terry A. Gates, Dr.); a semicolon joins clauses. A sentence is matched with the search's analysis: the question's terms (Jieba
search-mode words, folded, English stemmed, stopwords and question words dropped), each
met as a word of the sentence or, for a CJK term, anywhere in it (inside a longer word,
across two: what the search's pieces and characters do). Each term weighs what its rarity in
the vault says (``LexicalIndex.rarity``: BM25's idf), so a shared "long" or 的 counts for
little and a shared name or dish for much. A sentence's support is the weighted share of
the question it holds, a term in its note's title counting as held (and the title's
character bigrams as the sentence's own). Its score adds the
question's character bigrams it holds (robust where Jieba cuts the two differently), the
kind of fact the question asks for (how long → a duration, when → a date, where → a place,
how many → a count: ``question_kind``) and a small prior for higher-ranked sources.

A sentence is cited only when it holds a question term that is not common (rarer than
COMMON_SHARE of the question's rarest term) and its support reaches MIN_SUPPORT; when no
sentence does, the answer is ``insufficient_evidence``. The best sentence is taken first;
the sentence right after it in the same source comes next when the budget allows (answers
often follow the sentence that repeats the question's words), then the next best citable
sentences, all within ``max_chars``. A single line break inside hard-wrapped prose does not
end a sentence.
"""


from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import LimitError
from ..notes import EXTRACTIVE as EXTRACTIVE_NOTE
from ..notes import NO_SUPPORTING_SENTENCE
from ..text.offsets import char_span_to_bytes
from ..text.segment import MAX_QUERY_TERMS, fold, index_tokens, is_cjk_word, query_pieces, search_terms, single_chars
from .question_kind import kinds_asked, states, states_a_number
from .types import EXTRACTIVE, INSUFFICIENT, Answer, Citation, ExtractedSentence, Source

# Each term's rarity in the vault (``LexicalIndex.rarity``).
Rarity = Callable[[list[str]], Sequence[float]]

MAX_SENTENCES = 3
MAX_CHARS = 200
TOP_SOURCES = 3
RANK_PRIOR = 0.25  # score lost per rank below the first source
BIGRAM_WEIGHT = 0.5
KIND_WEIGHT = 0.3  # the kind of fact asked for (a duration for how long …); see question_kind
# A question term in a note's title counts for each of its sentences as if the sentence held
# it: the note is about its title, so the sentence answering about it often names it only by
# 它 / 本魚 / the school (half, as before, preferred the sentences repeating the name: found
# 0.853 -> 0.891 on the half of zh-cmrc2018 not looked at while choosing, declines unchanged).
TITLE_SHARE = 1.0
# When a sentence may be cited: tuned on the first 400 zh-cmrc2018 questions and their
# unanswerable copies (bench/bench_extractive.py), MIN_EVIDENCE then on questions 1000-1800;
# measured on all 3,219 (docs/performance.md):
MIN_SUPPORT = 0.2  # the rarity-weighted share of the question the sentence (and its title) holds
MIN_EVIDENCE = 0.5  # … and its whole chunk with the title
# The question's key terms: rarer than its rarest term's rarity less KEY_GAP. The rarity is
# ln((N + 1) / (n + 0.5)), so the gap is a ratio of row counts whatever the vault's size:
# 1.5 keeps the terms held by at most ~4.5 times as many rows (+0.5) as the rarest.
KEY_GAP = 1.5
MIN_KEY = 0.4  # the weighted share of the key terms the chunk and title must hold
NEXT_SHARE = 0.7  # a further sentence scores at least this share of the best one's score
COMMON_SHARE = 0.3  # a term less rare than this share of the question's rarest term is common
_GLUE = frozenset("是有的了在和与及为被把也都就还又呢吗啊呀吧要会能该得着过")
PIECE_SHARE = 0.8  # a long CJK term met only piece by piece counts at most this much
# Folded starts of Chinese question words (哪支, 什么样, 怎么办, 多少钱 …).
# 甚么 is Taiwan's and Hong Kong's 什么; 何者 / 何人 / 何种 are written Chinese's which / who / what kind.
_ASKING_PREFIXES = ("哪", "什么", "甚么", "怎", "几", "多少", "多久", "多长", "为什么", "为何", "何时", "何处", "何地",
                    "何者", "何人", "何种", "何谓", "何以", "何年", "何日", "何方", "何为", "谁", "啥")
# Words that only make a sentence a question (they say what kind of fact is asked for) or a
# request (介紹一下, 簡述, please explain).
QUESTION_WORDS = ("how what when where which who whom whose why do does did can could would should "
                  "i you we me my your our is are was were much many long often "
                  "多久 多长 多长时间 多少 几 几个 何时 什么 什么时候 哪里 哪儿 哪 哪个 哪些 哪年 哪一年 谁 为何 为什么 "
                  "怎么 怎样 如何 吗 呢 请问 是否 多大 多高 多远 什么样 甚么 甚么时候 何者 何人 何种 何谓 何以 何年 "
                  "何日 何方 何为 为何 么 介绍一下 一下 简述 简要 概述 请 告诉 tell explain describe please")
# How heavy / deep / far at a question's end (有多重, 多深, 得多快) and after "how": they only say
# an amount is asked (question_kind), and Jieba cuts them as words a note seldom holds (多重,
# 有多遠, 有 + 多 + 大), which then weighed as the question's rarest term.
_HOW_MUCH = re.compile(r"[有得]?多[重深宽寬快厚贵貴老远遠高大长長久少胖粗细細轻輕矮短小慢近](?:呢|啊|呀|吗|嗎)?(?=[\s？?。！!]*$)"
                       r"|(?<=\bhow)\s+(?:far|old|big|large|tall|high|heavy|fast|deep|wide|thick|expensive)\b",
                       re.IGNORECASE)
WRAP_COLUMNS = 40  # a line at least this wide that stops mid-sentence was wrapped, not ended

_CLOSERS = "\"'”’」』）)]】》〉"
# A blank line ends a sentence; a single line break does too unless it only wraps prose
# (see _wraps).
# A full stop after an initial (Terry A. Gates) or a title (Dr., St.) ends nothing; after a number,
# only before a capital and when a word comes before the number (_ends_after_number).
_NOT_AN_END = "".join(rf"(?<!\b{w})" for w in ("[A-Z]", "Mr", "Mrs", "Ms", "Dr", "St", "Jr", "Sr", "Prof", "vs", "No"))
# ；and ; join the clauses of one sentence (an answer often lists them: 一是…；二是…).
_SENTENCE_END = re.compile(
    rf"(?:[。！？!?]+|(?<=[^\d]){_NOT_AN_END}\.(?=\s|$)|(?<=\d)\.(?=\s+[A-Z])|…+)[{re.escape(_CLOSERS)}]*"
    r"|\n(?:[ \t]*\n)+|\n")
_BLOCK_START = re.compile(r"[ \t]*(?:[-*+>|#]|\d+[.)])\s")  # a list item, quote, table row or heading
_LINE_END_STOPS = set("。！？；!?;:：.…" + _CLOSERS)
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


def _ends_after_number(text: str, pos: int) -> bool:
    """Whether the full stop at `pos`, after a number and before a capital, ends a sentence
    (in April 2025. The …, at 9:30. Then …): yes when a word comes before the number; not
    after a list's number (Steps: 1. Mix; a line's start) or No. 5."""
    start = pos
    while start > 0 and (text[start - 1].isdigit() or text[start - 1] in ":.,"):
        start -= 1
    return start >= 2 and text[start - 1] in " \t" and text[start - 2].isalpha()


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character ranges of the sentences of `text` (zh and en), whitespace trimmed."""
    ranges: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if m.group() == "\n" and _wraps(text, m.start()) or m.group()[0] == "." \
                and text[m.start() - 1:m.start()].isdigit() and not _ends_after_number(text, m.start()):
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


def _question_terms(question: str) -> list[str]:
    """The question's search terms (folded, stemmed, stopwords dropped) without the words that
    only make it a question (how, when, 多久, 哪裡): those say what kind of fact is wanted."""
    try:
        terms = search_terms(_HOW_MUCH.sub(" ", question))
    except LimitError:  # a question over the query limits: its bigrams alone
        return []
    asking = _question_words()
    dropped = [t for t in terms if t in asking or t.startswith(_ASKING_PREFIXES)]
    # Jieba's search mode also gives a long word's pieces: 哪一位 brings 一位, and a piece of
    # a question word asks as much as the word does
    return [t for t in terms if t not in dropped and not any(t in d for d in dropped)]


_asking: frozenset[str] | None = None


def _question_words() -> frozenset[str]:
    global _asking
    if _asking is None:
        _asking = frozenset(index_tokens(QUESTION_WORDS))
    return _asking


class MatchText:
    """A sentence or title as matching sees it: folded, and its index tokens."""

    __slots__ = ("folded", "tokens")

    def __init__(self, text: str) -> None:
        self.folded = fold(text)
        self.tokens = set(index_tokens(text))

    def holds(self, term: str, inside: bool = True) -> float:
        """1.0 for the term as a word, or (a CJK term) anywhere in the text: inside a longer word
        or across two, as the search's pieces and characters meet it; for a CJK term of three
        or more characters not held whole, the share of its pieces that are (Jieba glues an
        unknown name to its neighbour: 成苏镜宇 where the note says 改名为苏镜宇). ``inside``
        False: a CJK character only as a word (as the search meets a character a query piece holds)."""
        if term in self.tokens:
            return 1.0
        if not is_cjk_word(term) or not (inside or len(term) > 1):
            return 0.0
        if term in self.folded:
            return 1.0
        if len(term) < 3:
            return 0.0
        pieces = [term[i:i + 2] for i in range(len(term) - 1)]
        return sum(1 for p in pieces if p in self.folded) / len(pieces) * PIECE_SHARE


@dataclass(frozen=True)
class Scored:
    sentence: Sentence
    score: float
    support: float = 0.0  # the rarity-weighted share of the question the sentence (and its title) holds
    rare: bool = False  # the sentence itself holds a question term that is not common
    evidence: float = 0.0  # the same share its whole chunk and title hold


def _unglued(terms: list[str], texts: list[MatchText], titles: list[MatchText]) -> tuple[list[str], set[str]]:
    """Jieba glues a function character to a neighbour it does not know (要燉, 晏是, 尚恩有):
    such a term, held nowhere retrieved, stands for what is left without those characters.
    Also the terms so made (a character left alone, met inside words like a query's). A name
    glued to another character (王連字 where the note says 王連，字文儀) stands for the name
    when the retrieved text holds it whole and not the glued term."""
    out: list[str] = []
    made: set[str] = set()
    for term in terms:
        if not is_cjk_word(term) or len(term) < 2 or any(x.holds(term) >= 1.0 for x in texts):
            pass
        elif term[0] in _GLUE or term[-1] in _GLUE:
            term = term.strip("".join(_GLUE))
            made.add(term)
        elif len(term) > 2:
            trimmed = next((t for t in (term[:-1], term[1:]) if any(x.holds(t) >= 1.0 for x in titles)), None)
            if trimmed is not None:
                term = trimmed
                made.add(term)
        if term and term not in out:
            out.append(term)
    return out, made


def _weights(terms: list[str], rarity: Rarity | None) -> list[float]:
    """Each term's rarity in the vault; without an index at hand, every term alike (how rare
    a term is among a few retrieved sentences says little about how common it is)."""
    return [1.0] * len(terms) if rarity is None else list(rarity(terms))


def score_sentences(question: str, sources: Sequence[Source], top_sources: int = TOP_SOURCES,
                    rarity: Rarity | None = None) -> list[Scored]:
    """Every sentence of the first `top_sources` sources with its support score."""
    sentences: list[Sentence] = []
    for si, source in enumerate(sources[:top_sources]):
        for a, b in split_sentences(source.text):
            sentences.append(Sentence(si, a, b, source.text[a:b]))
    if not sentences:
        return []
    q_folded = fold(question)
    q_terms = _question_terms(question)
    q_bigrams = _bigrams(q_folded)
    texts = [MatchText(s.text) for s in sentences]
    titles = [MatchText(source.title) for source in sources[:top_sources]]
    whole = [MatchText(source.text) for source in sources[:top_sources]]
    q_terms, made = _unglued(q_terms, whole + titles, titles)
    # a CJK character is met inside a longer word when it stands alone in the question, as
    # the search meets it (燉 in 燉煮); one inside a longer run of the question only as a word
    loose = made.union(single_chars(q_terms, query_pieces(q_folded, MAX_QUERY_TERMS)))

    def held(x: MatchText, term: str) -> float:
        return x.holds(term, term in loose)

    weights = _weights(q_terms, rarity)
    total = sum(weights) or 1.0
    key = max(weights, default=0.0) - KEY_GAP
    key_total = sum(w for w in weights if w >= key) or 1.0
    evidences = []
    for c, ti in zip(whole, titles, strict=True):
        hold = [max(held(c, t), held(ti, t)) for t in q_terms]
        keys_held = sum(w * h for w, h in zip(weights, hold, strict=True) if w >= key) / key_total
        evidences.append(sum(w * h for w, h in zip(weights, hold, strict=True)) / total
                         if keys_held >= MIN_KEY else 0.0)
    common = COMMON_SHARE * max(weights, default=0.0)
    kinds = kinds_asked(q_folded)
    title_bigrams = [_bigrams(ti.folded) for ti in titles]
    out = []
    for s, x in zip(sentences, texts, strict=True):
        title = titles[s.source_index]
        own = [held(x, t) for t in q_terms]
        support = sum(w * max(mine, TITLE_SHARE * held(title, t))
                      for t, w, mine in zip(q_terms, weights, own, strict=True)) / total
        evidence = evidences[s.source_index]
        rare = any(mine >= 0.5 and w > common for w, mine in zip(weights, own, strict=True))
        bigram_score = len((_bigrams(x.folded) | title_bigrams[s.source_index]) & q_bigrams) / len(q_bigrams) \
            if q_bigrams else 0.0
        score = support + BIGRAM_WEIGHT * bigram_score
        if kinds and rare:
            score += kind_score(kinds, s.text, x.folded)
        out.append(Scored(s, score - RANK_PRIOR * s.source_index, support, rare, evidence))
    return out


def kind_score(kinds: Sequence[str], sentence: str, folded: str) -> float:
    """What a sentence earns for stating the kind of fact asked for (a duration for how long, a
    date for when), less for another kind asked, less still for a bare number."""
    if states(kinds[0], sentence, folded):
        return KIND_WEIGHT
    if any(states(k, sentence, folded) for k in kinds[1:]):
        return KIND_WEIGHT / 2
    return KIND_WEIGHT / 4 if states_a_number(folded) else 0.0


def _citable(x: Scored) -> bool:
    """A sentence worth citing on its own: it holds a question term that is not common, and
    with its title enough of the question."""
    return x.rare and x.support >= MIN_SUPPORT and x.evidence >= MIN_EVIDENCE


def select(scored: list[Scored], max_sentences: int = MAX_SENTENCES, max_chars: int = MAX_CHARS) -> list[Scored]:
    """Best sentence, then its followers in the same source, then the next best; in budget."""
    if not scored:
        return []
    ranked = sorted((x for x in scored if _citable(x)), key=lambda x: -x.score)
    if not ranked:
        return []
    best = ranked[0]
    chosen = [best]
    used = len(best.sentence.text)
    order = {id(x): i for i, x in enumerate(scored)}
    position = order[id(best)]
    follower = scored[position + 1] if position + 1 < len(scored) else None
    queue = []
    if follower is not None and follower.sentence.source_index == best.sentence.source_index:
        queue.append(follower)
    queue += [x for x in ranked[1:] if x.score >= NEXT_SHARE * best.score]
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
                   max_chars: int = MAX_CHARS, rarity: Rarity | None = None) -> Answer:
    """The extractive answer: ≤ `max_sentences` sentences, each followed by its `[S#]`.
    ``rarity``: how rare each question term is in the vault (``LexicalIndex.rarity``); without
    it, among the candidate sentences."""
    picked = select(score_sentences(question, sources, rarity=rarity), max_sentences, max_chars)
    if not picked:
        return Answer(INSUFFICIENT, "", sources=list(sources),
                      notes=[NO_SUPPORTING_SENTENCE])
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
