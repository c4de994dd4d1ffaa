"""Merge one server entry into an AI client's config file without losing anything else.

JSON files (Claude Code, Cursor, VS Code, Claude Desktop) are rewritten with the indent and
final newline they had, keys in their order. TOML (Codex) goes through tomlkit, which keeps
comments and layout. A file we cannot parse is never rewritten: the caller gets a
ConfigError naming the file. Every write is preceded by a backup copy and done atomically.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions

from ..errors import ConfigError

Entry = dict[str, Any]


@dataclass(frozen=True)
class MergePlan:
    """What merging an entry would do; `text` is the new file content (None when unchanged or kept)."""

    status: str  # created | added | unchanged | kept | replaced
    text: str | None
    existing: Entry | None


def plan_json(path: Path, section: str, name: str, entry: Entry, force: bool) -> MergePlan:
    """Plan putting `entry` at `{section: {name: entry}}` in the JSON file at `path`."""
    if not path.exists():
        return MergePlan("created", json.dumps({section: {name: entry}}, indent=2, ensure_ascii=False) + "\n", None)
    raw = _read(path)
    document = _load_json(path, raw)
    servers = document.get(section)
    if servers is None:
        servers = document[section] = {}
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: `{section}` is not a JSON object; fix it by hand, nothing was changed.")
    existing = servers.get(name)
    status = _decide(existing, entry, force)
    if status in ("unchanged", "kept"):
        return MergePlan(status, None, existing)
    servers[name] = entry
    text = json.dumps(document, indent=_indent_of(raw), ensure_ascii=False)
    return MergePlan(status, text + ("\n" if raw.endswith("\n") or not raw else ""), existing)


def plan_toml(path: Path, section: str, name: str, entry: Entry, force: bool) -> MergePlan:
    """Plan `[section.name]` in the TOML file at `path`, keeping its comments and layout."""
    raw = _read(path) if path.exists() else ""
    try:
        document = tomlkit.parse(raw)
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it by hand, nothing was changed.") from None
    servers = document.get(section)
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        document[section] = servers
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: `{section}` is not a TOML table; fix it by hand, nothing was changed.")
    current = servers.get(name)
    existing = current.unwrap() if current is not None and hasattr(current, "unwrap") else current
    status = "created" if not path.exists() else _decide(existing, entry, force)
    if status in ("unchanged", "kept"):
        return MergePlan(status, None, existing)
    table = tomlkit.table()
    for key, value in entry.items():
        table[key] = _inline(value) if isinstance(value, dict) else value
    table.add(tomlkit.nl())  # a blank line before whatever table follows
    if name in servers:
        del servers[name]
    servers[name] = table
    return MergePlan(status, tomlkit.dumps(document).rstrip("\n") + "\n", existing)


def plan_text(path: Path, content: str, force: bool) -> MergePlan:
    """Plan writing a whole file (the skill): same content is unchanged, other content is kept."""
    if not path.exists():
        return MergePlan("created", content, None)
    current = _read(path)
    if current == content:
        return MergePlan("unchanged", None, None)
    return MergePlan("replaced" if force else "kept", content if force else None, None)


def write(path: Path, text: str) -> Path | None:
    """Back up `path` (if it exists), then replace it atomically; returns the backup's path."""
    backup = None
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        backup = _backup_path(path)
        shutil.copy2(path, backup)
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return backup


def _decide(existing: Any, entry: Entry, force: bool) -> str:
    if existing is None:
        return "added"
    if existing == entry:
        return "unchanged"
    return "replaced" if force else "kept"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; fix it by hand, nothing was changed.") from None
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}.") from None


_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)


def _load_json(path: Path, raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as exc:
        stripped = _COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", raw)
        stripped = re.sub(r",(\s*[}\]])", r"\1", stripped)
        try:
            json.loads(stripped)
        except json.JSONDecodeError:
            raise ConfigError(f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                              "fix it by hand, nothing was changed.") from None
        raise ConfigError(f"{path} has comments or trailing commas that a rewrite would lose; add the "
                          "`memories` entry by hand (`--dry-run --json` shows it), nothing was changed.") from None
    if not isinstance(document, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix it by hand, nothing was changed.")
    return document


def _indent_of(raw: str) -> int | str:
    match = re.search(r"\n([ \t]+)\S", raw)
    if not match:
        return 2
    indent = match.group(1)
    return "\t" if indent.startswith("\t") else len(indent)


def _inline(value: dict[str, Any]) -> Any:
    table = tomlkit.inline_table()
    table.update(value)
    return table


def _backup_path(path: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S")
    candidate = path.with_name(f"{path.name}.bak-{stamp}")
    counter = 1
    while candidate.exists():
        counter += 1
        candidate = path.with_name(f"{path.name}.bak-{stamp}-{counter}")
    return candidate
