"""Search verbs through the CLI: the fields of each result, batch mode, limits and escaping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import call_cli


@pytest.fixture(scope="module")
def searchable(tmp_path_factory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("search")
    home = root / "home"
    vault = call_cli(home, "vault", "create", "notes", "--json").json["vault_id"]
    notes = {
        "coffee.md": "# 手沖咖啡\n\n水溫控制在攝氏九十二度左右。粉水比大約一比十五。",
        "bread.md": "# Sourdough\n\nFeed the starter twice a day. Bake at 250 degrees.",
        "mixed.md": "# 會議 Meeting\n\n搜尋功能改用 hybrid search 混合排序。",
    }
    paths = []
    for name, text in notes.items():
        (root / name).write_text(text, encoding="utf-8")
        paths.append(str(root / name))
    assert call_cli(home, "rag", "ingest", vault, *paths).code == 0  # three knowledge cards
    # a plain memory (not a card), so --cards-only has something to leave out
    assert call_cli(home, "memory", "add", vault, "--title", "Memo", "--text", "starter 咖啡 memo").code == 0
    secret = call_cli(home, "memory", "add", vault, "--title", "咖啡 secret", "--kind", "credential",
                     "--text", "咖啡 PIN 0000")
    assert secret.code == 0, secret.stderr
    return home, vault


def test_rag_search_fields(searchable):
    home, vault = searchable
    out = call_cli(home, "rag", "search", vault, "咖啡", "--mode", "bm25", "--json").json
    assert {"vault_id", "query", "mode", "match_mode", "results"} <= set(out)
    assert out["mode"] == "bm25" and out["match_mode"] == "any" and out["query"] == "咖啡"
    hit = out["results"][0]
    assert {"citation", "asset_id", "revision", "chunk_hash", "byte_start", "byte_end", "score", "title", "text",
            "scores"} <= set(hit)
    assert hit["citation"] == "S1" and hit["title"] == "手沖咖啡"
    assert all(r["title"] != "咖啡 secret" for r in out["results"])


def test_match_modes_and_cards_only(searchable):
    home, vault = searchable
    titles = lambda *a: [r["title"] for r in call_cli(home, "rag", "search", vault, *a, "--json").json["results"]]  # noqa: E731
    assert titles("hybrid search", "--match-mode", "phrase") == ["會議 Meeting"]
    assert titles("search hybrid", "--match-mode", "phrase") == []
    assert titles("starter 咖啡", "--match-mode", "all") == ["Memo"]
    assert set(titles("starter 咖啡", "--match-mode", "any")) == {"Sourdough", "手沖咖啡", "Memo"}
    assert set(titles("starter 咖啡", "--cards-only")) == {"Sourdough", "手沖咖啡"}
    assert titles("starter 咖啡", "--match-mode", "all", "--cards-only") == []
    # phrase queries take the FTS5 path, which filters cards in its own SQL
    assert set(titles("starter", "--match-mode", "phrase")) == {"Sourdough", "Memo"}
    assert titles("starter", "--match-mode", "phrase", "--cards-only") == ["Sourdough"]


def test_memory_search_verb(searchable):
    home, vault = searchable
    out = call_cli(home, "memory", "search", vault, "混合排序", "--json").json
    assert out["results"][0]["title"] == "會議 Meeting"
    human = call_cli(home, "memory", "search", vault, "混合排序")
    assert "會議 Meeting" in human.stdout and human.code == 0


def test_batch_queries_one_unlock(searchable, tmp_path):
    home, vault = searchable
    queries = tmp_path / "q.jsonl"
    queries.write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in [
        {"id": "q1", "text": "咖啡"}, {"id": "q2", "text": "sourdough starter"}, {"id": 3, "text": "nothing-matches"},
    ]) + "\n", encoding="utf-8")
    out = call_cli(home, "rag", "search", vault, "--queries", str(queries), "--json")
    assert out.code == 0 and out.stdout.count("\n") == 1
    got = {q["id"]: [r["title"] for r in q["results"]] for q in out.json["queries"]}
    assert got["q1"][0] == "手沖咖啡" and got["q2"][0] == "Sourdough" and got["3"] == []


def test_batch_queries_bad_file(searchable, tmp_path):
    home, vault = searchable
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "text": "ok"}\nnot json\n')
    out = call_cli(home, "rag", "search", vault, "--queries", str(bad), "--json")
    assert out.code == 1 and out.json["error"]["code"] == "bad_queries_file" and "line 2" in out.json["error"]["message"]
    both = call_cli(home, "rag", "search", vault, "q", "--queries", str(bad), "--json")
    assert both.code == 2


# query → expected titles (any mode), by hand: the words are searched as plain text. Read as
# FTS5 syntax, "star*" would match "starter", "starter NOT 咖啡" would drop the coffee notes and
# "title:secret" would be a column filter; the credential record is never searchable at all.
FTS_SYNTAX = {
    "NEAR(a b)": set(),
    '"unbalanced': set(),
    "star*": set(),
    "feed*": {"Sourdough"},
    "a AND b": set(),
    "sourdough AND starter": {"Sourdough", "Memo"},
    "x OR y": set(),
    "NOT z": set(),
    "starter NOT 咖啡": {"Sourdough", "手沖咖啡", "Memo"},
    "-x": set(),
    "-starter": {"Sourdough", "Memo"},
    "body:咖啡": {"手沖咖啡", "Memo"},
    "^start": set(),
    "(paren": set(),
    "title:secret": set(),
    "title:Sourdough": {"Sourdough"},
    "a:b:c": set(),
    "{x}": set(),
    '"hybrid search"': {"會議 Meeting"},
}


@pytest.mark.parametrize("query", list(FTS_SYNTAX))
def test_fts_syntax_is_never_interpreted(searchable, query):
    home, vault = searchable
    args = ("--json", "--", query) if query.startswith("-") else (query, "--json")
    out = call_cli(home, "rag", "search", vault, *args)
    assert out.code == 0, out.stdout
    assert {r["title"] for r in out.json["results"]} == FTS_SYNTAX[query]


def test_limits_name_the_limit(searchable):
    home, vault = searchable
    too_long = call_cli(home, "rag", "search", vault, "字" * 400, "--json")
    assert too_long.code == 1 and too_long.json["error"]["code"] == "limit_exceeded"
    assert "1,024" in too_long.json["error"]["message"] or "1024" in too_long.json["error"]["message"]
    many = call_cli(home, "rag", "search", vault, " ".join(f"w{i}" for i in range(70)), "--json")
    assert many.json["error"]["code"] == "limit_exceeded" and "64" in many.json["error"]["message"]
    big = call_cli(home, "rag", "search", vault, "x", "--limit", "101", "--json")
    assert big.json["error"]["code"] == "limit_exceeded" and "100" in big.json["error"]["message"]
    zero = call_cli(home, "memory", "search", vault, "x", "--limit", "0", "--json")
    assert zero.code == 2 and zero.json["error"]["code"] == "usage_error"  # not a limit: a mistake


def test_status_lexical_part(searchable):
    home, vault = searchable
    out = call_cli(home, "rag", "status", vault, "--json").json
    for key in ("backend", "model", "installed", "vector_space", "dimensions", "chunks", "embedded", "missing",
                "truncated", "limits", "usage"):
        assert key in out
    assert out["chunks"] == 4 and out["limits"]["chunks"] == 10_000 and out["usage"]["chunks"] == 4
    assert out["installed"] is False and out["missing"] == 4


def test_options_between_vault_and_query(searchable):
    home, vault = searchable
    out = call_cli(home, "rag", "search", vault, "--json", "--limit", "1", "咖啡")
    assert out.code == 0 and len(out.json["results"]) == 1
    extra = call_cli(home, "rag", "search", vault, "one", "two", "--json")
    assert extra.code == 2 and "unrecognized" in extra.json["error"]["message"]


def test_batch_over_limit_query_fails_alone(searchable, tmp_path):
    home, vault = searchable
    queries = tmp_path / "q.jsonl"
    long = " ".join(f"word{i}" for i in range(80))
    queries.write_text("\n".join(json.dumps(q) for q in [
        {"id": "ok", "text": "咖啡"}, {"id": "long", "text": long}, {"id": "ok2", "text": "sourdough"}]) + "\n",
        encoding="utf-8")
    out = call_cli(home, "rag", "search", vault, "--queries", str(queries), "--json")
    assert out.code == 0 and out.json["failed"] == 1
    by_id = {q["id"]: q for q in out.json["queries"]}
    assert by_id["long"]["error"]["code"] == "limit_exceeded" and "64" in by_id["long"]["error"]["message"]
    assert by_id["long"]["results"] == []
    assert by_id["ok"]["results"] and by_id["ok2"]["results"]
    bad_mode = call_cli(home, "rag", "search", vault, "--queries", str(queries), "--limit", "500", "--json")
    assert bad_mode.code == 1 and bad_mode.json["error"]["code"] == "limit_exceeded"


@pytest.fixture(scope="module")
def partial_words(tmp_path_factory) -> tuple[Path, str]:
    """Notes whose names Jieba keeps whole: before the pieces field, a query that is part
    of one of them (小明, 積電, 淇淋, 冰淇, 竹廠) found nothing at all."""
    home = tmp_path_factory.mktemp("partial") / "home"
    vault = call_cli(home, "vault", "create", "notes", "--json").json["vault_id"]
    notes = [("同學", "王小明今天沒有來上課。"), ("半導體", "台積電宣布擴建晶圓廠。"),
             ("甜點", "夏天最好吃的是冰淇淋。"), ("參訪", "我們參觀了新竹廠區的產線。"),
             ("River", "The river carries sand to the sea.")]
    for title, text in notes:
        assert call_cli(home, "memory", "add", vault, "--title", title, "--text", text).code == 0
    return home, vault


@pytest.mark.parametrize(("query", "title"), [
    ("小明", "同學"), ("积电", "半導體"), ("積電", "半導體"), ("淇淋", "甜點"), ("冰淇", "甜點"), ("竹廠", "參訪"),
    ("王小明", "同學"), ("台積電", "半導體"), ("冰淇淋", "甜點"),
])
def test_a_piece_of_a_word_finds_the_note(partial_words, query, title):
    home, vault = partial_words
    for verb in (("rag", "search"), ("memory", "search")):
        out = call_cli(home, *verb, vault, query, "--json")
        assert out.code == 0, out.stderr
        assert [r["title"] for r in out.json["results"]] == [title], (verb, query)
    out = call_cli(home, "rag", "search", vault, query, "--match-mode", "all", "--json")
    assert [r["title"] for r in out.json["results"]] == [title]


def test_a_phrase_of_pieces_must_be_consecutive(partial_words):
    home, vault = partial_words
    titles = lambda q, mode="phrase": [r["title"] for r in call_cli(  # noqa: E731
        home, "rag", "search", vault, q, "--match-mode", mode, "--json").json["results"]]
    assert titles("小明今天") == ["同學"]
    assert titles("明小") == [] and titles("竹新") == []
    # the same pieces out of order: any/all find the note by them, a phrase does not
    assert titles("小明王", "any") == ["同學"] and titles("小明王", "phrase") == []
