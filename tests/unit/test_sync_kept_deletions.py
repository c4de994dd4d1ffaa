"""A deletion an edit beat is reported (kept, with no text) on every device alike, whatever order
its revisions arrived in. Found by scripts/sync_soak.py --wider (seed 2231, "conflicts differ"):
a device that pulled two concurrent deletions first (one won; the other, losing to a deletion,
is not a conflict) and only then the edit that closed the winning one's branch did not report
the other deletion, while a device that pulled it all at once did."""

from __future__ import annotations

from memories_tui.sync.chains import Incoming
from memories_tui.sync.hlc import Clock, Stamp
from memories_tui.sync.merge import Plan, merge_pulled
from memories_tui.sync.revtree import Rev
from memories_tui.sync.state import SyncState
from memories_tui.vault.integrity import encode_payload
from memories_tui.vault.records import Record

RID = "d777a8dcd97fffb3"


def _payload(body: str) -> str:
    stamp = "2026-12-06T23:00:00Z"
    return encode_payload(Record(id=RID, revision=1, kind="memory", title="note", body=body, created=stamp,
                                 updated=stamp)).decode("utf-8")


def _rev(rev_id: str, parents: tuple[str, ...], ms: int, device: str, deleted: bool = False) -> Rev:
    return Rev(rev_id, parents, Stamp(ms, 0), device, deleted, "memory")


ROOT = (RID, _rev("r0", (), 1, "a"), _payload("first"))
EDIT = (RID, _rev("f1", ("r0",), 2, "f"), _payload("edited on f"))
F_DELETES = (RID, _rev("f2", ("f1",), 3, "f", deleted=True), None)  # f deletes its own edit
G_DELETES = (RID, _rev("g1", ("r0",), 4, "g", deleted=True), None)  # g deletes the first text, later
RESOLVED = (RID, _rev("a2", ("f1", "g1"), 5, "a"), _payload("kept on a"))  # a resolved f1 vs g1, not knowing f2


def _pulled(*parts: list[tuple[str, Rev, str | None]]) -> SyncState:
    state = SyncState(loader=lambda _ids: {})
    clock = Clock(Stamp(0, 0), now_ms=10)
    for number, revs in enumerate(parts, 1):
        merge_pulled(state, clock, [Incoming("x", number, "", revs)], lambda _id: None, Plan())  # type: ignore[arg-type, return-value]
    return state


def test_a_deletion_an_edit_beat_is_kept_whatever_order_it_came_in() -> None:
    at_once = _pulled([ROOT, EDIT, F_DELETES, G_DELETES, RESOLVED])
    deletions_first = _pulled([ROOT, EDIT, F_DELETES, G_DELETES], [RESOLVED])
    assert at_once.kept == {RID: {"f2": None}}
    assert deletions_first.kept == at_once.kept
    assert deletions_first.docs[RID].tree.winner().rev_id == "a2"


def test_a_deletion_that_lost_to_a_deletion_is_no_conflict() -> None:
    state = _pulled([ROOT, EDIT, F_DELETES, G_DELETES])
    assert state.kept == {}
