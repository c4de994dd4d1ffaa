"""Three devices make seeded random interleaved adds, edits (whole bodies, and single lines of
many-line bodies, which merge three-way when they do not overlap), deletes, conflict resolutions and
syncs through one folder, then sync until quiet: every device ends with the same records, the same
winners, the same kept conflicts and the same revision trees (no revision any device wrote is
missing anywhere). 300 operations keep the everyday run short; a slower run of 1,200 operations
with another seed (marked slow) reaches longer revision histories and more conflicts on conflicts.
The seed makes a failure repeatable."""

from __future__ import annotations

import random

import pytest

from memories_tui.errors import MemoriesError
from memories_tui.sync.run import load_state
from memories_tui.sync.threeway import MERGE_DEVICE
from tests.helpers.sync import first_device, joined_device

SEED = 31
OPERATIONS = 300
LONG_SEED = 1031
LONG_OPERATIONS = 1_200


def test_three_devices_converge_after_random_edits_deletes_and_syncs(tmp_path, cheap_kdf):
    counts, open_conflicts = _converge(tmp_path, SEED, OPERATIONS)
    assert open_conflicts, "no concurrent edit was left unresolved: the run tested little"


@pytest.mark.slow
def test_three_devices_converge_after_a_long_seeded_run(tmp_path, cheap_kdf):
    counts, _ = _converge(tmp_path, LONG_SEED, LONG_OPERATIONS)
    assert sum(counts.values()) == LONG_OPERATIONS >= 1_000
    assert counts["resolve"] >= 10, counts  # conflicts kept arising all along (resolved ones end before the end)


def _edits_made_apart(devices) -> None:  # noqa: ANN001 - Devices
    """A note every device has, then two devices edit different lines of it before either
    syncs: the run holds at least one three-way merge (the random operations make 0-4, as device
    ids are random and decide the winners the later edits start from)."""
    record_id = devices[0].add("made apart", "".join(f"line {n}\n" for n in range(6)))
    for device in devices:
        device.sync()
    devices[0].edit_a_line(record_id, 0, "first line, edited on one device")
    devices[1].edit_a_line(record_id, 5, "last line, edited on another")


def _converge(tmp_path, seed: int, operations: int, *, damage: bool = False,
              expect_merges: bool = True) -> tuple[dict[str, int], dict[str, object]]:
    """Run the seeded operations; asserts convergence and returns the counts and the conflicts left.
    `damage`: the target also truncates a snapshot part now and then (a sync that needs it is
    refused until its device rebuilds it), and every device writes and syncs at the end so each
    one compacts again. `expect_merges`: at least one three-way merge must have happened (with
    frequent snapshots a device may lack the base text a merge needs, as docs/sync.md says)."""
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    a.add("seed note", "0")
    a.sync()
    devices = [a, joined_device(tmp_path / "b", str(folder)), joined_device(tmp_path / "c", str(folder))]
    rng = random.Random(seed)
    counts = {"add": 0, "edit": 0, "line": 0, "delete": 0, "resolve": 0, "sync": 0} | ({"damage": 0} if damage else {})

    def sync(device) -> None:  # noqa: ANN001 - a Device
        try:
            device.sync()
        except MemoriesError as exc:
            if not (damage and counts["damage"] and exc.code == "sync_target_tampered"):
                raise

    for step in range(operations):
        device = rng.choice(devices)
        ids = sorted(device.records())
        roll = rng.random()
        if roll < 0.2 or not ids:
            device.add(f"note {step}", f"body {step} 中文")
            counts["add"] += 1
        elif roll < 0.35:
            device.edit(rng.choice(ids), f"edit {step} on {devices.index(device)}")
            counts["edit"] += 1
        elif roll < 0.6:
            record_id = rng.choice(ids)
            device.edit_a_line(record_id, rng.randrange(6), f"line edit {step}")
            counts["line"] += 1
        elif roll < 0.7:
            device.delete(rng.choice(ids))
            counts["delete"] += 1
        elif roll < 0.78 and (conflicted := sorted(set(device.conflicts()) & set(ids))):
            record_id = rng.choice(conflicted)
            kept = [k.revision for c in device.engine.conflicts(device.vault_id) if c.record_id == record_id
                    for k in c.kept]  # a deletion too: keeping it deletes the record on every device
            device.engine.resolve_conflict(device.vault_id, record_id,
                                           keep=rng.choice(kept) if kept and rng.random() < 0.5 else None)
            counts["resolve"] += 1
        elif damage and roll < 0.81 and (parts := sorted(folder.glob("d/*/s*"))):
            part = rng.choice(parts)
            part.write_bytes(part.read_bytes()[:-3])
            counts["damage"] += 1
        else:
            sync(device)
            counts["sync"] += 1
    for round_ in range(6 if damage else 0):  # enough bundles for each device to compact (and repair) again
        for number, device in enumerate(devices):
            device.add(f"last {round_} {number}", "")
            sync(device)
    _edits_made_apart(devices)
    for _ in range(2):
        for device in devices:
            device.sync()
    first = devices[0]
    assert all(counts.values()), counts
    assert first.records(), "everything was deleted: the run tested little"
    for other in devices[1:]:
        assert other.records() == first.records()
        assert other.conflicts() == first.conflicts()
    trees = [{record_id: set(doc.tree.revs) for record_id, doc in
              load_state(d.engine._unlocked(d.vault_id)).every_doc().items()} for d in devices]
    assert trees[1] == trees[0] and trees[2] == trees[0]  # every revision any device wrote is on every device
    state = load_state(first.engine._unlocked(first.vault_id))
    merges = [rev for doc in state.every_doc().values() for rev in doc.tree.revs.values() if rev.device == MERGE_DEVICE]
    apart = next(body for _kind, title, body in first.records().values() if title == "made apart")
    merged = "first line, edited on one device" in apart and "last line, edited on another" in apart
    assert (merges and merged) or not expect_merges, f"the last two edits made apart did not merge: {apart!r}"
    open_conflicts = dict(first.conflicts())
    for device in devices:
        device.close()
    return counts, open_conflicts
