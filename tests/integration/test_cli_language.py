"""The CLI speaks the reader's language to people and English to programs: `--lang`, `[ui]
language` and the locale pick the language of human output, help and errors; `--json`
output, error codes and exit statuses are the same in every language."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli

ENGLISH = {"LC_ALL": "", "LC_MESSAGES": "", "LANG": "C.UTF-8"}
TAIWAN = {"LC_ALL": "", "LC_MESSAGES": "", "LANG": "zh_TW.UTF-8"}
MAINLAND = {"LC_ALL": "", "LC_MESSAGES": "", "LANG": "zh_CN.UTF-8"}


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("lang")
    home = root / "home"
    vault_id = run_cli(home, "vault", "create", "notes", "--json").json["vault_id"]
    note = root / "bread.md"
    note.write_text("# Sourdough\n\nFeed the starter twice a day. Bake at 250 degrees.", encoding="utf-8")
    assert run_cli(home, "rag", "ingest", vault_id, str(note)).code == 0
    return home, vault_id


def test_lang_zh_hans_prints_simplified_search_labels(vault):
    home, vault_id = vault
    done = run_cli(home, "--lang", "zh-Hans", "rag", "search", vault_id, "starter", env=ENGLISH)
    assert done.code == 0, done.stderr
    assert "第 1 版 字节 " in done.stdout  # "r1 bytes 0-…" in Simplified
    missing = run_cli(home, "rag", "search", vault_id, "nothing-like-this", "--lang", "zh-Hans", env=ENGLISH)
    assert missing.stdout.strip() == "没有结果。"
    english = run_cli(home, "rag", "search", vault_id, "nothing-like-this", env=ENGLISH)
    assert english.stdout.strip() == "No results."


def test_the_locale_chooses_traditional_or_simplified(vault):
    home, _vault_id = vault
    taiwan = run_cli(home, "vault", "list", env=TAIWAN)
    assert taiwan.stdout.splitlines()[0].split()[1:] == ["名稱", "紀錄數"]
    mainland = run_cli(home, "vault", "list", env=MAINLAND)
    assert mainland.stdout.splitlines()[0].split()[1:] == ["名称", "记录数"]
    assert run_cli(home, "vault", "list", "--lang", "en", env=TAIWAN).stdout.splitlines()[0].split() == [
        "VAULT_ID", "NAME", "RECORDS"]


def test_ui_language_in_the_config_and_lang_overrides_it(vault, tmp_path):
    home, _vault_id = vault
    config = tmp_path / "config.toml"
    config.write_text('[ui]\nlanguage = "zh-Hant"\n', encoding="utf-8")
    assert "還沒有" not in run_cli(home, "vault", "list", "--config", str(config), env=MAINLAND).stdout
    assert run_cli(home, "vault", "list", "--config", str(config), env=MAINLAND).stdout.splitlines()[0].split()[1] \
        == "名稱"
    assert run_cli(home, "--lang", "zh-Hans", "vault", "list", "--config", str(config)).stdout.splitlines()[0] \
        .split()[1] == "名称"


def test_json_output_is_the_same_in_every_language(vault):
    home, vault_id = vault
    outputs = [run_cli(home, "--json", "rag", "search", vault_id, "starter", env=env).json
               for env in (ENGLISH, TAIWAN, MAINLAND)]
    assert outputs[0] == outputs[1] == outputs[2]
    listed = [run_cli(home, "--json", "--lang", lang, "memory", "list", vault_id).stdout for lang in ("en", "zh-Hant")]
    assert listed[0] == listed[1]


def test_errors_are_translated_for_people_and_english_in_json(vault):
    home, vault_id = vault
    shown = run_cli(home, "memory", "read", vault_id, "nope", env=TAIWAN)
    assert shown.code == 1
    assert shown.stderr.strip() == "memories：錯誤：保險庫 notes 中沒有紀錄 nope。"
    data = run_cli(home, "--json", "memory", "read", vault_id, "nope", env=TAIWAN)
    assert data.code == 1
    assert data.json == {"error": {"code": "not_found", "message": "No record nope in vault notes."}}


def test_usage_errors_and_help_are_translated_with_the_same_exit_status(vault):
    home, _vault_id = vault
    usage = run_cli(home, "rag", "search", env=TAIWAN)
    assert usage.code == 2
    assert "缺少以下必要參數：VAULT_ID" in usage.stderr and "memories rag search --help" in usage.stderr
    assert run_cli(home, "--json", "rag", "search", env=TAIWAN).json["error"]["code"] == "usage_error"
    helped = run_cli(home, "rag", "search", "--help", env=TAIWAN)
    assert helped.code == 0
    assert helped.stdout.startswith("用法：memories rag search")
    assert "搜尋片段（BM25、向量或混合），附引用標籤。" in helped.stdout
    assert "顯示這份說明後結束" in helped.stdout
    bad = run_cli(home, "--lang", "fr", "vault", "list", env=TAIWAN)
    assert bad.code == 2 and "invalid choice" not in bad.stderr and "無效的選擇：'fr'" in bad.stderr


def test_tables_align_by_terminal_cells(vault):
    """Column headers in Chinese take two cells per character: the next column starts where
    the widest cell of the column above ends, as in English."""
    home, vault_id = vault
    lines = run_cli(home, "memory", "list", vault_id, "--lang", "zh-Hant").stdout.splitlines()
    header, row = lines[0], lines[1]

    def cells(text: str) -> int:
        import unicodedata
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)

    title_at = cells(header[: header.index("標題")])
    assert cells(row[: row.index("Sourdough")]) == title_at


def test_why_no_model_is_usable_is_said_in_the_readers_language(vault, tmp_path, cheap_kdf):
    """`rag status` without an installed model: the engine's sentence is translated for people
    (in process and through the resident engine's wire form); --json keeps it English."""
    from memories_tui.engine import StatusReport
    from memories_tui.i18n import set_language
    from tests.helpers.vaults import open_vault

    home, vault_id = vault
    taiwan = run_cli(home, "--lang", "zh-Hant", "rag", "status", vault_id, env=ENGLISH)
    assert taiwan.code == 0, taiwan.stderr
    assert "中沒有安裝 EmbeddingGemma；請執行 `memories rag model-install`" in taiwan.stdout
    assert "is not installed" not in taiwan.stdout
    shown = run_cli(home, "--json", "--lang", "zh-Hant", "rag", "status", vault_id, env=ENGLISH).json
    assert shown["problem"].startswith("EmbeddingGemma is not installed in ") and "problem_localizable" not in shown

    engine, own = open_vault(tmp_path / "home")  # the report as the resident engine sends it and a client reads it
    report = engine.status(own)
    received = StatusReport.from_json(report.to_wire())
    set_language("zh-Hans")
    assert received.problem_localized() == report.problem_localized()
    assert "中没有安装 EmbeddingGemma；请运行" in (received.problem_localized() or "")
    set_language("en")
    assert received.problem_localized() == received.problem == report.problem
    engine.lock()
