"""No user-facing string bypasses the catalog.

The source is parsed and every place that shows text to a person is checked: error messages,
the CLI's prints, tables, progress labels, prompts and argparse help, the TUI's widgets,
notifications, bindings, titles and placeholders. A string literal with words in it must go
through `_()`, `_n()`, `N_()`, `msg()` or `msg_n()` there. What stays English on purpose
(JSON, log lines, MCP tool schemas and descriptions, the MCP server itself) is not scanned.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "memories_tui"
MARKERS = {"_", "_n", "N_", "msg", "msg_n", "term"}
WORDS = re.compile(r"[A-Za-z]{2,}")

# Not shown to people, or shown in English on purpose: the MCP server speaks to AI clients
# (its tool descriptions and JSON-RPC errors stay English); i18n.py's one warning says the
# catalog cannot be read.
SKIPPED = ("mcp/", "access/mcp_server.py", "access/stdio_guard.py", "i18n.py")


# Calls that put their arguments on screen: name -> (positions, keywords). "*" = every positional.
SINKS: dict[str, tuple[tuple[int | str, ...], tuple[str, ...]]] = {
    # the CLI
    "print": (("*",), ()),
    "progress": ((0,), ()),
    "announce": ((0,), ()),
    "table": ((0,), ()),
    "ProgressReport": ((0,), ("unit",)),
    "get_passphrase": ((), ("prompt",)),
    "getpass": ((0,), ()),
    "add_argument": ((), ("help",)),
    "add_parser": ((), ("help", "description", "epilog")),
    "add_subparsers": ((), ("title", "description")),
    "ArgumentParser": ((), ("description", "epilog")),
    "_Parser": ((), ("description", "epilog")),
    "_verb": ((3,), ()),
    "verb": ((3,), ()),
    "_group": ((2,), ()),
    # the TUI (Textual)
    "notify": ((0,), ("title",)),
    "Static": ((0,), ()),
    "Label": ((0,), ()),
    "Button": ((0,), ()),
    "Input": ((), ("placeholder",)),
    "TextArea": ((), ("placeholder",)),
    "Checkbox": ((0,), ()),
    "Switch": ((), ()),
    "RadioButton": ((0,), ()),
    "TabPane": ((0,), ()),
    "Tab": ((0,), ()),
    "Option": ((0,), ()),
    "Binding": ((2,), ("description",)),
    "Hit": ((2,), ("help",)),
    "DiscoveryHit": ((0,), ("help",)),
    "SystemCommand": ((0, 1), ()),
    "add_column": ((0,), ()),
    "add_columns": (("*",), ()),
    "update": ((0,), ()),
    "Text": ((0,), ()),
    "from_markup": ((0,), ()),
    "assemble": (("*",), ()),
    "ListItem": (("*",), ()),
    "set_status": ((0,), ()),
}
ERROR_NAMES_PATTERN = re.compile(r"^[A-Z]\w*Error$")
NOT_OURS = {"ValueError", "TypeError", "KeyError", "RuntimeError", "OSError", "AssertionError", "NotImplementedError",
            "AttributeError", "IndexError", "StopIteration", "ImportError", "SystemExit", "_Transient", "_FileFailed"}
# Attributes whose value is shown: a class's TITLE, a widget's border title, …
SHOWN_ATTRIBUTES = {"TITLE", "SUB_TITLE", "border_title", "border_subtitle", "title", "sub_title", "tooltip"}

# Literal text that is the same in every language (product names, units, key names).
UNTRANSLATED = {"Memories", "memories", "tui", "MCP", "BM25", "OK", "ID", "MiB", "ETA"}


@dataclass(frozen=True)
class Bypass:
    where: str
    text: str

    def __str__(self) -> str:
        return f"{self.where}: {self.text!r}"


def _wordy(text: str) -> bool:
    words = WORDS.findall(text)
    return any(word not in UNTRANSLATED for word in words)


def _literal_texts(node: ast.AST) -> list[str]:
    """The unmarked literal text that `node` would show (empty when it is marked or not literal)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        out = [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                out += _literal_texts(value.value)
        return out
    if isinstance(node, ast.BinOp):
        return _literal_texts(node.left) + _literal_texts(node.right)
    if isinstance(node, ast.IfExp):
        return _literal_texts(node.body) + _literal_texts(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [t for v in node.values for t in _literal_texts(v)]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [t for e in node.elts for t in _literal_texts(e)]
    if isinstance(node, ast.Call):
        name = _name(node.func)
        if name in MARKERS:
            return []
        if name in ("format", "join", "strip", "rstrip", "lstrip", "upper", "capitalize") \
                and isinstance(node.func, ast.Attribute):
            return _literal_texts(node.func.value) + [t for a in node.args for t in _literal_texts(a)]
        if name in ("Text", "from_markup", "assemble", "clean", "str", "dim", "bold"):
            return [t for a in node.args for t in _literal_texts(a)]
    return []


def _name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _scan(path: Path, root: Path = REPO_ROOT) -> list[Bypass]:
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    rel = path.relative_to(root)
    found: list[Bypass] = []

    def flag(node: ast.AST, texts: list[str]) -> None:
        for text in texts:
            if _wordy(text):
                found.append(Bypass(f"{rel}:{getattr(node, 'lineno', 0)}", text))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _name(node.func)
            if ERROR_NAMES_PATTERN.match(name) and name not in NOT_OURS and node.args:
                flag(node, _literal_texts(node.args[0]))
                continue
            sink = SINKS.get(name)
            if sink is None:
                continue
            positions, keywords = sink
            for i, arg in enumerate(node.args):
                if "*" in positions or i in positions:
                    flag(node, _literal_texts(arg))
            for keyword in node.keywords:
                if keyword.arg in keywords:
                    flag(node, _literal_texts(keyword.value))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, (ast.Name, ast.Attribute)) and _name(target) in SHOWN_ATTRIBUTES:
                    flag(node, _literal_texts(node.value))
                if isinstance(target, ast.Name) and target.id == "BINDINGS" and isinstance(node.value, ast.List):
                    for element in node.value.elts:  # ("key", "action", "Description") tuples
                        if isinstance(element, ast.Tuple) and len(element.elts) >= 3:
                            flag(element, _literal_texts(element.elts[2]))
    return found


def scanned_files() -> list[Path]:
    files = sorted(PACKAGE.rglob("*.py"))
    return [f for f in files if not any(part in str(f.relative_to(PACKAGE)) for part in SKIPPED)]


def test_no_user_facing_string_bypasses_the_catalog():
    found = [b for path in scanned_files() for b in _scan(path)]
    assert not found, ("mark these with _() (or msg() for an error, N_() for a constant), then run "
                       "`scripts/i18n update` and translate them:\n" + "\n".join(map(str, found[:60])))


def test_the_scan_catches_each_kind_of_bypass(tmp_path):
    """The scan above can fail: each planted bypass is found, each marked string is not."""
    sample = tmp_path / "memories_tui" / "sample.py"
    sample.parent.mkdir()
    sample.write_text('''
from textual.binding import Binding
class S(Screen):
    TITLE = "Vault picker"
    BINDINGS = [Binding("q", "quit", "Quit"), ("f1", "help", "Help"), ("x", "y", _("Marked"))]
    def compose(self):
        yield Static("Unlock the vault")
        yield Input(placeholder="passphrase")
        yield Static(_("Marked too"))
    def go(self):
        self.notify(f"Saved {n} records")
        self.notify(_("Saved {n} records").format(n=1))
        raise UsageError(f"Bad limit {x}")
        raise UsageError(msg("Bad limit {x}", x=1))
        print("No results.")
        print(f"{a}  {b}")
        ctx.table(["SCORE", "ID"], rows)
        p.add_argument("--x", help="a help text")
''', encoding="utf-8")
    found = {b.text for b in _scan(sample, tmp_path)}
    assert found == {"Vault picker", "Quit", "Help", "Unlock the vault", "passphrase", "Saved ", " records",
                     "Bad limit ", "No results.", "SCORE", "a help text"}

