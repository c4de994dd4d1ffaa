"""The table's `fronts` column (engine/api.py) says which front ends call each operation: read
from their code (an operation called on an engine, `ctx.engine.search(…)`, `self.engine.revisions(…)`
in cli/, tui/ and the MCP tools in access/), so it cannot drift into a list nobody checks."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from memories_tui.engine import operations
from tests.helpers.paths import REPO_ROOT

FOLDERS = {"cli": ("cli",), "tui": ("tui",), "mcp": ("access", "mcp")}
ENGINE_NAMES = {"engine", "_engine"}


def called_operations(sources: list[str]) -> set[str]:
    names = {op.name for op in operations()}
    called = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Attribute) and node.attr in names:
                holder = node.value
                if (holder.attr if isinstance(holder, ast.Attribute) else getattr(holder, "id", None)) in ENGINE_NAMES:
                    called.add(node.attr)
    return called


def _sources(front: str) -> list[str]:
    package = REPO_ROOT / "memories_tui"
    return [path.read_text(encoding="utf-8") for folder in FOLDERS[front]
            for path in sorted(Path(package, folder).rglob("*.py"))]


@pytest.mark.parametrize("front", sorted(FOLDERS))
def test_each_front_end_calls_exactly_the_operations_the_table_gives_it(front: str) -> None:
    declared = {op.name for op in operations() if front in op.fronts}
    called = called_operations(_sources(front))
    assert {"called, not in the table's fronts": sorted(called - declared),
            "in the table's fronts, never called": sorted(declared - called)} == {
        "called, not in the table's fronts": [], "in the table's fronts, never called": []}


def test_the_reading_finds_engine_calls_and_nothing_else() -> None:
    source = ("ctx.engine.search(v, q)\nself.app.engine.revisions(v, r)\nengine.ask(v, q)\n"
              "self.tools.search(v, q)\nrecord.revisions\n")
    assert called_operations([source]) == {"search", "revisions", "ask"}
