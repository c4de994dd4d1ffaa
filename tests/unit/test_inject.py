"""`memories inject`: every client format in a temporary home.

Each case runs the real merge code against real files: fresh, unchanged, a different entry
kept without --force and replaced with it (after a backup), other servers and settings
preserved, dry runs writing nothing, and unreadable configs reported and left untouched.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from memories_tui.skill.clients import CLIENTS, Launch, Roots, claude_desktop_config
from memories_tui.skill.inject import InjectReport, inject, skill_text

LAUNCH = Launch("/opt/memories/bin/memories", ("mcp", "--home", "/h", "--vault", "abc123"),
                (("MEMORIES_PASSPHRASE_COMMAND", "pass show memories"),))
SERVER_CLIENTS = list(CLIENTS)
SKILL_PATHS = {
    "claude-code": ".claude/skills/memories/SKILL.md",
    "codex": ".agents/skills/memories/SKILL.md",
    "cursor": ".cursor/skills/memories/SKILL.md",
    "vscode": ".copilot/skills/memories/SKILL.md",
}


def server_path(client: str, root: Path) -> Path:
    return {
        "claude-code": root / ".claude.json",
        "codex": root / ".codex" / "config.toml",
        "cursor": root / ".cursor" / "mcp.json",
        "vscode": root / ".vscode" / "mcp.json",
        "claude-desktop": claude_desktop_config(Roots.for_target(root)),
    }[client]


def section(client: str) -> str:
    return {"codex": "mcp_servers", "vscode": "servers"}.get(client, "mcpServers")


def load(client: str, path: Path) -> dict:
    if client == "codex":
        return tomllib.loads(path.read_text(encoding="utf-8"))
    return json.loads(path.read_text(encoding="utf-8"))


def run(root: Path, client: str, **kwargs) -> InjectReport:
    return inject([client], Roots.for_target(root), LAUNCH, **kwargs)


def by_what(report: InjectReport) -> dict[str, str]:
    return {r.what: r.status for r in report.results}


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_default_claude_desktop_paths_per_platform(tmp_path):
    name = Path("Claude") / "claude_desktop_config.json"
    assert claude_desktop_config(Roots(tmp_path, tmp_path, "darwin")) == \
        tmp_path / "Library" / "Application Support" / name
    assert claude_desktop_config(Roots(tmp_path, tmp_path, "win32", {"APPDATA": "C:/Users/u/AppData/Roaming"})) == \
        Path("C:/Users/u/AppData/Roaming") / name
    assert claude_desktop_config(Roots(tmp_path, tmp_path, "linux")) == tmp_path / ".config" / name


@pytest.mark.parametrize("client", SERVER_CLIENTS)
def test_fresh_install_writes_entry_and_skill(tmp_path, client):
    report = run(tmp_path, client)
    statuses = by_what(report)
    assert statuses["server"] == "created"
    entry = load(client, server_path(client, tmp_path))[section(client)]["memories"]
    assert entry["command"] == "/opt/memories/bin/memories"
    assert entry["args"] == ["mcp", "--home", "/h", "--vault", "abc123"]
    assert entry["env"] == {"MEMORIES_PASSPHRASE_COMMAND": "pass show memories"}
    if client in ("claude-code", "vscode"):
        assert entry["type"] == "stdio"
    if client in SKILL_PATHS:
        assert statuses["skill"] == "created"
        assert (tmp_path / SKILL_PATHS[client]).read_text(encoding="utf-8") == skill_text()
    else:
        assert statuses["skill"] == "skipped"
    assert not list(tmp_path.rglob("*.bak-*"))


@pytest.mark.parametrize("client", SERVER_CLIENTS)
def test_second_run_is_unchanged_and_writes_nothing(tmp_path, client):
    run(tmp_path, client)
    before = snapshot(tmp_path)
    mtimes = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    report = run(tmp_path, client)
    assert set(by_what(report).values()) <= {"unchanged", "skipped"}
    assert snapshot(tmp_path) == before
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()} == mtimes


def _alter(client: str, root: Path) -> None:
    path = server_path(client, root)
    if client == "codex":
        path.write_text('[mcp_servers.memories]\ncommand = "old-memories"\n', encoding="utf-8")
    else:
        path.write_text(json.dumps({section(client): {"memories": {"command": "old-memories", "args": []}}}),
                        encoding="utf-8")
    if client in SKILL_PATHS:
        (root / SKILL_PATHS[client]).write_text("my own edited skill\n", encoding="utf-8")


@pytest.mark.parametrize("client", SERVER_CLIENTS)
def test_different_entry_is_kept_without_force(tmp_path, client):
    run(tmp_path, client)
    _alter(client, tmp_path)
    before = snapshot(tmp_path)
    report = run(tmp_path, client)
    statuses = by_what(report)
    assert statuses["server"] == "kept"
    if client in SKILL_PATHS:
        assert statuses["skill"] == "kept"
    assert all("--force" in r.message for r in report.results if r.status == "kept")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("client", SERVER_CLIENTS)
def test_force_replaces_after_backup(tmp_path, client):
    run(tmp_path, client)
    _alter(client, tmp_path)
    old_server = server_path(client, tmp_path).read_bytes()
    report = run(tmp_path, client, force=True)
    statuses = by_what(report)
    assert statuses["server"] == "replaced"
    entry = load(client, server_path(client, tmp_path))[section(client)]["memories"]
    assert entry["command"] == "/opt/memories/bin/memories"
    server_result = next(r for r in report.results if r.what == "server")
    assert server_result.backup and Path(server_result.backup).read_bytes() == old_server
    if client in SKILL_PATHS:
        assert statuses["skill"] == "replaced"
        assert (tmp_path / SKILL_PATHS[client]).read_text(encoding="utf-8") == skill_text()
        skill_result = next(r for r in report.results if r.what == "skill")
        assert Path(skill_result.backup).read_text(encoding="utf-8") == "my own edited skill\n"


FOREIGN_JSON = {"numStartups": 7, "projects": {"/x": {"allowedTools": []}}}
FOREIGN_SERVER = {"command": "npx", "args": ["-y", "@acme/other-server"], "env": {"TOKEN_NAME": "ACME"}}


@pytest.mark.parametrize("client", SERVER_CLIENTS)
def test_foreign_servers_and_settings_preserved(tmp_path, client):
    path = server_path(client, tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if client == "codex":
        original = ('# my Codex settings\nmodel = "o3"  # keep this comment\n\n'
                    '[mcp_servers.other]\ncommand = "npx"\nargs = ["-y", "@acme/other-server"]\n\n'
                    '[profiles.fast]\nmodel = "o4-mini"\n')
        path.write_text(original, encoding="utf-8")
    else:
        document = {**FOREIGN_JSON, section(client): {"other": FOREIGN_SERVER}}
        path.write_text(json.dumps(document, indent=4) + "\n", encoding="utf-8")
    report = run(tmp_path, client)
    assert by_what(report)["server"] == "added"
    text = path.read_text(encoding="utf-8")
    merged = load(client, path)
    assert set(merged[section(client)]) == {"other", "memories"}
    if client == "codex":
        assert text.startswith('# my Codex settings\nmodel = "o3"  # keep this comment\n')
        assert merged["profiles"] == {"fast": {"model": "o4-mini"}}
        assert merged["mcp_servers"]["other"] == {"command": "npx", "args": ["-y", "@acme/other-server"]}
        assert "\n\n[profiles.fast]" in text  # layout kept: a blank line before the next table
    else:
        assert merged[section(client)]["other"] == FOREIGN_SERVER
        assert {k: merged[k] for k in FOREIGN_JSON} == FOREIGN_JSON
        assert '\n    "numStartups"' in text and text.endswith("}\n")  # its 4-space indent and final newline kept
        assert list(merged)[: len(FOREIGN_JSON)] == list(FOREIGN_JSON)  # key order kept
    backup = next(r for r in report.results if r.what == "server").backup
    assert backup and Path(backup).exists()


@pytest.mark.parametrize("client", SERVER_CLIENTS)
def test_dry_run_writes_nothing(tmp_path, client):
    report = run(tmp_path, client, dry_run=True)
    assert report.dry_run and by_what(report)["server"] == "created"
    assert snapshot(tmp_path) == {}
    run(tmp_path, client)
    _alter(client, tmp_path)
    before = snapshot(tmp_path)
    report = run(tmp_path, client, dry_run=True, force=True)
    assert by_what(report)["server"] == "replaced"
    assert snapshot(tmp_path) == before


def garbage_cases() -> list[tuple[str, bytes]]:
    cases = []
    for client in SERVER_CLIENTS:
        if client == "codex":
            bad = [b"[mcp_servers\ncommand = ", b"mcp_servers = [1, 2]\n", b"\xff\xfe not text"]
        else:
            bad = [b'{"' + section(client).encode() + b'": {', b"[1, 2]", b'{"' + section(client).encode() + b'": []}',
                   b"\xff\xfe not text"]
        cases += [(client, data) for data in bad]
    return cases


@pytest.mark.parametrize(("client", "data"), garbage_cases())
def test_malformed_config_is_reported_and_left_untouched(tmp_path, client, data):
    path = server_path(client, tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    other = "cursor" if client != "cursor" else "codex"
    report = inject([client, other], Roots.for_target(tmp_path), LAUNCH)
    failed = report.failed
    assert [r.path for r in failed] == [str(path)]
    assert "nothing was changed" in failed[0].message and str(path) in failed[0].message
    assert failed[0].entry and failed[0].entry["command"] == "/opt/memories/bin/memories"
    assert path.read_bytes() == data
    assert not list(path.parent.glob("*.bak-*"))
    others = [r for r in report.results if r.status != "error"]
    assert others and all(r.status in ("created", "skipped") for r in others)


def test_jsonc_comments_are_not_lost(tmp_path):
    path = tmp_path / ".vscode" / "mcp.json"
    path.parent.mkdir()
    original = '{\n  // my servers\n  "servers": {},\n}\n'
    path.write_text(original, encoding="utf-8")
    report = run(tmp_path, "vscode")
    assert report.failed and "comments or trailing commas" in report.failed[0].message
    assert path.read_text(encoding="utf-8") == original


def test_project_scope_uses_project_files(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    roots = Roots(home=home, project=project)
    inject(["claude-code", "cursor", "vscode"], roots, LAUNCH, scope="project")
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["memories"]["type"] == "stdio"
    assert (project / ".claude" / "skills" / "memories" / "SKILL.md").is_file()
    assert (project / ".cursor" / "mcp.json").is_file()
    assert (project / ".github" / "skills" / "memories" / "SKILL.md").is_file()
    assert (project / ".vscode" / "mcp.json").is_file()
    assert not home.exists()


def test_all_clients_at_once_and_file_mode_kept(tmp_path):
    config = tmp_path / ".claude.json"
    config.write_text('{"userID": "u"}', encoding="utf-8")
    config.chmod(0o600)
    report = inject(list(CLIENTS), Roots.for_target(tmp_path), LAUNCH)
    assert not report.failed
    assert {r.client for r in report.results} == set(CLIENTS)
    assert config.stat().st_mode & 0o777 == 0o600
    assert json.loads(config.read_text())["userID"] == "u"


def test_skill_has_frontmatter_and_names_every_tool():
    text = skill_text()
    assert text.startswith("---\nname: memories\ndescription: ")
    for tool in ("memory_retrieve", "memory_ask", "memory_search", "memory_read", "[S#]", "revision"):
        assert tool in text
