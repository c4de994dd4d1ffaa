"""What a streamed pull commits now and what waits (sync/stream.py): a record waits while one
of its revisions came without text and its child has not come yet; a device's position never
passes revisions of its own that wait."""

from __future__ import annotations

from memories_tui.sync.chains import Incoming
from memories_tui.sync.hlc import Stamp
from memories_tui.sync.revtree import Rev
from memories_tui.sync.state import SyncState
from memories_tui.sync.stream import split

D, E = "d" * 16, "e" * 16


def _rev(rev_id: str, parents: tuple[str, ...], ms: int, device: str = D, deleted: bool = False) -> Rev:
    return Rev(rev_id, parents, Stamp(ms, 0), device, deleted, "memory")


def _state() -> SyncState:
    return SyncState(device="a" * 16, loader=lambda _ids: {})


def _ids(bundles: list[Incoming]) -> list[tuple[str, bool, list[str]]]:
    return [(b.device, b.position, [rev.rev_id for _r, rev, _p in b.revs]) for b in bundles]


def test_a_revision_without_text_waits_for_its_child_and_its_device_waits_behind_it():
    part = Incoming(D, 0, "", [("x", _rev("x1", (), 1), None), ("y", _rev("y1", (), 2), "y text")], position=False)
    end = Incoming(D, 9, "d9", [])  # the snapshot's end: the device's position
    other = Incoming(E, 3, "e3", [("z", _rev("z1", (), 3, E), "z text")])
    ready, held = split([part, end, other], _state())
    assert _ids(ready) == [(D, False, ["y1"]), (E, True, ["z1"])]
    assert _ids(held) == [(D, False, ["x1"]), (D, True, [])]


def test_once_the_child_comes_everything_goes():
    part = Incoming(D, 0, "", [("x", _rev("x1", (), 1), None)], position=False)
    later = Incoming(D, 0, "", [("x", _rev("x2", ("x1",), 2), "x text")], position=False)
    end = Incoming(D, 9, "d9", [])
    ready, held = split([part, later, end], _state())
    assert held == [] and _ids(ready) == [(D, False, ["x1"]), (D, False, ["x2"]), (D, True, [])]


def test_a_deletion_carries_no_text_and_never_waits():
    gone = Incoming(D, 4, "d4", [("x", _rev("x2", ("x1",), 2, deleted=True), None)])
    assert split([gone], _state()) == ([gone], [])


def test_a_child_already_known_here_lets_its_parent_go():
    state = _state()
    state.doc("x").tree.add(_rev("x2", ("x1",), 2))  # read in an earlier commit of this pull
    part = Incoming(D, 0, "", [("x", _rev("x1", (), 1), None)], position=False)
    assert _ids(split([part], state)[0]) == [(D, False, ["x1"])]
