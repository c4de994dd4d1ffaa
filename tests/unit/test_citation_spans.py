"""The one citation finder (answer/citation_finder.py): look-alike forms read as what they print as,
ranges cite every member, spans index the original text, and the validator rejects any
bracketed S-label that was not sent — the same finder the TUI, CLI and MCP use."""

from __future__ import annotations

import json

import pytest

from memories_tui.answer.citation_finder import find_citations, label_list
from memories_tui.answer.citations import AnswerRejected, check_answer, cited_in_text
from memories_tui.answer.types import Answer, Source


def src(label: str, text: str) -> Source:
    return Source(label, f"r{label}", 1, 0, len(text.encode()), "T", text=text, chunk_hash="h")


SOURCES = [src("S1", "one"), src("S2", "two"), src("S3", "three")]


def reply(answer: str, citations: tuple[str, ...] = ("S1",)) -> str:
    return json.dumps({"answer": answer, "citations": list(citations)}, ensure_ascii=False)


LOOKALIKES_OF_S9 = ["[S\u200b9]", "［S9］", "[Ｓ9]", "[S1-S9]", "[S1–S9]", "[S⁹]", "⟦S9⟧", "[S\u20609]",
                    "[Ѕ9]", "[S\u00a09]", "[S9\u0301]", "【S٩】", "〔S9〕", "[S-9]", "[S1, S9]"]


@pytest.mark.parametrize("form", LOOKALIKES_OF_S9)
def test_a_lookalike_citation_of_an_unsent_source_rejects_the_answer(form: str) -> None:
    with pytest.raises(AnswerRejected, match=r"cited S\d.*not among the 3 sources"):
        check_answer(reply(f"Fact {form}."), SOURCES)


@pytest.mark.parametrize("form", LOOKALIKES_OF_S9)
def test_every_lookalike_is_found_with_its_exact_span(form: str) -> None:
    text = f"前文 {form} after"
    spans = find_citations(text)
    assert len(spans) == 1
    assert text[spans[0].start:spans[0].end] == form  # the original characters, invisible ones included
    assert "S9" in spans[0].labels


@pytest.mark.parametrize(("form", "labels"), [
    ("[s1]", ("S1",)), ("[S1; S2]", ("S1", "S2")), ("[S1、S2]", ("S1", "S2")), ("【S1, S2】", ("S1", "S2")),
    ("[ S1 ]", ("S1",)), ("[S 1]", ("S1",)), ("【S1、S2】", ("S1", "S2")), ("[s1; S2]", ("S1", "S2")),
    ("[S1，S3]", ("S1", "S3")), ("[S1-S3]", ("S1", "S2", "S3")), ("[S3–S1]", ("S1", "S2", "S3")),
    ("[S1-3]", ("S1", "S2", "S3")), ("［Ｓ２］", ("S2",)), ("[S1 S2]", ("S1", "S2")),
])
def test_accepted_forms_are_found_and_validate(form: str, labels: tuple[str, ...]) -> None:
    text = f"答案 {form}。"
    spans = find_citations(text)
    assert [(text[s.start:s.end], s.labels) for s in spans] == [(form, labels)]
    _, citations, _ = check_answer(reply(text, ()), SOURCES)
    assert [c.label for c in citations] == list(labels)


@pytest.mark.parametrize("text", ["[see S6]", "S7 alone", "(S9)", "[AWS S3 docs]", "[S1, see]", "[]", "[S]",
                                  "[S1", "S1]", "[1]", "[x9]"])
def test_not_citations(text: str) -> None:
    assert find_citations(text) == []
    assert cited_in_text(text) == []


def test_spans_of_several_citations_in_order_with_surrogates_and_wide_text() -> None:
    text = "😀 A [S1] 中文【S2、S3】 and [S\u200b1] end"
    spans = find_citations(text)
    assert [text[s.start:s.end] for s in spans] == ["[S1]", "【S2、S3】", "[S\u200b1]"]
    assert [s.labels for s in spans] == [("S1",), ("S2", "S3"), ("S1",)]
    assert cited_in_text(text) == ["S1", "S2", "S3"]


def test_a_huge_range_is_bounded_and_still_rejected() -> None:
    spans = find_citations("[S1-S999999]")
    assert len(spans[0].labels) <= 102 and spans[0].labels[-1] == "S999999"
    with pytest.raises(AnswerRejected):
        check_answer(reply("x [S1-S999999]"), SOURCES)


def test_citations_list_and_quote_sources_are_read_the_same_way() -> None:
    assert label_list("Ｓ1") == ["S1"] and label_list("[S2]") == ["S2"] and label_list("S1-S3") == ["S1", "S2", "S3"]
    assert label_list("S\u200b9") == ["S9"] and label_list("source one") == []
    with pytest.raises(AnswerRejected, match="S9"):
        check_answer(reply("Fact [S1].", ("S1", "S\u200b9")), SOURCES)
    _, citations, _ = check_answer(reply("Fact.", ("Ｓ2",)), SOURCES)
    assert [c.label for c in citations] == ["S2"]


def test_finder_is_linear_on_hostile_input() -> None:
    text = "[" * 5000 + "S1 " * 3000 + "【" * 5000
    assert find_citations(text) == []  # returns (no quadratic blow-up on unclosed brackets)


def test_an_answer_reports_the_spans_the_check_reads() -> None:
    answer = Answer("answered", "甲【S1、S2】乙 [s1] 丙 ［S2］")
    assert [(answer.answer[s.start:s.end], s.labels) for s in answer.citation_spans] == [
        ("【S1、S2】", ("S1", "S2")), ("[s1]", ("S1",)), ("［S2］", ("S2",))]
    assert answer.to_json()["citation_spans"] == [{"start": 1, "end": 8, "labels": ["S1", "S2"]},
                                                  {"start": 10, "end": 14, "labels": ["S1"]},
                                                  {"start": 17, "end": 21, "labels": ["S2"]}]
