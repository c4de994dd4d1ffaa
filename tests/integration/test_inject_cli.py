"""`memories inject` through the real CLI: JSON report, vault resolution, refusals, exit codes."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

from tests.helpers.cli import call_cli
from tests.helpers.vaults import PASS, create_vault


def test_inject_all_reports_each_target_and_registers_the_vault_id(home, tmp_path):
    vault_id = create_vault(home, "notes")
    target = tmp_path / "target"
    result = call_cli(home, "inject", "all", "--target", str(target), "--vault", "notes",
                     "--passphrase-command", "pass show memories", "--expires", "8h", "--json")
    assert result.code == 0, result.stderr
    report = result.json
    assert report["dry_run"] is False
    assert {(t["client"], t["what"]) for t in report["targets"]} == {
        (c, w) for c in ("claude-code", "codex", "cursor", "vscode", "claude-desktop") for w in ("server", "skill")}
    codex = tomllib.loads((target / ".codex" / "config.toml").read_text())["mcp_servers"]["memories"]
    assert codex["args"][-7:] == ["mcp", "--home", str(home), "--vault", vault_id, "--expires", "8h"]
    assert codex["env"] == {"MEMORIES_PASSPHRASE_COMMAND": "pass show memories"}
    assert codex["command"] == str(Path(sys.executable).parent / "memories")  # the script beside this Python
    again = call_cli(home, "inject", "all", "--target", str(target), "--vault", vault_id, "--passphrase-command",
                    "pass show memories", "--expires", "8h", "--json")
    assert {t["status"] for t in again.json["targets"]} == {"unchanged", "skipped"}


def test_only_vault_is_the_default_and_passphrase_file_is_absolute(home, tmp_path):
    vault_id = create_vault(home, "notes")
    secret = tmp_path / "pass.txt"
    secret.write_text("correct horse\n")
    result = call_cli(home, "inject", "cursor", "--target", str(tmp_path / "t"), "--passphrase-file",
                     str(secret), "--json")
    assert result.code == 0, result.stderr
    entry = json.loads((tmp_path / "t" / ".cursor" / "mcp.json").read_text())["mcpServers"]["memories"]
    assert entry["args"][-4:] == ["--vault", vault_id, "--passphrase-file", str(secret)]
    assert PASS not in (tmp_path / "t" / ".cursor" / "mcp.json").read_text()
    assert result.json["notes"] == []


def test_dry_run_writes_nothing_and_says_so(home, tmp_path):
    create_vault(home, "notes")
    result = call_cli(home, "inject", "all", "--target", str(tmp_path / "t"), "--dry-run")
    assert result.code == 0, result.stderr
    assert "would be created" in result.stdout and "nothing was written" in result.stderr
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize(("args", "code", "words"), [
    (["inject", "emacs"], "usage_error", "invalid choice"),
    (["inject", "all", "--vault", "nope"], "not_found", "No vault 'nope'"),
    (["inject", "all", "--expires", "soon"], "usage_error", "duration"),
    (["inject", "all", "--passphrase-file", "/no/such/file"], "usage_error", "does not exist"),
    (["inject", "all", "--passphrase-file", "x", "--passphrase-command", "y"], "usage_error", "not both"),
])
def test_bad_input_is_a_clear_error(home, tmp_path, args, code, words):
    create_vault(home, "notes")
    result = call_cli(home, *args, "--target", str(tmp_path / "t"), "--json")
    assert result.code != 0
    assert result.json["error"]["code"] == code and words in result.json["error"]["message"]
    assert not (tmp_path / "t").exists()


def test_several_vaults_need_a_choice_and_none_is_an_error(home, tmp_path):
    empty = call_cli(home, "inject", "all", "--target", str(tmp_path / "t"), "--json")
    assert empty.code == 1 and "vault create" in empty.json["error"]["message"]
    create_vault(home, "notes")
    create_vault(home, "work")
    result = call_cli(home, "inject", "all", "--target", str(tmp_path / "t"), "--json")
    assert result.code == 2 and "--vault" in result.json["error"]["message"]
    assert "notes" in result.json["error"]["message"] and "work" in result.json["error"]["message"]


def test_a_malformed_config_fails_the_command_but_not_the_others(home, tmp_path):
    create_vault(home, "notes")
    bad = tmp_path / "t" / ".cursor" / "mcp.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"mcpServers": {"other": ')
    result = call_cli(home, "inject", "all", "--target", str(tmp_path / "t"), "--json")
    assert result.code == 1
    assert result.json["error"]["code"] == "config_invalid" and str(bad) in result.json["error"]["message"]
    statuses = {(t["client"], t["what"]): t["status"] for t in result.json["targets"]}
    assert statuses[("cursor", "server")] == "error" and statuses[("codex", "server")] == "created"
    assert bad.read_text() == '{"mcpServers": {"other": '
    human = call_cli(home, "inject", "cursor", "--target", str(tmp_path / "t"))
    assert human.code == 1 and "Traceback" not in human.stderr and "not valid JSON" in human.stdout


def test_inject_all_reports_every_target_when_some_cannot_be_written(home, tmp_path):
    """An inline-table Codex config (once an internal_error that stopped the run), a read-only
    Cursor config and a symlinked .claude.json: each target says what happened to it."""
    create_vault(home, "notes")
    target = tmp_path / "t"
    codex = target / ".codex" / "config.toml"
    codex.parent.mkdir(parents=True)
    codex.write_text('mcp_servers = { other = { command = "x", args = ["a"] } }\n', encoding="utf-8")
    cursor = target / ".cursor" / "mcp.json"
    cursor.parent.mkdir(parents=True)
    cursor.write_text("{}\n", encoding="utf-8")
    cursor.chmod(0o444)
    real = tmp_path / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_text("{}\n", encoding="utf-8")
    (target / ".claude.json").symlink_to(real)
    result = call_cli(home, "inject", "all", "--target", str(target), "--json")
    assert result.code == 1 and "Traceback" not in result.stderr
    statuses = {(t["client"], t["what"]): t["status"] for t in result.json["targets"]}
    assert statuses[("codex", "server")] == "added"
    assert tomllib.loads(codex.read_text(encoding="utf-8"))["mcp_servers"]["other"] == {"command": "x", "args": ["a"]}
    assert statuses[("cursor", "server")] == "error" and cursor.read_text(encoding="utf-8") == "{}\n"
    assert statuses[("claude-code", "server")] == "added" and (target / ".claude.json").is_symlink()
    assert "memories" in json.loads(real.read_text(encoding="utf-8"))["mcpServers"]
    assert statuses[("vscode", "server")] == "created" and statuses[("claude-desktop", "server")] == "created"
    assert len(statuses) == 10


def test_a_fifo_or_a_huge_file_at_a_client_config_is_refused_without_reading_it(home, tmp_path):
    import os

    from tests.helpers.cli import run_cli

    create_vault(home, "notes")
    target = tmp_path / "t"
    fifo = target / ".cursor" / "mcp.json"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    huge = target / ".claude.json"
    with huge.open("wb") as handle:  # 200 MB on paper, no blocks on disk
        handle.truncate(200 * 1024 * 1024)
    # a subprocess: a FIFO opened for reading would block this test forever, not just fail it
    result = run_cli(home, "inject", "all", "--target", str(target), "--json", timeout=60)
    assert result.code == 1 and "Traceback" not in result.stderr, result.stderr
    by_client = {t["client"]: t for t in result.json["targets"] if t["what"] == "server"}
    assert by_client["cursor"]["status"] == "error" and "not a regular file" in by_client["cursor"]["message"]
    assert by_client["claude-code"]["status"] == "error" and "209,715,200 bytes" in by_client["claude-code"]["message"]
    assert by_client["codex"]["status"] == "created"
    assert huge.stat().st_size == 200 * 1024 * 1024 and os.path.exists(fifo)


def test_numbers_in_a_client_config_are_written_back_as_they_were(home, tmp_path):
    create_vault(home, "notes")
    config = tmp_path / "t" / ".cursor" / "mcp.json"
    config.parent.mkdir(parents=True)
    config.write_text('{"x": 1e400, "y": [1.50, -0, 1E5, 0.1, 123456789012345678901234567890], "s": "1e400"}\n')
    result = call_cli(home, "inject", "cursor", "--target", str(tmp_path / "t"), "--json")
    assert result.code == 0, result.stdout + result.stderr
    text = config.read_text()
    assert "Infinity" not in text and '"x": 1e400' in text and '"s": "1e400"' in text
    for literal in ("1.50", "-0", "1E5", "0.1", "123456789012345678901234567890"):
        assert f"    {literal}" in text, text
    document = json.loads(text)  # still JSON, our entry added
    assert "memories" in document["mcpServers"]
