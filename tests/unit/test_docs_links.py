"""The README and docs/ are read one click at a time: every relative link must land on a file
and, with `#anchor`, on a heading of it; every bench script, `memories` verb and `[table] key`
setting they name must exist. Checked against the real parser, file tree and example config."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from memories_tui.cli.parser import build_parser
from memories_tui.cli.sync_verbs import sync_argv

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "bench" / "README.md",
                *(ROOT / "docs").glob("*.md")])
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
GLOBAL_WITH_VALUE = {"--home", "--config", "--lang"}


def _prose(text: str) -> str:
    """The text with fenced blocks and code spans blanked: links there are not links."""
    return CODE_SPAN.sub("``", FENCE.sub("", text))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            slug = _slug(match.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def dead_links(page: Path) -> list[str]:
    dead = []
    for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: — not checked offline
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            dead.append(f"{target} (no such file)")
        elif anchor and (dest.suffix != ".md" or anchor not in anchors(dest)):
            dead.append(f"{target} (no heading #{anchor})")
    return dead


def _code(text: str) -> list[str]:
    """Every piece of code in a page: each line of a fenced block, each code span."""
    pieces = []
    for block in FENCE.findall(text):
        pieces.extend(block.splitlines()[1:-1])
    pieces.extend(CODE_SPAN.findall(FENCE.sub("", text)))
    return pieces


def named_commands(text: str) -> list[list[str]]:
    """The words after `memories` wherever code runs it (`memories rag search …`)."""
    commands = []
    for piece in _code(text):
        for match in re.finditer(r"(?:^|[\s($`\"])memories\s+([^|;&#)\n]*)", piece):
            words = match.group(1).split()
            while words and words[0].startswith("-"):  # global options before the verb
                words = words[2:] if words[0] in GLOBAL_WITH_VALUE else words[1:]
            if words:
                commands.append(words)
    return commands


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def unknown_verbs(commands: list[list[str]]) -> list[str]:
    verbs = _subcommands(build_parser())
    unknown = []
    for words in commands:
        words = sync_argv(words)  # `memories sync VAULT` is `memories sync now VAULT`
        verb = words[0]
        if not re.fullmatch(r"[a-z][a-z0-9-]*", verb):  # a placeholder (VERB, …): nothing to check
            continue
        if verb not in verbs:
            unknown.append(" ".join(words[:2]))
            continue
        subverbs = _subcommands(verbs[verb])
        if subverbs and len(words) > 1 and re.fullmatch(r"[a-z][a-z0-9-]*", words[1]) \
                and words[1] not in subverbs:
            unknown.append(" ".join(words[:2]))
    return unknown


def named_bench_scripts(text: str) -> set[str]:
    return set(re.findall(r"\bbench/[\w./-]*\w", text)) | {
        f"bench/{name}" for name in re.findall(r"(?<![/\w])(bench_\w+\.py)", text)}


def config_keys(example: str) -> dict[str, set[str]]:
    """Each table of config.example.toml with the keys it documents (most are commented out)."""
    tables: dict[str, set[str]] = {}
    current = None
    for line in example.splitlines():
        table = re.match(r"#?\s*\[([\w.]+)\]\s*$", line)
        key = re.match(r"#?\s*([a-z_]+)\s*=", line)
        if table:
            current = tables.setdefault(table.group(1), set())
        elif key and current is not None:
            current.add(key.group(1))
    return tables


def unknown_settings(text: str, tables: dict[str, set[str]]) -> list[str]:
    """`[table] key` code spans that config.example.toml does not document."""
    return [f"[{table}] {key}" for table, key in re.findall(r"`\[([a-z_.]+)\] ([a-z_]+)", text)
            if key not in tables.get(table, set())]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_lands_on_a_file_and_heading(page: Path) -> None:
    assert dead_links(page) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_bench_script_verb_and_setting_named_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert sorted(s for s in named_bench_scripts(text) if not (ROOT / s).exists()) == []
    assert unknown_verbs(named_commands(text)) == []
    tables = config_keys((ROOT / "config.example.toml").read_text(encoding="utf-8"))
    assert unknown_settings(text, tables) == []


def test_the_checks_find_what_they_look_for(tmp_path: Path) -> None:
    """A dead file, a dead anchor, a missing script and an unknown verb are each reported."""
    (tmp_path / "other.md").write_text("# Other page\n\n## Rollback detection\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("[a](other.md#rollback-detection) [b](gone.md) [c](other.md#nowhere) "
                    "[d](https://example.com/x) `[e](gone.md)`\n", encoding="utf-8")
    assert dead_links(page) == ["gone.md (no such file)", "other.md#nowhere (no heading #nowhere)"]
    text = ("```\nmemories --json vault list   # then `memories rag serch notes x`\n"
            "memories --home H unlock notes\nmemories --lang zh-Hant vault list\n```\nRun `memories vault lsit` or `memories VERB`; "
            "`eval \"$(memories completion bash)\"`, `.venv/bin/python bench/bench_nothing.py`.\n")
    assert unknown_verbs(named_commands(text)) == ["rag serch", "vault lsit"]
    assert [w[0] for w in named_commands(text)] == ["vault", "rag", "unlock", "vault", "vault", "VERB", "completion"]
    assert named_bench_scripts(text) == {"bench/bench_nothing.py"}
    tables = config_keys("[tui]\n# idle_lock_minutes = 15\n[rag]\nfusion = \"score\"\n")
    assert unknown_settings("`[tui] idle_lock_minutes`, `[rag] fusion`, `[rag] fuse`, `[gui] x`", tables) \
        == ["[rag] fuse", "[gui] x"]
    assert _slug("The command line (`memories`)") == "the-command-line-memories"
    assert _slug("The default model's cost") == "the-default-models-cost"


def test_readme_is_short_and_its_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"```bash\n(.*?)\n```", quick, re.S) == ["./scripts/start", "./scripts/test"]
    ci = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
          if line and not line.startswith("#")]
    assert ci[-1] == "./scripts/test"


def verb_rows(cli_doc: str) -> list[tuple[str, set[str]]]:
    """docs/cli.md's verb table: (the verb's usage, the JSON keys its row names)."""
    table = cli_doc.split("## Every verb", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) == 3 and cells[0].startswith("`memories"):
            rows.append((cells[0], set(re.findall(r'"(\w+)"', cells[2]))))
    return rows


def test_the_verb_table_names_every_key_the_recorded_json_prints() -> None:
    """The --json golden (real output of 31 calls) against the keys docs/cli.md promises."""
    import json

    rows = verb_rows((ROOT / "docs" / "cli.md").read_text(encoding="utf-8"))
    golden = json.loads((ROOT / "tests" / "golden" / "json" / "outputs.json").read_text(encoding="utf-8"))
    checked = 0
    for case in golden.values():
        output = json.loads(case["stdout"])
        if case["exit"] != 0 or not isinstance(output, dict):
            continue
        argv = case["argv"]
        batch = "--queries" in argv or "--questions" in argv
        usage = f"`memories {argv[0]} {argv[1]}" if argv[0] in _subcommands(build_parser()) else ""
        matches = [keys for first, keys in rows if first.startswith(usage)
                   and ("--queries" in first or "--questions" in first) == batch]
        assert matches, f"no row for {' '.join(argv[:2])} in docs/cli.md"
        assert set(output) <= matches[0], f"{' '.join(argv)}: {sorted(set(output) - matches[0])} not in docs/cli.md"
        checked += 1
    assert checked >= 20
