"""The architecture, enforced: front ends use only the engine's public API, the engine knows
no front end, runtime imports have no cycle, and the engine's public signatures carry no `Any`.

Reads the source with `ast` (nothing is imported), so a violation names the file and line.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import memories_tui.engine as engine_api

PACKAGE = Path(engine_api.__file__).resolve().parents[1]
# The front ends in layers, lowest first: each imports only layers below its own, so none
# imports one above it and no two import each other. The access rules of AI clients (grants,
# memory tools, their results) sit below both the resident engine, which runs the tools for MCP
# servers, and the MCP server, which reaches the resident engine through its client; the TUI
# reaches it too (or hosts it), and the CLI starts all the others.
LAYERS = ("frontend", "access", "skill", "daemon", "mcp", "tui", "cli")
FRONT_ENDS = LAYERS
# what every front end may import from memories_tui (besides its own package and lower layers);
# the test hooks (a clock, a fake build) are honoured by every process
FRONT_END_ALLOWED = ("memories_tui.engine", "memories_tui.errors", "memories_tui.config", "memories_tui.i18n",
                     "memories_tui.testhooks")


def _below(area: str) -> tuple[str, ...]:
    return tuple(f"memories_tui.{layer}" for layer in LAYERS[:LAYERS.index(area)])


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> Iterator[tuple[str, Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield _module_name(path), path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """ids of import nodes inside `if TYPE_CHECKING:` blocks (never run)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                out.update(id(n) for n in ast.walk(inner))
    return out


def _imports(module: str, path: Path, tree: ast.Module, runtime_only: bool) -> Iterator[tuple[str, int]]:
    """(imported memories_tui module, line) for every import in the file."""
    skip = _type_checking_nodes(tree) if runtime_only else set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("memories_tui"):
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("memories_tui"):
                continue
            for alias in node.names:  # `from . import x` may name a module
                candidate = f"{target}.{alias.name}"
                as_module = PACKAGE.parent / Path(*candidate.split("."))
                yield (candidate if as_module.with_suffix(".py").is_file() or as_module.is_dir() else target), node.lineno


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_front_ends_import_only_the_engine_api() -> None:
    bad = []
    for module, path, tree in _sources():
        area = module.split(".")[1] if module.count(".") else ""
        if area not in FRONT_ENDS:
            continue
        allowed = (*FRONT_END_ALLOWED, f"memories_tui.{area}", *_below(area))
        for target, line in _imports(module, path, tree, runtime_only=False):
            # the engine's public API is the package itself, not its modules
            if target == "memories_tui":  # the package root holds only __version__
                continue
            if target.startswith("memories_tui.engine.") or not _within(target, allowed):
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert not bad, ("front ends must import only memories_tui.engine, errors, config, i18n and the layers below "
                     "their own:\n" + "\n".join(bad))


def test_no_two_packages_import_each_other() -> None:
    """Counting every import (inside functions and for type checking too): the packages that
    import each other's modules form no circle, so the layers above are a true order, and so
    are the engine's own (an importer of other apps' exports is the engine's, under engine/)."""
    packages = {path.name for path in PACKAGE.iterdir() if path.is_dir() and (path / "__init__.py").is_file()}
    graph: dict[str, set[str]] = {}
    for module, path, tree in _sources():
        if module.count(".") < 1:
            continue
        area = module.split(".")[1]
        for target, _line in _imports(module, path, tree, runtime_only=False):
            other = target.split(".")[1] if target.count(".") else area
            if other != area and other in packages:
                graph.setdefault(f"memories_tui.{area}", set()).add(f"memories_tui.{other}")
    assert _cycles(graph) == []


def test_nothing_below_the_front_ends_imports_them() -> None:
    bad = []
    for module, path, tree in _sources():
        if module == "memories_tui.__main__" or _within(module, tuple(f"memories_tui.{f}" for f in FRONT_ENDS)):
            continue  # `python -m memories_tui` is the CLI's entry point
        for target, line in _imports(module, path, tree, runtime_only=False):
            if _within(target, tuple(f"memories_tui.{f}" for f in FRONT_ENDS)):
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            bad += [f"{path.relative_to(PACKAGE.parent)}:{node.lineno} imports {n}"
                    for n in names if n == "textual" or n.startswith("textual.")]
    assert not bad, "\n".join(bad)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles in `graph` (Tarjan's strongly connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in graph:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return cycles


def test_no_runtime_import_cycle() -> None:
    graph: dict[str, set[str]] = {}
    for module, path, tree in _sources():
        graph[module] = {t for t, _ in _imports(module, path, tree, runtime_only=True) if t != module}
    cycles = _cycles(graph)
    assert not cycles, f"import cycles: {cycles}"


def test_engine_modules_import_each_other_without_a_cycle() -> None:
    """Inside the engine even imports for type checking and inside functions run one way: the
    helpers take a vault context and never reach back into the facade."""
    graph: dict[str, set[str]] = {}
    for module, path, tree in _sources():
        if _within(module, ("memories_tui.engine",)):  # the package too: a helper importing it closes a circle
            graph[module] = {t for t, _ in _imports(module, path, tree, runtime_only=False) if t != module}
    cycles = _cycles(graph)
    assert not cycles, f"import cycles inside engine/: {cycles}"


def test_the_cycle_check_counts_imports_inside_functions_and_for_type_checking() -> None:
    """A helper that imports the facade inside a function (or only for type checking) closes a
    circle as surely as one at the top: the check above must see both."""
    helper = ast.parse("from typing import TYPE_CHECKING\n"
                       "if TYPE_CHECKING:\n    from .facade import Engine\n"
                       "def run(x):\n    from . import facade\n    from memories_tui.engine import Engine\n")
    path = PACKAGE / "engine" / "searching.py"
    seen = [(t, line) for t, line in _imports("memories_tui.engine.searching", path, helper, runtime_only=False)]
    assert seen == [("memories_tui.engine.facade", 3), ("memories_tui.engine.facade", 5), ("memories_tui.engine", 6)]
    graph = {"memories_tui.engine.facade": {"memories_tui.engine.searching"},
             "memories_tui.engine.searching": {t for t, _ in seen}, "memories_tui.engine": set()}
    assert _cycles(graph) == [["memories_tui.engine.facade", "memories_tui.engine.searching"]]


def test_engine_facade_offers_front_ends_what_they_need_and_no_more() -> None:
    """Internals the helpers once called back into are gone from the facade; front ends have
    no use for them (a vault's index, records or model are the engine's business)."""
    from memories_tui.engine import Engine

    internal = ("vault_embedder", "ensure_vectors", "embed_in_background", "vector_count", "current_records",
                "vault_id_of", "indexes", "embedder", "index")
    assert [name for name in internal if hasattr(Engine, name)] == []


def test_engine_public_api_is_named_in_one_place_and_typed_without_any() -> None:
    names = set(engine_api.__all__)
    assert {"Engine", "parse_query", "Query", "SearchResponse", "SearchHit", "StatusReport",
            "BackgroundEmbedding", "VaultInfo", "Record", "NewRecord", "RecordUpdate"} <= names
    any_word = re.compile(r"\bAny\b")
    bad = []
    for name in sorted(names):
        obj = getattr(engine_api, name)
        if inspect.isclass(obj):
            members = [(f"{name}.{m}", f) for m, f in vars(obj).items()
                       if not m.startswith("_") and callable(f)] + [(name, obj)]
            annotations = getattr(obj, "__annotations__", {})
            bad += [f"{name}.{field}: {ann}" for field, ann in annotations.items() if any_word.search(str(ann))]
        elif callable(obj):
            members = [(name, obj)]
        else:
            continue
        for label, func in members:
            try:
                signature = inspect.signature(func)
            except (TypeError, ValueError):
                continue
            texts = [str(p.annotation) for p in signature.parameters.values()] + [str(signature.return_annotation)]
            bad += [f"{label}: {t}" for t in texts if any_word.search(t)]
    assert not bad, "Any in the engine's public API:\n" + "\n".join(bad)


# requirement ids, design-document names and sections, issue numbers; written with \u00a7 so this
# file does not match itself
CITES_OUTSIDE = re.compile(r"\bR-[A-Z]{2,}\b|\bSPEC\b|\bDESIGN\b|\u00a7|\b[Ii]ssues? \d+")
PUBLIC_STANDARD = re.compile(r"\bRFC \d+ \u00a7")  # a published standard's section is anyone's to read


def _code_outside_the_package() -> Iterator[Path]:
    """The tests, benches and scripts: Python files, and the scripts that are Python without a suffix."""
    root = PACKAGE.parent
    for folder in ("tests", "bench", "scripts"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix == ".py" or (folder == "scripts" and path.is_file() and not path.suffix
                                         and path.read_bytes().startswith(b"#!/usr/bin/env python")):
                yield path


def test_code_cites_nothing_a_clone_does_not_hold() -> None:
    """Comments and docstrings say why in their own words: requirement ids, section numbers of
    design documents and issue numbers point at texts a maintainer with a clone cannot read —
    in the product and in its tests, benches and scripts alike."""
    paths = [path for _module, path, _tree in _sources()] + list(_code_outside_the_package())
    bad = []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if CITES_OUTSIDE.search(PUBLIC_STANDARD.sub("", line)):
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}")
    assert not bad, "\n".join(bad)


MAX_MODULE_LINES = 430  # one module, one job: past this a module is doing two
MAX_FACADE_LINES = 360  # the facade routes front ends' calls; the work lives in the engine's helpers


def test_every_module_stays_small_and_the_facade_only_routes() -> None:
    sizes = {path.relative_to(PACKAGE.parent): len(path.read_text(encoding="utf-8").splitlines())
             for _module, path, _tree in _sources()}
    assert [f"{path}: {n} lines" for path, n in sizes.items() if n > MAX_MODULE_LINES] == []
    facade = Path("memories_tui", "engine", "facade.py")
    assert sizes[facade] <= MAX_FACADE_LINES, f"{facade}: {sizes[facade]} lines"
