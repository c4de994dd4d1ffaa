"""Merge one server entry into an AI client's config file without losing anything else.

JSON files (Claude Code, Cursor, VS Code, Claude Desktop) are rewritten with the indent and
final newline they had, keys in their order. TOML (Codex) goes through tomlkit, which keeps
comments and layout, and every new TOML text is checked to mean the old file plus our entry.
A file we cannot parse, or whose meaning a rewrite would change (duplicate JSON keys, TOML an
edit cannot extend), is never rewritten: the caller gets a ConfigError naming the file. Every
write is preceded by a backup copy and done atomically, through a symbolic link to its target;
a read-only file is refused, not replaced.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import stat
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.items

from ..engine import read_limited
from ..errors import ConfigError, InputRefusedError
from ..i18n import N_, msg

Entry = dict[str, Any]
MAX_CONFIG_BYTES = 8 * 1024 * 1024  # AI clients' config files are kilobytes; read no more than this


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
        raise ConfigError(msg("{path}: `{section}` is not a JSON object; fix it by hand, nothing was changed.",
                              path=path, section=section))
    existing = servers.get(name)
    status = _decide(existing, entry, force)
    if status in ("unchanged", "kept"):
        return MergePlan(status, None, existing)
    servers[name] = entry
    text = _dump_json(document, _indent_of(raw))
    return MergePlan(status, text + ("\n" if raw.endswith("\n") or not raw else ""), existing)


def plan_toml(path: Path, section: str, name: str, entry: Entry, force: bool) -> MergePlan:
    """Plan `[section.name]` in the TOML file at `path`, keeping its comments and layout.

    TOML can say one thing in several shapes (tables, dotted keys, inline tables), and an edit
    in one shape can change what another means. So every candidate text is parsed again with
    the standard parser and used only if it means exactly the old file plus the entry: first
    tomlkit's in-place edit, then (for a new entry) a `[section.name]` table appended at the end.
    When neither does, the file is left alone and the error says to add the entry by hand.
    """
    raw = _read(path) if path.exists() else ""
    try:
        data = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(msg("{path} is not valid TOML ({reason}); fix it by hand, nothing was changed.",
                              path=path, reason=exc)) from None
    except RecursionError:
        raise ConfigError(msg("{path} is nested too deeply to read; nothing was changed.", path=path)) from None
    servers = data.get(section)
    if servers is not None and not isinstance(servers, dict):
        raise ConfigError(msg("{path}: `{section}` is not a TOML table; fix it by hand, nothing was changed.",
                              path=path, section=section))
    existing = (servers or {}).get(name)
    status = "created" if not path.exists() else _decide(existing, entry, force)
    if status in ("unchanged", "kept"):
        return MergePlan(status, None, existing)
    expected = copy.deepcopy(data)
    expected.setdefault(section, {})[name] = entry
    candidates = [lambda: _toml_edit(raw, section, name, entry)]
    if existing is None:
        candidates.append(lambda: _toml_append(raw, section, name, entry))
    for make in candidates:
        try:
            text = make()
            if tomllib.loads(text) == expected:
                return MergePlan(status, text, existing)
        except Exception:  # noqa: BLE001, S112 - any failure of one shape: try the next, else refuse
            continue
    raise ConfigError(msg("{path}: cannot write the `{name}` entry into `{section}` in the shape this file "
                          "uses (e.g. dotted keys) without changing what the rest of it means; edit it by "
                          "hand (`--dry-run --json` shows the entry), nothing was changed.",
                          path=path, name=name, section=section))


def _toml_edit(raw: str, section: str, name: str, entry: Entry) -> str:
    document = tomlkit.parse(raw)
    servers = document.get(section)
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        document[section] = servers
    inline = isinstance(servers, tomlkit.items.InlineTable)
    table = _inline(entry) if inline else tomlkit.table()
    if not inline:
        for key, value in entry.items():
            table[key] = _inline(value) if isinstance(value, dict) else value
        table.add(tomlkit.nl())  # a blank line before whatever table follows
    if name in servers:
        del servers[name]
    servers[name] = table
    return tomlkit.dumps(document).rstrip("\n") + "\n"


def _toml_append(raw: str, section: str, name: str, entry: Entry) -> str:
    lines = [f"[{section}.{name}]"]
    for key, value in entry.items():
        item = _inline(value) if isinstance(value, dict) else tomlkit.item(value)
        lines.append(f"{key} = {item.as_string()}")
    head = raw.rstrip("\n")
    return (head + "\n\n" if head else "") + "\n".join(lines) + "\n"


def plan_text(path: Path, content: str, force: bool) -> MergePlan:
    """Plan writing a whole file (the skill): same content is unchanged, other content is kept."""
    if not path.exists():
        return MergePlan("created", content, None)
    current = _read(path)
    if current == content:
        return MergePlan("unchanged", None, None)
    return MergePlan("replaced" if force else "kept", content if force else None, None)


def writable_target(path: Path) -> Path:
    """The file a write to `path` changes: a symbolic link is followed (its target is written,
    the link stays), a read-only or non-regular file is refused (ConfigError), not replaced."""
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    if path.is_symlink() and not target.exists():
        raise ConfigError(msg("{path} is a symbolic link to {target}, which does not exist; nothing was "
                              "changed.", path=path, target=target))
    if not target.exists():
        return target
    info = target.stat()
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(msg("{path} is not a regular file; nothing was changed.", path=path))
    if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise ConfigError(msg("{path} is read-only (mode {mode:04o}); make it writable to let inject change "
                              "it, or add the entry by hand. Nothing was changed.",
                              path=path, mode=stat.S_IMODE(info.st_mode)))
    return target


def write(path: Path, text: str) -> Path | None:
    """Back up `path` (if it exists), then replace it atomically; returns the backup's path.

    Through a symbolic link the link's target is replaced (and backed up beside it)."""
    target = writable_target(path)
    backup = None
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        backup = _backup_path(target)
        shutil.copy2(target, backup)
    mode = target.stat().st_mode & 0o777 if target.exists() else None
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, target)
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
    """The file's text, read as every user-named file is (the engine's read_limited): a FIFO
    or device there is refused instead of hanging inject, and a client config is never
    megabytes long."""
    try:
        data = read_limited(path, MAX_CONFIG_BYTES, what=N_("AI client config"),
                            advice=N_("Add the entry by hand (`--dry-run --json` shows it)."))
    except InputRefusedError as exc:
        raise ConfigError(msg("{problem} Nothing was changed.", problem=exc)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(msg("{path} is not UTF-8 text; fix it by hand, nothing was changed.", path=path)) from None


class _Number(float):
    """A JSON number whose float (or int) would not be written back as it was written
    (`1e400` would become `Infinity`, which is not JSON; `1.50` would become `1.5`): it keeps
    its text, and `_dump_json` writes that text."""

    text: str

    def __new__(cls, text: str) -> _Number:
        try:
            value = float(text)
        except (OverflowError, ValueError):
            value = float("nan")
        number = super().__new__(cls, value)
        number.text = text
        return number


def _parse_float(text: str) -> float:
    value = float(text)
    return value if repr(value) == text else _Number(text)


def _parse_int(text: str) -> int | float:
    if len(text) <= 200:  # a longer integer (Python refuses over 4,300 digits) stays text
        value = int(text)
        if str(value) == text:  # `-0` is written back as `-0`, not `0`
            return value
    return _Number(text)


def _dump_json(document: Any, indent: int | str) -> str:
    """`document` as JSON, each `_Number` written exactly as it was read."""
    marker = f"\x00{os.urandom(8).hex()}:"
    kept: list[str] = []

    def mark(value: Any) -> Any:
        if isinstance(value, _Number):
            kept.append(value.text)
            return f"{marker}{len(kept) - 1}"
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mark(v) for v in value]
        return value

    text = json.dumps(mark(document), indent=indent, ensure_ascii=False, allow_nan=False)
    quoted = json.dumps(marker, ensure_ascii=False)[:-1]  # `"` and the marker as JSON writes it
    return re.sub(re.escape(quoted) + r'(\d+)"', lambda m: kept[int(m.group(1))], text)


_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)


def _load_json(path: Path, raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        document = json.loads(raw, object_pairs_hook=_no_duplicate_keys, parse_float=_parse_float,
                              parse_int=_parse_int, parse_constant=_Number)
    except RecursionError:
        raise ConfigError(msg("{path} is nested too deeply to read; nothing was changed.", path=path)) from None
    except _DuplicateKey as dup:
        raise ConfigError(msg("{path} has the key {key!r} twice in one object; a rewrite would keep only "
                              "one of them and change what the file means. Remove the duplicate by hand, "
                              "nothing was changed.", path=path, key=dup.key[:60])) from None
    except json.JSONDecodeError as exc:
        stripped = _COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", raw)
        stripped = re.sub(r",(\s*[}\]])", r"\1", stripped)
        try:
            json.loads(stripped)
        except json.JSONDecodeError:
            raise ConfigError(msg("{path} is not valid JSON (line {lineno}, column {colno}: {problem}); fix it by "
                                  "hand, nothing was changed.",
                                  path=path, lineno=exc.lineno, colno=exc.colno, problem=exc.msg)) from None
        raise ConfigError(msg("{path} has comments or trailing commas that a rewrite would lose; add the "
                              "`memories` entry by hand (`--dry-run --json` shows it), nothing was changed.",
                              path=path)) from None
    if not isinstance(document, dict):
        raise ConfigError(msg("{path} does not hold a JSON object; fix it by hand, nothing was changed.", path=path))
    return document


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


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
