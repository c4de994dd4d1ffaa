"""Parse the model's JSON answer strictly, validate every `[S#]`, verify quotes.

* The reply must be one JSON object (a single surrounding ```json fence is tolerated):
  duplicate keys, NaN/Infinity, trailing text and wrong types are refused.
* Every `[S#]` in the answer text, every id in `citations` and every quote's `source` must
  be a source that was sent; one unknown id rejects the whole answer (never shown).
  Citations are found by the one finder every front end uses too (citation_finder.py), so
  look-alikes (`[S\u200b9]`, `［S9］`, `[Ｓ9]`, `[S⁹]`, `⟦S9⟧`) count as what they print as and
  a range `[S1-S9]` cites every member.
* A quote is verified when it occurs in its source after NFC, Simplified/Traditional and
  width folding, case folding and whitespace removal; it is reported with the byte range
  it covers in the record's UTF-8 body. This checks references, not truth.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import AnswerRejectedError, ModelError
from ..models.strict_json import strict_json
from ..text.offsets import byte_span_to_chars, char_span_to_bytes
from ..text.segment import fold
from .citation_finder import find_citations, label_list
from .prompt import unescape
from .types import Citation, Quote, Source

MAX_ANSWER_CHARS = 20_000
MAX_QUOTES = 50
MAX_QUOTE_CHARS = 2_000

_FENCE = re.compile(r"\A```(?:json|JSON)?[ \t]*\n(.*)\n```\Z", re.S)


class AnswerRejected(AnswerRejectedError):
    """The model's answer broke the contract (bad JSON, unknown source id); it is not shown."""


@dataclass(frozen=True)
class ModelAnswer:
    answer: str
    citations: list[str]
    quotes: list[tuple[str, str]]  # (source label as written, quote text)


def parse_model_answer(text: str) -> ModelAnswer:
    """The model's reply → typed fields; anything malformed raises AnswerRejected."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data = strict_json(body)
    except ModelError as exc:
        raise AnswerRejected(f"The model's reply is not the JSON object asked for: {exc.message}") from None
    if not isinstance(data, dict):
        raise AnswerRejected("The model's reply is JSON but not an object with answer and citations.")
    answer = data.get("answer")
    if not isinstance(answer, str):
        raise AnswerRejected("The model's reply has no answer string.")
    if len(answer) > MAX_ANSWER_CHARS:
        raise AnswerRejected(f"The model's answer is longer than {MAX_ANSWER_CHARS:,} characters.")
    citations = data.get("citations")
    if not isinstance(citations, list) or not all(isinstance(c, str) for c in citations):
        raise AnswerRejected("The model's reply has no citations list of strings.")
    quotes_raw = data.get("quotes", [])
    if quotes_raw is None:
        quotes_raw = []
    if not isinstance(quotes_raw, list) or len(quotes_raw) > MAX_QUOTES:
        raise AnswerRejected(f"The model's quotes must be a list of at most {MAX_QUOTES} items.")
    quotes: list[tuple[str, str]] = []
    for item in quotes_raw:
        if not (isinstance(item, dict) and isinstance(item.get("source"), str) and isinstance(item.get("text"), str)):
            raise AnswerRejected("Each quote must be an object with a source and a text string.")
        if len(item["text"]) > MAX_QUOTE_CHARS:
            raise AnswerRejected(f"A quote is longer than {MAX_QUOTE_CHARS:,} characters.")
        quotes.append((item["source"], item["text"]))
    return ModelAnswer(answer, list(citations), quotes)


def cited_in_text(answer: str) -> list[str]:
    """Source ids cited in answer text (`[S1]`, `[S1, S2]`, `【S3】`, `[S1-S3]`, …), in order, as `S#`."""
    return list(dict.fromkeys(label for span in find_citations(answer) for label in span.labels))


def _labels(raw: str, what: str) -> list[str]:
    """The ids one `citations` entry or quote source names (`S1`, `[S2]`, `Ｓ3`, `S1-S3`)."""
    labels = label_list(raw)
    if not labels:
        raise AnswerRejected(f"The model's {what} {raw[:20]!r} is not a source id like S1; the answer was rejected.")
    return labels


def _label(raw: str, what: str) -> str:
    labels = _labels(raw, what)
    if len(labels) != 1:
        raise AnswerRejected(f"The model's {what} {raw[:20]!r} names {len(labels)} sources, not one; "
                             "the answer was rejected.")
    return labels[0]


def _describe(labels: Sequence[str]) -> str:
    if not labels:
        return "no sources"
    return ", ".join(labels) if len(labels) <= 4 else f"{labels[0]}–{labels[-1]}"


def validate_citations(parsed: ModelAnswer, sources: Sequence[Source]) -> list[Citation]:
    """Citations (answer text first, then the list) that all name sent sources; else reject."""
    by_label = {s.label: s for s in sources}
    listed_ids = [label for c in parsed.citations for label in _labels(c, "citation")]
    labels = cited_in_text(parsed.answer) + listed_ids
    labels += [_label(src, "quote source") for src, _ in parsed.quotes]
    labels = list(dict.fromkeys(labels))
    unknown = [label for label in labels if label not in by_label]
    if unknown:
        raise AnswerRejected(
            f"The model cited {', '.join(unknown[:5])}, which {'is' if len(unknown) == 1 else 'are'} not among the "
            f"{len(sources)} sources sent ({_describe([s.label for s in sources])}); the whole answer was rejected.")
    listed = set(cited_in_text(parsed.answer)) | set(listed_ids)
    return [Citation.of(by_label[label]) for label in labels if label in listed]


# --------------------------------------------------------------------------- quotes


def normalize_with_map(text: str) -> tuple[str, list[int], list[int]]:
    """Matching form of `text` and, per output character, the [start, end) of the input
    characters it came from. NFC per base+combining cluster, then fold, whitespace dropped."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        for ch in unicodedata.normalize("NFC", text[i:j]):
            chars.append(ch)
            starts.append(i)
            ends.append(j)
        i = j
    folded = fold("".join(chars))
    keep = [k for k, ch in enumerate(folded) if not ch.isspace()]
    return "".join(folded[k] for k in keep), [starts[k] for k in keep], [ends[k] for k in keep]


def normalize(text: str) -> str:
    return normalize_with_map(text)[0]


def locate(quote: str, text: str) -> tuple[int, int] | None:
    """Character range of `quote` in `text` under normalisation, or None."""
    needle = normalize(quote)
    if not needle:
        return None
    hay, starts, ends = normalize_with_map(text)
    pos = hay.find(needle)
    if pos < 0:
        return None
    return starts[pos], ends[pos + len(needle) - 1]


def verify_quotes(quotes: Sequence[tuple[str, str]], sources: Sequence[Source]) -> list[Quote]:
    """Each quote checked in its own source (labels already validated)."""
    by_label = {s.label: s for s in sources}
    out: list[Quote] = []
    for raw_label, text in quotes:
        source = by_label[_label(raw_label, "quote source")]
        found = locate(text, source.text)
        if found is None and unescape(text) != text:
            found = locate(unescape(text), source.text)
        if found is None:
            out.append(Quote(source.label, text, False, source.record_id))
            continue
        byte_start, byte_end = char_span_to_bytes(source.text, *found, base=source.byte_start)
        out.append(Quote(source.label, text, True, source.record_id, byte_start, byte_end))
    return out


def check_answer(reply: str, sources: Sequence[Source]) -> tuple[ModelAnswer, list[Citation], list[Quote]]:
    """Parse, validate and verify one reply: the single entry point `ask` uses."""
    parsed = parse_model_answer(reply)
    citations = validate_citations(parsed, sources)
    return parsed, citations, verify_quotes(parsed.quotes, sources)


bytes_to_char_range = byte_span_to_chars  # byte offsets within a text → character offsets

