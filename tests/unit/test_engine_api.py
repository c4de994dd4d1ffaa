"""The table of operations (engine/api.py) matches the engine: mypy checks the types, this
checks what mypy does not (parameter names, kinds and defaults), and that every request and
result type is one the serialisation reads back."""

from __future__ import annotations

import inspect
import typing

import pytest

from memories_tui.engine import Engine, EngineAPI, operation_type, operations, progress_types, quick_verbs

OPERATIONS = operations()


def test_the_table_is_not_empty_and_names_each_operation_once() -> None:
    names = [op.name for op in OPERATIONS]
    assert len(names) == len(set(names)) > 20
    assert {"search", "ask", "ingest", "read_record"} <= set(names)
    assert "vault.vault_name" in quick_verbs() and "vault.ingest" not in quick_verbs()


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.name)
def test_each_operation_has_the_engines_parameters_and_defaults(op) -> None:
    declared = inspect.signature(getattr(EngineAPI, op.name)).parameters
    engine = inspect.signature(getattr(Engine, op.name)).parameters
    for name, param in declared.items():
        assert name in engine, f"{op.name}: Engine has no parameter {name}"
        assert (param.kind, param.default) == (engine[name].kind, engine[name].default), f"{op.name}.{name}"
    extra = [p for name, p in engine.items() if name not in declared and p.default is inspect.Parameter.empty]
    assert extra == [], f"{op.name}: Engine needs parameters the table does not send"
    assert (op.progress is not None) == ("progress" in declared), op.name
    assert op.vault is None or op.vault == op.request[0]
    for name in op.in_cwd:
        assert "Path" in op.annotation(name), f"{op.name}.{name} is opened in the caller's folder: a Path"


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.name)
def test_each_operations_types_resolve(op) -> None:
    for name in (*op.request, "return"):
        assert operation_type(op, name) is not typing.Any, f"{op.name}.{name}"
    if op.progress is not None:
        assert progress_types(op)


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.name)
def test_the_remote_engine_has_each_operation_with_the_tables_signature(op) -> None:
    """Made from the table, not written by hand: mypy reads the table's signatures from the
    remote engine's base (`EngineHandle`), so this holds what runs to what mypy read."""
    from memories_tui.daemon.remote_engine import RemoteEngine

    method = vars(RemoteEngine)[op.name]
    assert inspect.signature(method) == inspect.signature(getattr(EngineAPI, op.name))


def test_no_empty_body_of_the_protocol_is_left_in_the_remote_engine() -> None:
    """`RemoteEngine` declares `EngineHandle` as its base for mypy; every method and property of
    it must be the class's own at run time, or a call would quietly return None."""
    from memories_tui.daemon.remote_engine import RemoteEngine
    from memories_tui.engine.api import EngineAPI, EngineHandle, LocalAPI

    members = {name for proto in (EngineAPI, LocalAPI, EngineHandle) for name, value in vars(proto).items()
               if not name.startswith("_") and (callable(value) or isinstance(value, property))}
    assert {"search", "resolve_vault", "lock_epoch", "unlock", "close"} <= members
    assert sorted(members - set(vars(RemoteEngine))) == []
