"""config.example.toml and the settings dataclasses say the same thing: every declared key is
documented with its default, and the example documents no key the parser would refuse."""

from __future__ import annotations

import re
import tomllib
import typing
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

import pytest

from memories_tui.config import SERVICE_KEYS, Config, HttpSettings, Limits, RemoteService, parse_config
from memories_tui.config_values import Setting, declared, declared_default
from memories_tui.errors import ConfigError
from tests.helpers.paths import REPO_ROOT

EXAMPLE = REPO_ROOT / "memories_tui" / "config.example.toml"
FREE_TABLES = {"tui.keys"}  # binding ids, not declared keys
_TABLE = re.compile(r"#?\s*\[([\w.]+)\]\s*$")
_KEY = re.compile(r"#?\s*([a-z_]+)\s*=\s*(.+)$")


def declared_tables() -> dict[str, dict[str, Any]]:
    """Each table the declaration knows, with its keys and their plain defaults (MISSING when
    the default is computed, absent or required)."""
    tables = _walk(Config, "")
    for name, keys in SERVICE_KEYS.items():
        tables[name] = {k: v for k, v in tables[name].items() if k in keys}
    tables.pop("")  # the top level holds only tables
    return tables


def _walk(cls: type, prefix: str) -> dict[str, dict[str, Any]]:
    hints = typing.get_type_hints(cls)
    tables: dict[str, dict[str, Any]] = {prefix: {}}
    for key, how in declared(cls).items():
        name = f"{prefix}.{key}" if prefix else key
        if how.section:
            inner = typing.get_args(hints[key]) or (hints[key],)
            tables.update(_walk(next(t for t in inner if t is not type(None)), name))
            continue
        plain = next(f for f in fields(cls) if f.name == key).default_factory is MISSING
        default = declared_default(cls, key) if plain else MISSING
        tables[prefix][key] = MISSING if default is None else default
    return tables


def example_tables(text: str) -> dict[str, dict[str, Any]]:
    """Each table of the example (commented out or not) with the values it shows."""
    tables: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        if table := _TABLE.match(line):
            current = tables.setdefault(table.group(1), {})
        elif (key := _KEY.match(line)) and current is not None:
            current[key.group(1)] = tomllib.loads(f"v = {key.group(2)}")["v"]
    return tables


def differences(declared_: dict[str, dict[str, Any]], shown: dict[str, dict[str, Any]]) -> list[str]:
    found = []
    for table in sorted(set(declared_) | set(shown) - FREE_TABLES):
        keys, values = declared_.get(table), shown.get(table)
        if keys is None or values is None:
            found.append(f"[{table}] is {'not declared' if keys is None else 'not in the example'}")
            continue
        found += [f"[{table}] {k} is not declared" for k in sorted(set(values) - set(keys))]
        for key, default in keys.items():
            if key not in values and f"{table}.{key}" not in shown:
                found.append(f"[{table}] {key} is not in the example")
            elif key in values and default is not MISSING and values[key] != default:
                found.append(f"[{table}] {key} shows {values[key]!r}, the default is {default!r}")
    return found


def uncommented(text: str) -> str:
    """The example with every commented table and key line switched on."""
    return "\n".join(re.sub(r"^#\s*(?=\[[\w.]+\]\s*$|\"?[\w.]+\"?\s*=)", "", line) for line in text.splitlines())


def test_the_example_documents_every_declared_key_with_its_default():
    assert differences(declared_tables(), example_tables(EXAMPLE.read_text(encoding="utf-8"))) == []


def test_the_example_switched_on_is_a_valid_config_with_the_declared_defaults(tmp_path: Path):
    data = tomllib.loads(uncommented(EXAMPLE.read_text(encoding="utf-8")))
    config = parse_config(data, tmp_path / "config.toml", tmp_path)
    assert config.rag.http.download_timeout_seconds == declared_default(type(config.rag.http), "download_timeout_seconds")
    assert config.rag.embedding is not None and config.rag.embedding.batch_size == 32
    assert config.sources.rescan_seconds == 300


def test_the_comparison_finds_a_wrong_default_a_missing_key_and_an_unknown_one():
    text = EXAMPLE.read_text(encoding="utf-8")
    changed = text.replace("# retries = 2", "# retries = 3").replace("# keep = 10\n", "").replace(
        "# prune = false", "# prune = false\n# prnue = true")
    assert differences(declared_tables(), example_tables(changed)) == [
        "[backup] keep is not in the example",
        "[rag.http] retries shows 3, the default is 2",
        "[sources] prnue is not declared",
    ]


@pytest.mark.parametrize(("table", "key", "value", "says"), [
    ("rag.http", "retries", 9, "rag.http.retries must be an integer from 0 to 5; got 9."),
    ("sync", "background", "yes", "sync.background must be true or false."),
    ("rag", "fusion", "max", "rag.fusion must be one of score, rrf; got 'max'."),
    ("sources", "debounce_seconds", 0, "sources.debounce_seconds must be a number from 0.05 to 600"),
])
def test_a_declared_bound_is_the_one_enforced(tmp_path: Path, table: str, key: str, value: object, says: str):
    data: dict[str, Any] = {key: value}
    for part in reversed(table.split(".")):
        data = {part: data}
    with pytest.raises(ConfigError) as err:
        parse_config(data, tmp_path / "config.toml", tmp_path)
    assert says in err.value.message


def test_every_declared_key_says_how_it_is_checked():
    """A number without bounds would be checked against [0, 0]: each one states its range."""
    for table, cls_keys in declared_tables().items():
        assert cls_keys or table in SERVICE_KEYS, table
    for cls in (Limits, HttpSettings, RemoteService, *typing.get_type_hints(Config).values()):
        if not hasattr(cls, "__dataclass_fields__"):
            continue
        hints = typing.get_type_hints(cls)
        for key, how in declared(cls).items():
            kind = typing.get_args(hints[key]) or (hints[key],)
            if (int in kind or float in kind) and not how.custom:
                assert isinstance(how, Setting) and how.lo is not None and how.hi is not None, f"{cls.__name__}.{key}"
