"""Every operation of the engine's table (engine/api.py) through a real resident engine gives
what it gives in-process: the same result, or the same error (class, code, sentence).

Generated from the table: a new operation is covered without a new test, as long as its
required parameters have names this file knows (`EXAMPLES`); one it does not know fails here,
saying which. Two vaults made the same way in one home: the daemon holds one ("served"),
this process's engine the other ("alone"); each side runs every operation, in the table's
order, on its own vault, and the two answers are compared with what differs by nature (ids,
times, the side's own names and folders) written the same.
"""

from __future__ import annotations

import inspect
import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from memories_tui import errors
from memories_tui.engine import Engine, EngineAPI, json_of, operations, progress_types
from tests.helpers.cli import call_cli
from tests.helpers.daemon import stop, unlock
from tests.helpers.vaults import PASS, cheap_kdf

SIDES = ("served", "alone")


def _folder(path: Path) -> str:
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# A value for each required parameter, by (operation, parameter) or by parameter: a function of
# the side's state (its vault, records, folders, and the results of the operations before).
EXAMPLES: dict[Any, Any] = {
    "vault_id": lambda s: s["vault"],
    "ref": lambda s: s["vault"],
    ("remove_source", "ref"): lambda s: s["results"]["add_source"].id,
    "record_id": lambda s: s["memory"],
    ("delete_record", "record_id"): lambda s: s["doomed"],
    "on": lambda s: False,
    "kind": lambda s: "memory",
    "title": lambda s: "Rye",
    "path": lambda s: _write(s["root"] / "scan.txt", "a small asset"),
    ("import_notes", "path"): lambda s: _write(s["root"] / "obsidian" / "Lantern.md", "# Lantern\n\nRye and lanterns.\n").parent,
    "app": lambda s: "obsidian",
    "url": lambda s: _folder(s["root"] / "sync-target"),  # each side syncs with a folder of its own from then on
    "device": lambda s: "laptop",  # no such device: both sides refuse the same way
    "paths": lambda s: [_write(s["root"] / "page.md", "# Page\n\nA page about lanterns and rye bread.\n")],
    "query": lambda s: "sourdough starter",
    "question": lambda s: "How often do I feed the starter?",
    "folder": lambda s: s["root"] / "out",
    ("add_source", "folder"): lambda s: _write(s["root"] / "src" / "a.md", "# A\n\nsource text about rye\n").parent,
    "file": lambda s: s["results"]["backup_vault"].path,
    "passphrase": lambda s: PASS,
    ("restore_vault", "as_name"): lambda s: f"restored-{s['side']}",
}


def _example(op: str, param: str, state: dict[str, Any]) -> Any:
    make = EXAMPLES.get((op, param), EXAMPLES.get(param))
    assert make is not None, f"no example value for parameter {param!r} of {op}: add one to EXAMPLES"
    return make(state)


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    root = tmp_path_factory.mktemp("protocol")
    home = root / "home"
    states: dict[str, dict[str, Any]] = {}
    for side in SIDES:
        name = f"notes-{side}"
        vault_id = call_cli(home, "--json", "vault", "create", name).json["vault_id"]
        memory = call_cli(home, "--json", "memory", "add", name, "--title", "Sourdough",
                          "--text", "Feed the sourdough starter twice a day. 酸種麵包").json["id"]
        call_cli(home, "memory", "update", name, memory, "--text", "Feed the sourdough starter twice a day with rye.")
        doomed = call_cli(home, "--json", "memory", "add", name, "--title", "Doomed", "--text", "gone soon").json["id"]
        states[side] = {"side": side, "name": name, "vault": vault_id, "memory": memory, "doomed": doomed,
                        "root": root / side, "results": {}}
    assert unlock(home, "notes-served").code == 0
    from memories_tui.daemon import connect
    from memories_tui.daemon.remote_engine import RemoteEngine

    client = connect(home)
    assert client is not None
    with cheap_kdf():  # the vaults were made with the tests' cheap key derivation
        alone = Engine.open(home)
        alone.unlock(states["alone"]["vault"], PASS)
        states["served"]["engine"] = RemoteEngine(client, home)
        states["alone"]["engine"] = alone
        yield home, states
        alone.close()
    stop(home)


def _outcome(engine: Any, op: str, kwargs: dict[str, Any], seen: list[object]) -> tuple[str, object]:
    """("ok", result in wire form) or ("error", (class, code, sentence))."""
    call = dict(kwargs)
    parameters = inspect.signature(getattr(EngineAPI, op)).parameters
    if "progress" in parameters:
        call["progress"] = lambda *values: seen.append(values)
    if "cancel" in parameters:
        call["cancel"] = threading.Event()  # not set: the work runs to the end
    try:
        result = getattr(engine, op)(**call)
    except errors.MemoriesError as exc:
        return "error", (type(exc).__name__, exc.code, exc.message)
    return "ok", result


TIMES = re.compile(r"(ms|seconds|_at|time|last_build|bytes|size)$")  # keys whose numbers differ run to run


def _normal(value: object, state: dict[str, Any]) -> str:
    """The wire form with what differs between the sides by nature written the same; lists in
    a fixed order (the engine orders some by record id, which differs)."""

    def walk(item: object, key: str = "") -> object:
        if isinstance(item, dict):
            return {k: walk(v, k) for k, v in item.items()}
        if isinstance(item, list):
            return sorted((walk(v) for v in item), key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))
        if isinstance(item, int | float) and not isinstance(item, bool) and TIMES.search(key):
            return "<n>"
        if isinstance(item, str):
            for mine, common in ((str(state["root"]), "<root>"), (state["name"], "<name>"),
                                 (state["vault"], "<vault>"), (state["side"], "<side>")):
                item = item.replace(mine, common)
            item = re.sub(r"\b[0-9a-f]{8,64}\b", "<id>", item)  # record, vault and source ids, digests
            item = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?", "<time>", item)
            return re.sub(r"notes-[0-9]{8}-[0-9]{6}[^\"/]*", "<backup>", item)
        return item

    return json.dumps(walk(json_of(value, "wire")), ensure_ascii=False, sort_keys=True)


@pytest.mark.parametrize("op", operations(), ids=lambda op: op.name)
def test_each_operation_through_the_daemon_gives_what_it_gives_in_process(sides, op) -> None:
    _home, states = sides
    parameters = inspect.signature(getattr(EngineAPI, op.name)).parameters
    answers = {}
    progress: dict[str, list[object]] = {}
    for side in SIDES:
        state = states[side]
        kwargs = {name: _example(op.name, name, state) for name in op.request
                  if parameters[name].default is inspect.Parameter.empty or (op.name, name) in EXAMPLES}
        if op.name == "restore_vault" and state["results"].get("backup_vault") is None:
            pytest.fail("restore needs the backup made before it (the table lists backup_vault first)")
        seen: list[object] = []
        answers[side] = _outcome(state["engine"], op.name, kwargs, seen)
        progress[side] = seen
        if answers[side][0] == "ok":
            state["results"][op.name] = answers[side][1]
    (kind_served, served), (kind_alone, alone) = answers["served"], answers["alone"]
    assert kind_served == kind_alone, (op.name, served, alone)
    if kind_served == "ok":
        result_type = type(alone)
        assert isinstance(served, result_type) or (served is None and alone is None), op.name
    assert _normal(served, states["served"]) == _normal(alone, states["alone"]), op.name
    if op.progress is not None and progress["alone"]:
        assert progress["served"], f"{op.name}: no progress came through the daemon"
        types = progress_types(op)
        assert all(isinstance(v, t) for values in progress["served"] for v, t in zip(values, types, strict=True))


def test_every_operation_ran_through_the_daemon(sides) -> None:
    """The comparison above is not hollow: the daemon ran the served half of each operation."""
    home, _states = sides
    log = (home / "daemon" / "daemon.log").read_text(encoding="utf-8")
    ran = set(re.findall(r" (vault\.[a-z_]+) ", log))
    assert {op.verb for op in operations()} <= ran


def test_cancel_stops_the_work_in_the_daemon_as_in_process(sides) -> None:
    """`cancel` set while the daemon works (here at the first progress value) stops the work
    there, and the engine's own sentence comes back; nothing was written on either side."""
    _home, states = sides
    outcomes = {}
    for side in SIDES:
        state = states[side]
        folder = state["root"] / "many"
        files = [_write(folder / f"note-{n:04}.md", f"# Note {n}\n\nrye and lanterns {n}\n") for n in range(1500)]
        engine = state["engine"]
        before = len(engine.list_records(state["vault"]))
        cancel = threading.Event()
        with pytest.raises(errors.CancelledError) as stopped:
            engine.ingest(state["vault"], files, progress=lambda _p, stop=cancel: stop.set(), cancel=cancel)
        assert len(engine.list_records(state["vault"])) == before, side
        outcomes[side] = (type(stopped.value), stopped.value.code, stopped.value.message)
    assert outcomes["served"] == outcomes["alone"]


@pytest.mark.parametrize("op", operations(), ids=lambda op: op.name)
def test_a_request_of_the_wrong_shape_is_refused_in_a_sentence(sides, op) -> None:
    """Decoded from the table's types: an argument of the wrong type, one the operation does
    not take, or one missing is `daemon_bad_request` for every operation, never an internal error."""
    _home, states = sides
    client = states["served"]["engine"].client
    state = states["served"]
    good = {op.vault: state["vault"]} if op.vault else {}
    cwd = {"cwd": str(state["root"])} if op.sends_cwd else {}
    for request in ({**good, "no_such_argument": 1, **cwd}, {op.request[0]: [[1]], **cwd}, dict(cwd)):
        with pytest.raises(errors.MemoriesError) as refused:
            client.call(op.verb, request)
        assert refused.value.code == "daemon_bad_request", (op.name, request, refused.value.message)
