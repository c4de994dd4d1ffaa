"""Rebuilding a damaged snapshot from the vault's own revision trees (sync/repair.py): what it
holds for each kind of revision, and when it gives up (the damage is then reported)."""

from __future__ import annotations

from memories_tui.sync.hlc import Stamp
from memories_tui.sync.repair import Local, rebuilt
from memories_tui.sync.revtree import Rev, RevTree
from memories_tui.sync.sealing import Head
from memories_tui.sync.state import Doc, SyncState
from memories_tui.sync.threeway import MERGE_DEVICE

ME, OTHER, GONE = "a" * 16, "b" * 16, "c" * 16


def _rev(rev_id: str, parents: tuple[str, ...], ms: int, device: str, deleted: bool = False) -> Rev:
    return Rev(rev_id, parents, Stamp(ms, 0), device, deleted, "memory")


def _doc(revs: list[Rev], cur: str, local: int | None, bases: dict[str, int] | None = None) -> Doc:
    doc = Doc(cur, local, high=local or 0, bases=bases or {})
    doc._tree = RevTree({rev.rev_id: rev for rev in revs})
    return doc


def _state(docs: dict[str, Doc], kept: dict[str, dict[str, str | None]] | None = None,
           seen: dict[str, tuple[int, str]] | None = None) -> SyncState:
    return SyncState(device=ME, kept=kept or {}, seen=seen or {}, loader=lambda _ids: dict(docs))


def _stored(refs):  # noqa: ANN001, ANN202 - the vault's records as stored
    return {(ref.record_id, ref.revision): f"{ref.record_id}@{ref.revision}" for ref in refs}


def _local(texts=_stored) -> Local:  # noqa: ANN001
    return Local(texts, list)


def test_each_revision_gets_its_text_from_the_vault_or_keeps_its_place_without_it():
    docs = {
        "held": _doc([_rev("h1", (), 1, ME), _rev("h2", ("h1",), 2, ME)], "h2", 2),  # h1 replaced by h2
        "theirs": _doc([_rev("t1", (), 3, ME), _rev("t2", ("t1",), 4, OTHER)], "t2", 5, {"t1": 4}),
        "deleted": _doc([_rev("d1", (), 5, ME), _rev("d2", ("d1",), 6, OTHER, deleted=True)], "d2", None),
        "both": _doc([_rev("c1", (), 7, ME), _rev("c2", ("c1",), 8, ME), _rev("c3", ("c1",), 9, OTHER),
                      _rev("m", ("c2", "c3"), 10, MERGE_DEVICE)], "m", 3),
        "lost": _doc([_rev("l1", (), 11, OTHER), _rev("l2", (), 12, ME)], "l1", 1),
    }
    entries, adopted = rebuilt(_state(docs, kept={"lost": {"l2": "my losing side"}}), {}, _local(), {})
    by_rev = {item["rev"]: item for item in entries}
    assert adopted == {}
    assert set(by_rev) == {"h1", "h2", "t1", "d1", "c1", "c2", "m", "l2"}  # this device's and merged ones
    assert [item["rev"] for item in entries] == ["h1", "h2", "t1", "d1", "c1", "c2", "m", "l2"]  # clock order
    assert by_rev["h1"]["x"] is None and by_rev["h1"]["s"] == 1  # its child comes along
    assert by_rev["h2"]["x"] == "held@2"
    assert by_rev["t1"]["x"] == "theirs@4"  # another device's edit replaced it: the merge base keeps its text
    assert by_rev["d1"]["s"] == 1 and by_rev["d1"]["x"] is None  # deleted there, not here any more
    assert by_rev["c2"]["s"] == 1 and by_rev["m"]["x"] == "both@3"
    assert by_rev["l2"]["x"] == "my losing side"


def test_it_gives_up_where_the_vault_cannot_give_what_a_reader_needs():
    leaf_without_text = {"r": _doc([_rev("r1", (), 1, OTHER), _rev("r2", (), 2, ME)], "r1", 1)}
    assert rebuilt(_state(leaf_without_text), {}, _local(), {}) is None
    held = {"r": _doc([_rev("r1", (), 1, ME)], "r1", 1)}
    entries, _ = rebuilt(_state(held), {}, _local(lambda refs: {}), {})  # deleted here, not synced yet
    assert entries[0]["s"] == 1 and entries[0]["x"] is None  # its place; a reader is told to sync again
    carried = {"r": _doc([_rev("r1", (), 1, GONE)], "r1", 1)}
    entries, adopted = rebuilt(_state(carried, seen={GONE: (3, "d3")}), {GONE: 3}, _local(), {})
    assert adopted == {GONE: (3, "d3")} and entries[0]["x"] == "r@1"
    assert rebuilt(_state(carried), {GONE: 3}, _local(), {}) is None  # never read here: its chain is nowhere


def test_a_carried_device_that_wrote_again_is_carried_as_far_as_this_device_read_it():
    """It came back and wrote bundle 4, which this device read; then another device carried it
    further and deleted its objects (or its own snapshot does not reach bundle 3). Its
    revisions up to bundle 4 are all in this device's trees: the rebuilt snapshot carries it
    that far instead of giving up, which left this device refused for good (found by the soak)."""
    carried = {"r": _doc([_rev("r1", (), 1, GONE), _rev("r2", ("r1",), 2, GONE)], "r2", 2)}
    entries, adopted = rebuilt(_state(carried, seen={GONE: (4, "d4")}), {GONE: 3}, _local(), {})
    assert adopted == {GONE: (4, "d4")}
    assert [(item["rev"], item["x"]) for item in entries] == [("r1", None), ("r2", "r@2")]
    behind = Head(GONE, 4, "d4", "t", snap=2, snap_digest="x")  # its own snapshot stops short of bundle 3
    assert rebuilt(_state(carried, seen={GONE: (4, "d4")}), {GONE: 3}, _local(), {GONE: behind})[1] == {GONE: (4, "d4")}


def test_a_carried_device_that_came_back_with_a_snapshot_of_its_own_is_carried_no_more():
    docs = {"r": _doc([_rev("r1", (), 1, GONE), _rev("r2", (), 2, ME)], "r2", 2),
            "s": _doc([_rev("s1", (), 3, ME)], "s1", 1)}
    back = Head(GONE, 9, "d9", "t", snap=5, snap_digest="x")  # its own snapshot reaches past bundle 3
    state = _state(docs, kept={"r": {"r1": "theirs"}}, seen={GONE: (9, "d9")})
    entries, adopted = rebuilt(state, {GONE: 3}, _local(), {GONE: back})
    assert adopted == {} and {item["rev"] for item in entries} == {"r2", "s1"}


def test_a_merge_base_the_vault_dropped_keeps_its_place_without_its_text():
    """Deleted here (every vault revision of it goes), then brought back by another device's
    edit: the base number the tree kept names a row that is gone. That revision is replaced
    anyway, so the snapshot holds it without text instead of giving up at every compaction."""
    docs = {"back": _doc([_rev("b1", (), 1, ME), _rev("b2", ("b1",), 2, OTHER)], "b2", 5, {"b1": 2})}
    entries, _ = rebuilt(_state(docs), {}, _local(lambda refs: {("back", 5): "back@5"}), {})
    assert entries == [{"id": "back", "rev": "b1", "e": _rev("b1", (), 1, ME).to_list(), "x": None, "s": 1}]
