"""A join (a sync into a vault that holds nothing and never synced) commits what it pulls a few
megabytes at a time as it verifies it, instead of holding the whole vault first (sync/stream.py).
Here the threshold is a few hundred bytes, so a join of a small history commits at nearly every
bundle and snapshot part: it must end exactly where a join that holds everything ends, keep
what it verified when the target turns out damaged part-way (and say so), and go on from there."""

from __future__ import annotations

import random
import shutil
import threading

import pytest

from memories_tui.errors import MemoriesError
from memories_tui.sync import run, snapshots, stream
from memories_tui.sync.run import load_state
from tests.helpers.sync import SYNC_PASS, Device, first_device, joined_device


def _home(path, compact_after: int):  # noqa: ANN001, ANN202
    path.mkdir(parents=True)
    (path / "config.toml").write_text(f"[sync]\ncompact_after = {compact_after}\n", encoding="utf-8")
    return path


@pytest.fixture
def commits(monkeypatch):
    """How many times a sync committed, and how often a streamed pull held revisions back."""
    seen = {"commits": 0, "held": 0}
    real_commit, real_split = run._merge_and_commit, stream.split

    def commit(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        seen["commits"] += 1
        return real_commit(*args, **kwargs)

    def split(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        ready, held = real_split(*args, **kwargs)
        seen["held"] += bool(held)
        return ready, held

    monkeypatch.setattr(run, "_merge_and_commit", commit)
    monkeypatch.setattr(stream, "split", split)
    return seen


def _history(tmp_path, folder, seed: int = 7, operations: int = 160, readers: int = 0  # noqa: ANN001
             ) -> tuple[list[Device], list[Device]]:
    """Three devices edit, delete, merge and conflict, compacting every other push (snapshots of
    many small parts, so a record's revisions spread over several of them); `readers` more
    devices join after the first note and then only watch. (the three, the readers)"""
    first = first_device(_home(tmp_path / "a", 2), str(folder))
    first.add("seed", "0")
    first.sync()
    watching = [joined_device(_home(tmp_path / f"reader{n}", 2), str(folder)) for n in range(readers)]
    devices = [first, joined_device(_home(tmp_path / "b", 2), str(folder)),
               joined_device(_home(tmp_path / "c", 2), str(folder))]
    rng = random.Random(seed)
    for step in range(operations):
        device = rng.choice(devices)
        ids = sorted(device.records())
        roll = rng.random()
        if roll < 0.25 or not ids:
            device.add(f"note {step}", f"body {step} 中文 " * 20)
        elif roll < 0.55:
            record_id = rng.choice(ids)
            device.edit_a_line(record_id, rng.randrange(6), f"line edit {step} on {devices.index(device)}")
        elif roll < 0.65:
            device.delete(rng.choice(ids))
        else:
            device.sync()
    return devices, watching


def _same(one: Device, other: Device) -> None:
    assert other.records() == one.records()
    assert other.conflicts() == one.conflicts()
    trees = [{record_id: set(doc.tree.revs) for record_id, doc in
              load_state(d.engine._unlocked(d.vault_id)).every_doc().items()} for d in (one, other)]
    assert trees[1] == trees[0]


def test_a_streamed_join_ends_where_a_join_that_holds_everything_ends(tmp_path, cheap_kdf, monkeypatch, commits):
    monkeypatch.setattr(snapshots, "PART_BYTES", 700)  # several parts a snapshot
    folder = tmp_path / "Sync"
    folder.mkdir()
    devices, _ = _history(tmp_path, folder)
    for device in devices:  # each ends with a snapshot and a few bundles after it
        device.sync()
    assert list(folder.glob("d/*/s*-0001")), "no snapshot of several parts: the test would test little"
    whole = joined_device(_home(tmp_path / "whole", 2), str(folder))
    assert commits["commits"] >= 1 and not commits["held"]
    before = commits["commits"]
    monkeypatch.setattr(stream, "STREAM_BYTES", 300)
    streamed = joined_device(_home(tmp_path / "streamed", 2), str(folder))
    assert commits["commits"] - before > 10, "the join did not commit as it read"
    assert commits["held"], "no record waited for its text in a later part: the test would test little"
    _same(whole, streamed)
    for device in devices:
        device.sync()
    streamed.sync()
    _same(devices[0], streamed)
    assert streamed.records()


@pytest.fixture
def pushed(tmp_path, cheap_kdf, monkeypatch):
    """Device a pushed 30 notes in many small bundles; joins commit every few of them."""
    monkeypatch.setattr(run, "BUNDLE_BYTES", 3000)
    monkeypatch.setattr(stream, "STREAM_BYTES", 3000)
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(_home(tmp_path / "a", 0), str(folder))
    for i in range(30):
        a.add(f"note {i}", f"{i} " + "line of text " * 60)
    a.sync()
    return a, folder


def _opened(home, vault_id: str) -> Device:  # noqa: ANN001
    from memories_tui.engine import Engine

    device = Device(Engine.open(home), vault_id)
    device.engine.unlock(vault_id, SYNC_PASS)
    return device


def test_a_join_that_meets_a_damaged_bundle_keeps_what_it_verified_and_the_next_sync_goes_on(tmp_path, pushed):
    a, folder = pushed
    bundles = sorted(p for p in folder.glob("d/*/*") if p.name.isdigit())
    assert len(bundles) > 6
    damaged = bundles[5]
    kept = damaged.read_bytes()
    damaged.write_bytes(kept[:-3])
    with pytest.raises(MemoriesError) as caught:
        joined_device(_home(tmp_path / "b", 0), str(folder))
    assert caught.value.code == "sync_target_tampered"
    assert "held nothing before this sync" in caught.value.message
    b = _opened(tmp_path / "b", a.vault_id)
    got = b.records()
    assert 0 < len(got) < 30 and all(a.records()[k] == v for k, v in got.items())  # a verified prefix, as pushed
    with pytest.raises(MemoriesError) as again:
        b.sync()  # the target is still damaged there: refused, nothing more verified, nothing more kept
    assert again.value.code == "sync_target_tampered" and "kept here" not in again.value.message
    assert b.records() == got
    damaged.write_bytes(kept)
    b.sync()
    _same(a, b)


def test_ctrl_c_during_a_streamed_pull_keeps_what_it_received_and_says_so(tmp_path, pushed):
    a, folder = pushed
    first = sorted(p for p in folder.glob("d/*/*") if p.name.isdigit())[0]
    kept = first.read_bytes()
    first.unlink()  # the join makes the vault, then finds nothing it can use: the vault stays empty
    with pytest.raises(MemoriesError) as caught:
        joined_device(_home(tmp_path / "b", 0), str(folder))
    assert caught.value.code == "sync_target_tampered" and "held nothing" not in caught.value.message
    first.write_bytes(kept)
    b = _opened(tmp_path / "b", a.vault_id)
    assert b.records() == {}
    cancel = threading.Event()
    fetched = []

    def progress(p) -> None:  # noqa: ANN001
        fetched.append(p)
        if p.stage == "pull" and p.done >= 8:
            cancel.set()  # ctrl+c while the bundles are read

    with pytest.raises(MemoriesError) as stopped:
        b.engine.sync_now(b.vault_id, progress=progress, cancel=cancel)
    assert stopped.value.code == "cancelled" and "received so far are kept" in stopped.value.message
    assert 0 < len(b.records()) < 30
    b.sync()
    _same(a, b)


def _in_reading_order(tmp_path, folder, count: int) -> tuple[list[Device], list[str]]:  # noqa: ANN001
    """`count` devices of one vault through `folder` (the first pushed a note "seed"), in the
    order a pull reads their chains (by device id). (the devices, their ids)"""
    folder.mkdir()
    first = first_device(_home(tmp_path / "d0", 0), str(folder))
    first.add("seed")
    first.sync()
    devices = [first] + [joined_device(_home(tmp_path / f"d{n}", 0), str(folder)) for n in range(1, count)]
    ids = [next(d.device for d in h.engine.sync_devices(h.vault_id) if d.this_device) for h in devices]
    order = sorted(range(count), key=ids.__getitem__)
    return [devices[n] for n in order], [ids[n] for n in order]


def _edit_apart(tmp_path, folder, a: Device, b: Device, a_id: str, note: str) -> None:  # noqa: ANN001
    """a edits line 0 of the note and b line 3, and both push without seeing the other's edit
    (their syncs crossed): the target holds both edits and no merge of them."""
    a.edit_a_line(note, 0, "A's line")
    b.edit_a_line(note, 3, "B's line")
    shutil.copytree(folder, tmp_path / "before")
    a.sync()
    shutil.move(folder, tmp_path / "with a")
    shutil.move(tmp_path / "before", folder)
    b.sync()  # it does not see a's edit
    shutil.rmtree(folder / "d" / a_id)
    shutil.copytree(tmp_path / "with a" / "d" / a_id, folder / "d" / a_id)  # a's push, beside b's


def test_a_streamed_join_does_not_merge_an_edit_that_a_later_device_deleted(tmp_path, cheap_kdf, monkeypatch):
    """B edits line 0, C deletes B's version, A (which saw neither) edits line 3: every device
    keeps A's edit with the deletion as a conflict, nothing to merge. A join reading B's and A's
    chains before C's used to merge B's line into A's edit (soak seed 431); then it told the
    others, and the note changed everywhere to text nobody wrote."""
    folder = tmp_path / "Sync"
    (a, b, c), _ids = _in_reading_order(tmp_path, folder, 3)
    note = a.add("note", "".join(f"line {n}\n" for n in range(6)))  # the ancestor, read first: its text is at hand
    a.sync()
    b.sync()
    b.edit_a_line(note, 0, "B's line")
    b.sync()
    c.sync()
    c.delete(note)
    c.sync()
    a.edit_a_line(note, 3, "A's line")
    a.sync()
    for device in (b, c, a):
        device.sync()
    assert a.records()[note][2] == "line 0\nline 1\nline 2\nA's line\nline 4\nline 5\n"
    monkeypatch.setattr(stream, "STREAM_BYTES", 1)  # a commit at every bundle
    late = joined_device(_home(tmp_path / "late", 0), str(folder))
    for device in (late, b, c):
        assert device.records() == a.records() and device.conflicts() == a.conflicts()
    _same(a, late)


@pytest.mark.parametrize("commits_at", ["every bundle", "one commit with the ancestor"])
def test_a_streamed_join_merges_edits_made_apart_once_it_has_read_everything(tmp_path, cheap_kdf, monkeypatch,
                                                                              commits_at):
    """Two devices edited different lines and pushed without seeing each other (their syncs
    crossed): the target holds both edits and no merge. A streamed join merges them at its last
    commit, to the very revision a join that holds everything, and each of the two, writes;
    also when the ancestor came in the same streamed commit as both edits (so the vault never
    held it: the commit keeps its text for the last one)."""
    folder = tmp_path / "Sync"
    (a, b), (a_id, _b_id) = _in_reading_order(tmp_path, folder, 2)  # a's chain, with the ancestor, is read first
    note = a.add("note", "".join(f"line {n}\n" for n in range(6)))
    a.sync()
    b.sync()
    _edit_apart(tmp_path, folder, a, b, a_id, note)
    shutil.copytree(folder, tmp_path / "copy")
    monkeypatch.setattr(stream, "STREAM_BYTES", 1)  # a commit at every bundle
    if commits_at != "every bundle":
        real_split = stream.split

        def split(bundles, state):  # noqa: ANN001, ANN202 - all three revisions of the note, or nothing yet
            seen = sum(record_id == note for bundle in bundles for record_id, _rev, _payload in bundle.revs)
            return real_split(bundles, state) if seen == 3 else ([], bundles)

        monkeypatch.setattr(stream, "split", split)
    streamed = joined_device(_home(tmp_path / "streamed", 0), str(folder))
    assert streamed.records()[note][2] == "A's line\nline 1\nline 2\nB's line\nline 4\nline 5\n"
    assert streamed.conflicts() == {}
    monkeypatch.setattr(stream, "STREAM_BYTES", 4 << 20)
    _same(joined_device(_home(tmp_path / "whole", 0), str(tmp_path / "copy")), streamed)
    for device in (a, b, streamed, a, b):
        device.sync()
    _same(a, streamed)
    _same(b, streamed)


def test_edits_left_unmerged_by_a_join_stopped_part_way_merge_at_the_next_sync(tmp_path, cheap_kdf, monkeypatch):
    """The join committed both edits (unmerged: it had not read everything), then met a damaged
    object of a third device and stopped. The next sync reads only what comes after what the
    join committed, none of it about that note; it still merges the two edits, as every other
    device does, instead of leaving a conflict that only another device's merge would end."""
    folder = tmp_path / "Sync"
    (a, b, c), (a_id, _b_id, c_id) = _in_reading_order(tmp_path, folder, 3)
    note = a.add("note", "".join(f"line {n}\n" for n in range(6)))
    a.sync()
    b.sync()
    c.add("c's note")
    c.sync()  # c's last push, before the two edits: it carries no merge of them
    _edit_apart(tmp_path, folder, a, b, a_id, note)
    damaged = max((folder / "d" / c_id).glob("0*"))
    kept = damaged.read_bytes()
    damaged.write_bytes(kept[:-3])
    monkeypatch.setattr(stream, "STREAM_BYTES", 1)  # a commit at every bundle
    with pytest.raises(MemoriesError) as caught:
        joined_device(_home(tmp_path / "late", 0), str(folder))
    assert caught.value.code == "sync_target_tampered" and "kept here" in caught.value.message
    late = _opened(tmp_path / "late", a.vault_id)
    assert late.conflicts(), "the join did not commit the two edits before it stopped: the test would test little"
    damaged.write_bytes(kept)
    late.sync()
    assert late.records()[note][2] == "A's line\nline 1\nline 2\nB's line\nline 4\nline 5\n"
    assert late.conflicts() == {}
