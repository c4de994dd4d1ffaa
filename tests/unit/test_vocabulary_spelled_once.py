"""Search modes and match modes are spelled once, in memories_tui/vocabulary.py: no other module
compares a mode with a bare string, defaults a mode parameter to one or passes one by keyword
(a misspelt word there is a silent wrong branch that mypy cannot see once the type is `str`).

Scores' stage names ("bm25", "vector", "fusion") are another vocabulary (`Stage`) and are
not looked at: only names meaning a mode are."""

from __future__ import annotations

import ast

from memories_tui.vocabulary import MATCH_MODES, MODES
from tests.helpers.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "memories_tui"
WORDS = set(MODES) | set(MATCH_MODES)
MODE_NAMES = {"mode", "match_mode"}


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _words(node: ast.AST | None) -> list[str]:
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [i.value for i in items if isinstance(i, ast.Constant) and i.value in WORDS]


def spelled_modes(source: str) -> list[str]:
    """`mode == "bm25"`, `match_mode in ("any", "all")`, `def f(match_mode="any")`, `f(mode="hybrid")`."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_name(side) in MODE_NAMES for side in sides):
                found += [word for side in sides for word in _words(side)]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True),
                     *zip(args.kwonlyargs, args.kw_defaults, strict=True)]
            found += [word for arg, default in pairs if arg.arg in MODE_NAMES for word in _words(default)]
        elif isinstance(node, ast.keyword) and node.arg in MODE_NAMES:
            found += _words(node.value)
    return found


def test_no_module_but_the_vocabulary_spells_a_mode() -> None:
    spelled = {str(path.relative_to(REPO_ROOT)): found for path in sorted(PACKAGE.rglob("*.py"))
               if path.name != "vocabulary.py" and (found := spelled_modes(path.read_text(encoding="utf-8")))}
    assert spelled == {}, "use the names of memories_tui/vocabulary.py (MATCH_ANY, BM25, …)"


def test_the_check_finds_what_it_looks_for() -> None:
    source = ('def f(q, match_mode="any", *, mode="hybrid"):\n'
              '    if match_mode not in ("any", "all") or self.mode == "bm25": pass\n'
              'search(q, match_mode="phrase")\n'
              'scores = {"bm25": 1, "vector": 2}\n'  # stage names: not modes
              'if client == "all": pass\n')
    assert sorted(spelled_modes(source)) == sorted(["any", "hybrid", "any", "all", "bm25", "phrase"])
