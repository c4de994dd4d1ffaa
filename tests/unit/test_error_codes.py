"""Error codes are named once (`ErrorCode` in memories_tui/errors.py), docs/cli.md's table lists
exactly those, and no module spells one as a bare string again."""

from __future__ import annotations

import ast
import json
import re

from memories_tui.errors import ErrorCode, MemoriesError, NotFoundError, error_from_json
from tests.helpers.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "memories_tui"
CODES = {name: value for name, value in vars(ErrorCode).items() if name.isupper()}


def docs_codes(text: str) -> list[str]:
    """The codes of the table between the error-codes markers of docs/cli.md."""
    table = text.split("<!-- error-codes:start -->", 1)[1].split("<!-- error-codes:end -->", 1)[0]
    return re.findall(r"^\|\s*`([a-z0-9_]+)`\s*\|", table, re.M)


def spelled_codes(source: str) -> list[str]:
    """Bare-string codes: `code="x"`, a class's `code = "x"`, `….code == "x"` / `in ("x", …)`,
    a variable given a code (`outcome = "internal_error"`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant) \
                and node.value.value in CODES.values():
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and not t.id.isupper() for t in targets):
                found.append(node.value.value)
        if isinstance(node, ast.keyword) and node.arg == "code" and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            found.append(node.value.value)
        elif isinstance(node, ast.ClassDef) and node.name != "ErrorCode":
            for stmt in node.body:
                target = stmt.targets[0] if isinstance(stmt, ast.Assign) else getattr(stmt, "target", None)
                value = getattr(stmt, "value", None)
                if isinstance(target, ast.Name) and target.id == "code" and isinstance(value, ast.Constant):
                    found.append(value.value)
        elif isinstance(node, ast.Compare) and any(
                isinstance(side, ast.Attribute) and side.attr == "code" for side in [node.left, *node.comparators]):
            for side in [node.left, *node.comparators]:
                items = side.elts if isinstance(side, (ast.Tuple, ast.Set, ast.List)) else [side]
                found += [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
    for stmt in ast.parse(source).body:  # REPORTED = frozenset({"a_code", …}): a set of codes
        value = getattr(stmt, "value", None)
        if isinstance(value, ast.Call) and value.args:
            value = value.args[0]
        if isinstance(stmt, ast.Assign) and isinstance(value, (ast.Tuple, ast.Set, ast.List)):
            strings = [i.value for i in value.elts if isinstance(i, ast.Constant) and isinstance(i.value, str)]
            if strings and set(strings) <= set(CODES.values()):
                found += strings
    return found


def test_docs_cli_lists_every_error_code_once_and_no_other():
    listed = docs_codes((REPO_ROOT / "docs" / "cli.md").read_text(encoding="utf-8"))
    assert sorted(listed) == sorted(set(listed)), "a code is listed twice"
    assert sorted(set(CODES.values()) - set(listed)) == [], "codes missing from docs/cli.md"
    assert sorted(set(listed) - set(CODES.values())) == [], "docs/cli.md lists codes that do not exist"


def test_no_module_spells_an_error_code_as_a_string():
    spelled = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        found = spelled_codes(path.read_text(encoding="utf-8"))
        if found:
            spelled[str(path.relative_to(REPO_ROOT))] = found
    assert spelled == {}, "name them in ErrorCode (memories_tui/errors.py) and use ErrorCode.X"


def test_each_constant_is_its_value_in_capitals_and_values_are_unique():
    assert {name: value for name, value in CODES.items() if name != value.upper()} == {}
    assert len(set(CODES.values())) == len(CODES)
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", value) for value in CODES.values())


def test_the_checks_find_what_they_look_for():
    source = ('class E(MemoriesError):\n    code = "odd"\n'
              'raise E("x", code="other")\n'
              'if exc.code == "third" or exc.code in ("fourth", ErrorCode.CANCELLED): pass\n'
              'GONE = frozenset({"not_found", OTHER})\n'
              'outcome = "internal_error"\n')
    assert sorted(spelled_codes(source)) == sorted(["odd", "other", "third", "fourth", "not_found", "internal_error"])
    assert docs_codes("x\n<!-- error-codes:start -->\n| code | what |\n|---|---|\n| `a_b` | … |\n"
                      "<!-- error-codes:end -->\n| `c` | … |\n") == ["a_b"]


def test_a_named_code_is_the_same_string_in_json_and_across_the_wire():
    error = MemoriesError("Nothing there.", code=ErrorCode.VAULT_EXISTS)
    assert json.dumps(error.to_json()) == '{"error": {"code": "vault_exists", "message": "Nothing there."}}'
    again = error_from_json(json.loads(json.dumps(NotFoundError("Gone.").to_wire())))
    assert isinstance(again, NotFoundError) and again.code == "not_found" and type(again.code) is str


def test_the_exit_status_2_row_names_every_code_a_usage_error_carries():
    """Exit status 2 is for usage errors: a UsageError raised with another code exits 2 too, so
    docs/cli.md's row says which (a script told "2 is usage_error only" misread them)."""
    raised = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "UsageError":
                for keyword in node.keywords:
                    if keyword.arg == "code" and isinstance(keyword.value, ast.Attribute):
                        raised.add(CODES[keyword.value.attr])
    row = next(line for line in (REPO_ROOT / "docs" / "cli.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| 2 |"))
    assert raised and sorted(raised - set(re.findall(r"`([a-z0-9_]+)`", row))) == []
