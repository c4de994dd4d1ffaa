"""Small CLI messages: `init` run twice, queries that start with `-`, `rag ask … -- QUESTION`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli


@pytest.fixture(scope="module")
def home(module_homes) -> Path:
    return module_homes.make(note=("Kyoto", "The JR pass covers local lines."))


def test_init_twice_says_the_config_was_kept_without_nested_brackets(tmp_path: Path) -> None:
    first = run_cli(tmp_path / "h", "init")
    assert first.code == 0 and "(created)" in first.stdout
    again = run_cli(tmp_path / "h", "init")
    assert again.code == 0 and "(already there, kept as it is)" in again.stdout
    assert "((" not in again.stdout and "))" not in again.stdout


@pytest.mark.parametrize("argv", [("rag", "search", "notes", "-x"), ("rag", "ask", "notes", "-x"),
                                  ("memory", "search", "notes", "-x")])
def test_a_query_starting_with_dash_is_told_to_go_after_double_dash(home: Path, argv: tuple[str, ...]) -> None:
    r = run_cli(home, "--json", *argv)
    assert r.code == 2 and r.json["error"]["code"] == "usage_error"
    assert "goes after `--`" in r.json["error"]["message"]
    assert run_cli(home, *argv[:3], "--", "-x").code == 0


def test_a_mistyped_option_names_the_verbs_options_and_the_nearest(home: Path) -> None:
    typo = run_cli(home, "--json", "memory", "add", "notes", "--title", "T", "--txt", "words")
    assert typo.code == 2 and typo.json["error"]["code"] == "usage_error"
    message = typo.json["error"]["message"]
    assert "memory add: no option --txt (did you mean --text?)" in message
    assert "--file, --kind, --tag, --text, --title" in message and "goes after" not in message
    assert "`memories memory add --help`" in message
    other = run_cli(home, "memory", "add", "notes", "--title", "T", "--body", "words")
    assert other.code == 2 and "no option --body; its options are" in other.stderr and "did you mean" not in other.stderr
    assert "Traceback" not in other.stderr


def test_ask_takes_its_question_after_double_dash_like_search(home: Path) -> None:
    search = run_cli(home, "--json", "rag", "search", "notes", "--mode", "bm25", "--", "JR pass")
    assert search.code == 0, search.stderr
    ask = run_cli(home, "--json", "rag", "ask", "notes", "--mode", "bm25", "--", "JR pass")
    assert ask.code == 0, ask.stderr
    assert ask.json["question"] == "JR pass" and ask.json["status"] == "extractive"


def test_vault_create_warns_about_a_well_known_passphrase(tmp_path: Path) -> None:
    weak = run_cli(tmp_path / "h", "vault", "create", "a", passphrase="password12345678")
    assert weak.code == 0 and "warning: this passphrase is weak" in weak.stderr and "common" in weak.stderr
    strong = run_cli(tmp_path / "h", "vault", "create", "b", passphrase="granite otter velvet cascade lantern")
    assert strong.code == 0 and "weak" not in strong.stderr


def test_memory_search_in_a_two_record_vault_shows_meaningful_figures(tmp_path: Path) -> None:
    from tests.helpers.cli import call_cli

    home = tmp_path / "h"
    assert call_cli(home, "vault", "create", "tiny").code == 0
    for title, text in (("Temple", "Kyoto temple walk, Kyoto at dawn."), ("Ramen", "A ramen shop near Kyoto station.")):
        assert call_cli(home, "memory", "add", "tiny", "--title", title, "--text", text).code == 0
    out = call_cli(home, "--json", "memory", "search", "tiny", "kyoto").json["results"]
    assert [r["title"] for r in out] == ["Temple", "Ramen"]
    assert all(r["score"] < 0.001 for r in out)  # BM25's IDF is near 0 when every note has the term
    assert out[0]["relevance"] == 1.0 and 0.005 < out[1]["relevance"] < 1
    text = call_cli(home, "memory", "search", "tiny", "kyoto").stdout.splitlines()
    assert text[0].startswith("RELEVANCE") and text[1].startswith("1.00")
    assert not any(line.startswith(("0.0000", "0.00 ")) for line in text[1:])
    hits = call_cli(home, "rag", "search", "tiny", "kyoto").stdout
    assert "0.0000" not in hits and "e-0" in hits  # tiny BM25 scores shown with their digits, never as zero
