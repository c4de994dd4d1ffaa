"""`memories inject` against configs written in unusual but valid ways, links, read-only files and
duplicate keys. Real files in a temporary home, the real merge code.

The rule each test checks: either the file afterwards means exactly what it meant before plus
our entry, or it is left byte for byte as it was and its target says `error`; and every other
target still gets its own outcome.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path

import pytest

from memories_tui.skill.clients import CLIENTS, Launch, Roots
from memories_tui.skill.inject import InjectReport, inject

LAUNCH = Launch("/opt/memories/bin/memories", ("mcp", "--home", "/h", "--vault", "abc123"),
                (("MEMORIES_PASSPHRASE_COMMAND", "pass show memories"),))
ENTRY_TOML = {"command": "/opt/memories/bin/memories", "args": ["mcp", "--home", "/h", "--vault", "abc123"],
              "env": {"MEMORIES_PASSPHRASE_COMMAND": "pass show memories"}}
ENTRY_JSON = {"type": "stdio", **ENTRY_TOML}


def run(root: Path, *clients: str, **kwargs) -> InjectReport:
    return inject(list(clients), Roots.for_target(root), LAUNCH, **kwargs)


def outcome(report: InjectReport, client: str, what: str = "server"):  # noqa: ANN201
    (result,) = [r for r in report.results if r.client == client and r.what == what]
    return result


def codex_config(root: Path, text: str) -> Path:
    path = root / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


DOTTED = ('model = "o3"\nmcp_servers.other.command = "other-server"\nmcp_servers.other.args = ["--flag", "x"]\n\n'
          '[profiles.fast]\nmodel = "o4-mini"\n')
INLINE = '# servers\nmcp_servers = { other = { command = "x", args = ["a", "b"] } }\n\n[tui]\nnotifications = true\n'
TABLE_DOTTED = '[mcp_servers]\nother.command = "x"\nother.args = ["a"]\n\n[tui]\nnotifications = true\n'


@pytest.mark.parametrize("text", [DOTTED, INLINE, TABLE_DOTTED], ids=["dotted", "inline", "table-dotted"])
def test_codex_config_keeps_its_meaning_plus_our_entry(tmp_path, text):
    path = codex_config(tmp_path, text)
    before = tomllib.loads(text)
    report = run(tmp_path, "codex")
    assert outcome(report, "codex").status == "added"
    after = tomllib.loads(path.read_text(encoding="utf-8"))
    assert after == {**before, "mcp_servers": {**before["mcp_servers"], "memories": ENTRY_TOML}}
    assert text.splitlines()[0] in path.read_text(encoding="utf-8")  # comments and layout kept
    assert outcome(run(tmp_path, "codex"), "codex").status == "unchanged"  # and idempotent


def test_codex_entry_that_cannot_be_replaced_in_place_is_an_error_and_untouched(tmp_path):
    text = 'mcp_servers.memories.command = "old"\nmcp_servers.memories.args = ["x"]\nmodel = "o3"\n'
    path = codex_config(tmp_path, text)
    kept = run(tmp_path, "codex")
    assert outcome(kept, "codex").status == "kept"
    # tomlkit's in-place edit of these dotted keys does not keep the file's meaning: refused
    result = outcome(run(tmp_path, "codex", force=True), "codex")
    assert result.status == "error" and "dotted keys" in result.message and "by hand" in result.message
    assert path.read_text(encoding="utf-8") == text


def test_inject_all_gives_every_target_its_outcome(tmp_path):
    """An inline-table Codex config used to raise and stop `inject all` midway; a config nested
    too deeply to parse must not either. Every client's server and skill is reported."""
    codex_config(tmp_path, INLINE)
    deep = tmp_path / ".cursor" / "mcp.json"
    deep.parent.mkdir(parents=True)
    deep.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    report = run(tmp_path, *CLIENTS)
    assert {(r.client, r.what) for r in report.results} == {(c, w) for c in CLIENTS for w in ("server", "skill")}
    assert outcome(report, "codex").status == "added"
    assert outcome(report, "cursor").status == "error" and "nested too deeply" in outcome(report, "cursor").message
    assert outcome(report, "claude-code").status == "created" and outcome(report, "vscode").status == "created"


def test_symlinked_config_is_written_through_the_link(tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude.json"
    real.write_text('{\n  "theme": "dark",\n  "mcpServers": {}\n}\n', encoding="utf-8")
    link = tmp_path / ".claude.json"
    link.symlink_to(real)
    report = run(tmp_path, "claude-code")
    result = outcome(report, "claude-code")
    assert result.status == "added"
    assert link.is_symlink() and os.readlink(link) == str(real)  # the link is still the link
    assert json.loads(real.read_text(encoding="utf-8")) == {"theme": "dark", "mcpServers": {"memories": ENTRY_JSON}}
    assert result.backup is not None and Path(result.backup).parent == dotfiles  # backed up beside the real file


def test_dangling_symlink_is_an_error(tmp_path):
    link = tmp_path / ".claude.json"
    link.symlink_to(tmp_path / "nowhere.json")
    result = outcome(run(tmp_path, "claude-code"), "claude-code")
    assert result.status == "error" and "does not exist" in result.message
    assert link.is_symlink() and not (tmp_path / "nowhere.json").exists()


@pytest.mark.parametrize("dry_run", [False, True])
def test_read_only_config_is_respected(tmp_path, dry_run):
    path = tmp_path / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    original = '{"mcpServers": {"other": {"command": "x"}}}\n'
    path.write_text(original, encoding="utf-8")
    path.chmod(0o444)
    report = run(tmp_path, "cursor", "codex", dry_run=dry_run)
    result = outcome(report, "cursor")
    assert result.status == "error" and "read-only" in result.message and "0444" in result.message
    assert path.read_text(encoding="utf-8") == original and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert not list(path.parent.glob("mcp.json.bak-*"))
    assert outcome(report, "codex").status == "created"  # the others still done
    assert outcome(report, "cursor", "skill").status == "created"


def test_duplicate_json_keys_are_refused_not_merged_away(tmp_path):
    path = tmp_path / ".claude.json"
    original = ('{"mcpServers": {"a": {"command": "first"}},\n'
                ' "mcpServers": {"b": {"command": "second"}}}\n')
    path.write_text(original, encoding="utf-8")
    result = outcome(run(tmp_path, "claude-code"), "claude-code")
    assert result.status == "error" and "'mcpServers' twice" in result.message
    assert path.read_text(encoding="utf-8") == original
    nested = '{"mcpServers": {"a": {"command": "x", "command": "y"}}}'
    path.write_text(nested, encoding="utf-8")
    assert outcome(run(tmp_path, "claude-code"), "claude-code").status == "error"
    assert path.read_text(encoding="utf-8") == nested
