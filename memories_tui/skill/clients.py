"""Where each AI client keeps its MCP server list and its skills, and the entry it expects.

Checked against each client's documentation: Claude Code `~/.claude.json` (user)
or `.mcp.json` (project), key `mcpServers`, skills in `.claude/skills/`; Codex
`~/.codex/config.toml` `[mcp_servers.NAME]`, skills in `~/.agents/skills/`; Cursor
`~/.cursor/mcp.json` or `.cursor/mcp.json`, key `mcpServers`, skills in `.cursor/skills/`;
VS Code `.vscode/mcp.json`, key `servers`, Copilot skills in `~/.copilot/skills/` or
`.github/skills/`; Claude Desktop `claude_desktop_config.json` (per platform), key
`mcpServers`; its skills are uploaded in the app, so there is no file to write.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLIENTS = ("claude-code", "codex", "cursor", "vscode", "claude-desktop")
SERVER_NAME = "memories"
SKILL_DIR = "memories"


@dataclass(frozen=True)
class Roots:
    """The folders client configs are resolved against. `--target DIR` makes both DIR (tests)."""

    home: Path
    project: Path
    platform: str = sys.platform
    environ: dict[str, str] = field(default_factory=dict)  # only consulted without --target

    @classmethod
    def for_target(cls, target: str | os.PathLike[str] | None) -> Roots:
        if target is not None:
            root = Path(target).expanduser().resolve()
            return cls(home=root, project=root)
        return cls(home=Path.home(), project=Path.cwd(), environ=dict(os.environ))


@dataclass(frozen=True)
class Launch:
    """How a client should start the server: command, arguments and environment."""

    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()

    def entry(self, *, stdio_type: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "stdio"} if stdio_type else {}
        out["command"] = self.command
        out["args"] = list(self.args)
        if self.env:
            out["env"] = dict(self.env)
        return out


@dataclass(frozen=True)
class Target:
    """One file to write for one client: its MCP server entry or its copy of the skill."""

    client: str
    what: str  # "server" | "skill"
    path: Path | None  # None: this client has no file for it (see note)
    format: str = "json"  # json | toml | text
    section: str = "mcpServers"
    entry: dict[str, Any] | None = None
    note: str = ""


def targets(client: str, roots: Roots, launch: Launch, scope: str) -> list[Target]:
    """The server and skill targets of `client` in `scope` ("user" or "project")."""
    home, project = roots.home, roots.project
    base = project if scope == "project" else home
    if client == "claude-code":
        config = project / ".mcp.json" if scope == "project" else home / ".claude.json"
        return [Target(client, "server", config, entry=launch.entry(stdio_type=True)),
                _skill(client, base / ".claude" / "skills")]
    if client == "codex":
        codex_home = _codex_home(roots, scope)
        return [Target(client, "server", codex_home / "config.toml", format="toml", section="mcp_servers",
                       entry=launch.entry(stdio_type=False)),
                _skill(client, base / ".agents" / "skills")]
    if client == "cursor":
        return [Target(client, "server", base / ".cursor" / "mcp.json", entry=launch.entry(stdio_type=False)),
                _skill(client, base / ".cursor" / "skills")]
    if client == "vscode":
        skills = project / ".github" / "skills" if scope == "project" else home / ".copilot" / "skills"
        return [Target(client, "server", project / ".vscode" / "mcp.json", section="servers",
                       entry=launch.entry(stdio_type=True)),
                _skill(client, skills)]
    if client == "claude-desktop":
        return [Target(client, "server", claude_desktop_config(roots), entry=launch.entry(stdio_type=False)),
                Target(client, "skill", None, format="text",
                       note="Claude Desktop takes skills only through its app: upload SKILL.md from "
                            "a skill folder written for another client, or from the memories_tui package.")]
    raise ValueError(f"unknown client {client!r}")


def claude_desktop_config(roots: Roots) -> Path:
    """claude_desktop_config.json: macOS Application Support, Windows %APPDATA%, else XDG config."""
    name = Path("Claude") / "claude_desktop_config.json"
    if roots.platform == "darwin":
        return roots.home / "Library" / "Application Support" / name
    if roots.platform.startswith("win"):
        appdata = roots.environ.get("APPDATA")
        return (Path(appdata) if appdata else roots.home / "AppData" / "Roaming") / name
    xdg = roots.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else roots.home / ".config") / name


def _codex_home(roots: Roots, scope: str) -> Path:
    if scope == "project":
        return roots.project / ".codex"
    configured = roots.environ.get("CODEX_HOME")
    return Path(configured) if configured else roots.home / ".codex"


def _skill(client: str, skills_dir: Path) -> Target:
    return Target(client, "skill", skills_dir / SKILL_DIR / "SKILL.md", format="text")
