"""The one citation finder: where an answer cites `[S#]` and which sources each citation names.

The citation check (citations.py), the TUI's highlighting, the CLI's bold text and the
`citation_spans` of `--json` and MCP all read citations through `find_citations`, so what a
reader sees as a citation is exactly what is checked and linked. It reads the text after
compatibility normalisation with zero-width and format characters and combining marks
removed, so `[S\u200b9]`, `［S9］`, `[Ｓ9]`, `[S⁹]` and `⟦S9⟧` all read as S9; a range `[S1-S9]`
cites every member. Its spans index the ORIGINAL text. Round brackets are not citations:
"(S3)" is ordinary prose (Amazon S3) too often.

Nothing here imports the answer types, so `Answer` can derive its spans from this module.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from ..serial import Jsonable, json_meta

# Square-bracket look-alikes a model (or a source trying to smuggle a label) may use; after
# compatibility normalisation the full-width ［］ are plain [] already.
_OPENERS = "[【〔〖〘〚⟦⁅❲⦋⦍⦏"
_CLOSERS = "]】〕〗〙〛⟧⁆❳⦌⦎⦐"
# letters that print as S but survive compatibility normalisation (Cyrillic, Armenian, Lisu, Cherokee)
_S_LOOKALIKES = {"Ѕ": "S", "ѕ": "s", "Տ": "S", "ꓢ": "S", "Ꮪ": "S"}
_INVISIBLE = {"Cf", "Mn", "Me"}  # zero-width and format characters, combining marks
_GROUP = re.compile(rf"[{re.escape(_OPENERS)}]([^{re.escape(_OPENERS + _CLOSERS)}]{{1,600}})"
                    rf"[{re.escape(_CLOSERS)}]")
_DASH = "-‐‒–—―−~〜"
_ITEM = re.compile(rf"\s*[Ss]\s*[-#:.]?\s*(\d+)(?:\s*[{_DASH}]\s*(?:[Ss]\s*)?(\d+))?")
_SEPARATOR = re.compile(r"\s*[,，;；、&/]\s*|\s+")
_MAX_RANGE = 100  # a range wider than this holds a label above any result limit: listing more adds nothing


@dataclass(frozen=True)
class CitationSpan(Jsonable):
    """One citation as written: `text[start:end]` in the original text (brackets included) and
    the source ids it names, ranges expanded (`[S1-S3]` → S1, S2, S3)."""

    start: int = field(metadata=json_meta(description="Start of the citation in `answer`, in characters "
                                                       "(Unicode code points)."))
    end: int = field(metadata=json_meta(description="End (exclusive) of the citation in `answer`, in characters."))
    labels: tuple[str, ...] = field(metadata=json_meta(description="The sources it cites (S1, S2, …; ranges "
                                                                   "expanded)."))


def _normalised(text: str) -> tuple[str, list[int], list[int]]:
    """`text` as the finder reads it, and per character the [start, end) it came from."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for i, ch in enumerate(text):
        if ch.isascii():
            out.append(ch)
            starts.append(i)
            ends.append(i + 1)
            continue
        for part in _S_LOOKALIKES.get(ch) or unicodedata.normalize("NFKD", ch):
            if unicodedata.category(part) in _INVISIBLE:
                continue
            digit = unicodedata.decimal(part, None)
            out.append(part if digit is None else str(digit))
            starts.append(i)
            ends.append(i + 1)
    return "".join(out), starts, ends


def _number(digits: str) -> str:
    return str(int(digits)) if len(digits) <= 9 else digits.lstrip("0")


def _members(first: str, last: str | None) -> list[str]:
    if last is None:
        return [f"S{_number(first)}"]
    if len(first) > 9 or len(last) > 9:  # a label that large is never a source sent
        return [f"S{_number(first)}", f"S{_number(last)}"]
    a, b = sorted((int(first), int(last)))
    out = [f"S{n}" for n in range(a, min(b, a + _MAX_RANGE) + 1)]
    return out if b <= a + _MAX_RANGE else [*out, f"S{b}"]


def _parse_list(inner: str) -> list[str]:
    """The ids of a citation's inside (`S1`, `S1, S2`, `S1-S3`, `s1; S2`), [] if it is anything else."""
    labels: list[str] = []
    pos, end = 0, len(inner.rstrip())
    while True:
        item = _ITEM.match(inner, pos)
        if item is None:
            return []
        labels += _members(item.group(1), item.group(2))
        pos = item.end()
        if pos >= end:
            return labels
        separator = _SEPARATOR.match(inner, pos)
        if separator is None:
            return []
        pos = separator.end()


def find_citations(text: str) -> list[CitationSpan]:
    """Every bracketed source-id list in `text`, with its span in `text` itself. Look-alike
    brackets, letters and digits, invisible characters and ranges are read as what they
    print as."""
    norm, starts, ends = _normalised(text)
    spans: list[CitationSpan] = []
    for group in _GROUP.finditer(norm):
        labels = _parse_list(group.group(1))
        if labels:
            spans.append(CitationSpan(starts[group.start()], ends[group.end() - 1], tuple(labels)))
    return spans


def label_list(raw: str) -> list[str]:
    """The ids of one `citations` entry or quote source (`S1`, `[S2]`, `Ｓ3`, `S1-S3`); [] if none."""
    norm = _normalised(raw)[0].strip()
    if len(norm) >= 2 and norm[0] in _OPENERS and norm[-1] in _CLOSERS:
        norm = norm[1:-1]
    return _parse_list(norm) if len(norm) <= 600 else []
