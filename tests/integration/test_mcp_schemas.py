"""The MCP tools' published schemas, against a committed record of them.

AI clients are written against these schemas: a change to the result types may add fields,
descriptions or narrower types to an output schema (strictly richer), never take any away,
loosen a type or make a field optional; input schemas stay exactly as they were. Titles and
`$defs` names are presentation and are not compared.

To record them again after an intended change:
    MEMORIES_MCP_SCHEMA_UPDATE=1 .venv/bin/pytest tests/integration/test_mcp_schemas.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.helpers.cli import call_cli
from tests.helpers.vaults import PASS

SERVER = Path(__file__).resolve().parents[1] / "helpers" / "mcp_server.py"
RECORD = Path(__file__).resolve().parents[1] / "golden" / "mcp" / "schemas.json"


def _inline(schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """The schema with every `$ref` replaced by its definition and titles dropped."""
    if defs is None and isinstance(schema, dict):
        defs = schema.get("$defs", {})
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _inline(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)  # type: ignore[index]
        return {k: _inline(v, defs) for k, v in schema.items()
                if k != "$defs" and not (k == "title" and isinstance(v, str))}  # a property may be named title
    if isinstance(schema, list):
        return [_inline(v, defs) for v in schema]
    return schema


def _richer(new: Any, old: Any, where: str) -> list[str]:
    """Where `new` gives a client less than `old` did."""
    if not isinstance(old, dict):
        return [] if new == old else [f"{where}: {old!r} became {new!r}"]
    if not isinstance(new, dict):
        return [f"{where}: became {new!r}"]
    problems: list[str] = []
    for key, value in old.items():
        if key == "description":
            if not new.get("description"):
                problems.append(f"{where}: lost its description")
        elif key == "properties":
            for name, prop in value.items():
                if name not in new.get("properties", {}):
                    problems.append(f"{where}.{name}: removed")
                else:
                    problems += _richer(new["properties"][name], prop, f"{where}.{name}")
        elif key == "required":
            problems += [f"{where}.{name}: no longer required" for name in value if name not in new.get("required", [])]
        elif key == "anyOf":
            new_any = new.get("anyOf", [new])
            for option in value:
                if not any(not _richer(candidate, option, where) for candidate in new_any):
                    problems.append(f"{where}: no longer allows {option!r}")
        elif key not in new:
            problems.append(f"{where}: lost {key!r}")
        elif isinstance(value, dict | list) or key in ("type", "additionalProperties", "items", "enum"):
            problems += _richer(new[key], value, f"{where}.{key}")
        elif new[key] != value:
            problems.append(f"{where}.{key}: {value!r} became {new[key]!r}")
    return problems


async def _listed_schemas(home: Path) -> dict[str, dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIES_")}
    env.update(MEMORIES_PASSPHRASE=PASS, PYTHONIOENCODING="utf-8")
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "mcp", "--home", str(home),
                                                                  "--vault", "notes"], env=env)
    with open(home.parent / "stderr.log", "w+", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
            tools = (await client.list_tools()).tools
    return {t.name: {"input": t.input_schema, "output": t.output_schema} for t in tools}


async def test_tool_schemas_are_unchanged_or_strictly_richer(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert call_cli(home, "vault", "create", "notes").code == 0
    listed = await _listed_schemas(home)
    if os.environ.get("MEMORIES_MCP_SCHEMA_UPDATE"):
        RECORD.parent.mkdir(parents=True, exist_ok=True)
        RECORD.write_text(json.dumps(listed, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    recorded = json.loads(RECORD.read_text(encoding="utf-8"))
    assert sorted(listed) == sorted(recorded)
    for name, schemas in recorded.items():
        assert _inline(listed[name]["input"]) == _inline(schemas["input"]), f"{name}: input schema changed"
        problems = _richer(_inline(listed[name]["output"]), _inline(schemas["output"]), name)
        assert not problems, "\n".join(problems)


def test_the_comparison_notices_what_a_client_would_lose() -> None:
    old = {"type": "object", "required": ["a", "b"], "properties": {
        "a": {"type": "string", "description": "x"}, "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}
    richer = {"type": "object", "required": ["a", "b", "c"], "properties": {
        "a": {"type": "string", "enum": ["p", "q"], "description": "y"},
        "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]}, "c": {"type": "number"}}}
    assert _richer(richer, old, "t") == []
    assert _richer({**richer, "required": ["b"]}, old, "t") == ["t.a: no longer required"]
    assert _richer({**richer, "properties": {"b": richer["properties"]["b"]}}, old, "t") == ["t.a: removed"]
    loose = {**richer, "properties": {**richer["properties"], "b": {"type": "integer"}}}
    assert _richer(loose, old, "t") == ["t.b: no longer allows {'type': 'null'}"]
    retyped = {**richer, "properties": {**richer["properties"], "a": {"type": "number", "description": "x"}}}
    assert _richer(retyped, old, "t") == ["t.a.type: 'string' became 'number'"]
