"""A join (a sync into a vault that holds nothing and never synced) commits what it pulls a few
megabytes at a time as it verifies it, instead of holding the whole vault first (sync/stream.py).
Here the threshold is a few hundred bytes, so a join of a small history commits at nearly every
bundle and snapshot part: it must end exactly where a join that holds everything ends, keep
what it verified when the target turns out damaged part-way (and say so), and go on from there."""

from __future__ import annotations

import random
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
