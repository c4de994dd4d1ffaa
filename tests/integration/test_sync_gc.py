"""Compaction reaching other devices' objects, through a real folder target with several homes as
devices: a forgotten device's chain is carried in another device's snapshot and its objects
are then deleted, and a device joining afterwards, one that was offline meanwhile and the
forgotten device itself coming back all end with every record, revision and conflict; a
device silent for longer than `[sync] hold_days` stops holding back deleting, and when it
returns it catches up with nothing lost or duplicated; a device whose clock is a year off
never makes another delete early."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memories_tui.sync import compaction
from tests.helpers.sync import first_device, joined_device

K = 3
DAY_MS = 86_400_000


def _home(path: Path, hold_days: float = 30, compact_after: int = K) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.toml").write_text(f"[sync]\ncompact_after = {compact_after}\nhold_days = {hold_days}\n",
                                      encoding="utf-8")
    return path


def _device_id(device) -> str:
    return next(d.device for d in device.engine.sync_devices(device.vault_id) if d.this_device)


def _bundles(folder: Path, device: str) -> list[int]:
    prefix = folder / "d" / device
    return sorted(int(p.name) for p in prefix.iterdir() if p.name.isdigit()) if prefix.exists() else []


def _trees(device) -> dict[str, set[tuple[str, str]]]:
    """record -> (revision id, writing device) of its revision tree, from the sync state."""
    from memories_tui.sync.run import load_state

    docs = load_state(device.engine._vault(device.vault_id)).every_doc()
    return {rid: {(rev.rev_id, rev.device) for rev in doc.tree.revs.values()} for rid, doc in docs.items()}


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "Sync"
    path.mkdir()
    return path


@pytest.fixture
def publish_often(monkeypatch):
    monkeypatch.setattr(compaction, "PUBLISH_EVERY", 1)


def _lost_device_scenario(tmp_path, folder):
    """a and b sync with `lost`, which adds records, edits a's and makes a conflict with b, then
    is lost; `early` joined before lost's last changes and stays offline. b forgets lost."""
    a = first_device(_home(tmp_path / "a"), str(folder))
    shared = a.add("shared", "line one\nline two\n")
    a.sync()
    b = joined_device(_home(tmp_path / "b"), str(folder))
    lost = joined_device(_home(tmp_path / "lost"), str(folder))
    early = joined_device(_home(tmp_path / "early"), str(folder))
    mine = [lost.add(f"lost note {i}", f"written on the lost device {i} 中文") for i in range(3)]
    lost.sync()
    early.sync()  # has read part of lost's chain, then goes offline
    lost.edit(mine[0], "edited again on the lost device")
    lost.edit(shared, "line one\nlost's line two\n")
    b.edit(shared, "line one\nb's line two\n")  # the same line: a conflict
    lost.sync()
    b.sync()
    a.sync()
    lost_id = _device_id(lost)
    b.engine.sync_forget(b.vault_id, lost_id[:8])
    return a, b, lost, early, lost_id, mine, shared


def test_a_forgotten_device_is_carried_then_deleted_and_a_new_device_gets_everything(tmp_path, folder, cheap_kdf,
                                                                                     publish_often):
    a, b, lost, early, lost_id, mine, shared = _lost_device_scenario(tmp_path, folder)
    assert (folder / "d" / lost_id / "head").exists()
    a.edit(shared, "line one\nb's line two\nand a's line three\n")
    a.sync()  # a has read lost's whole chain: its snapshot now carries it
    assert (folder / "d" / lost_id / "head").exists()  # kept one more sync, for a reader of a's previous head
    b.sync()
    a.sync()
    assert not (folder / "d" / lost_id).exists() or not any((folder / "d" / lost_id).iterdir())
    assert lost_id not in {d.device for d in a.engine.sync_devices(a.vault_id)}
    c = joined_device(_home(tmp_path / "c"), str(folder))
    assert c.records() == a.records() == b.records()
    assert c.records()[mine[0]][2] == "edited again on the lost device"
    assert all(rid in c.records() for rid in mine)
    assert c.conflicts() == a.conflicts() and shared in c.conflicts()  # lost's losing revision, text and all
    trees_a, trees_c = _trees(a), _trees(c)
    assert trees_c == trees_a and any(dev == lost_id for revs in trees_c.values() for _rev, dev in revs)
    early.sync()  # it had read only part of lost's chain: the rest comes from a's snapshot
    assert early.records() == a.records() and early.conflicts() == a.conflicts()
    for device in (a, b, c, early, lost):
        device.close()


def test_a_forgotten_device_whose_objects_are_damaged_is_not_carried_and_nothing_else_stops(
        tmp_path, folder, cheap_kdf, publish_often):
    a, b, lost, early, lost_id, mine, shared = _lost_device_scenario(tmp_path, folder)
    first = folder / "d" / lost_id / "0000000001"
    blob = first.read_bytes()
    first.write_bytes(blob[:-5])
    for i in range(K + 1):  # a's own compaction still runs; lost's chain is not carried while damaged
        a.edit(shared, f"line one\nb's line two\na {i}\n")
        a.sync()
    assert (folder / "d" / lost_id / "head").exists() and first.exists()
    assert any(p.name.startswith("s") for p in (folder / "d" / a.sync().device).iterdir())
    first.write_bytes(blob)  # the sync tool finished copying it
    a.sync()
    a.sync()
    assert not _bundles(folder, lost_id) and not (folder / "d" / lost_id / "head").exists()
    c = joined_device(_home(tmp_path / "c"), str(folder))
    assert c.records() == a.records() and all(rid in c.records() for rid in mine)
    for device in (a, b, c, early, lost):
        device.close()


def test_a_forgotten_device_that_comes_back_after_its_objects_were_deleted_goes_on(tmp_path, folder, cheap_kdf,
                                                                                   publish_often):
    a, b, lost, early, lost_id, mine, shared = _lost_device_scenario(tmp_path, folder)
    for i in range(2):
        a.edit(shared, f"line one\nb's line two\na {i}\n")
        a.sync()
    assert not _bundles(folder, lost_id) and not (folder / "d" / lost_id / "head").exists()
    lost.edit(mine[1], "edited while it was forgotten")  # not pushed yet when its objects went
    new = lost.add("new on the returning device", "body")
    lost.sync()
    for i in range(K + 1):  # enough pushes for it to compact its own chain, which a's snapshot began
        lost.edit(mine[2], f"after coming back {i}")
        lost.sync()
    assert any(p.name.startswith("s") for p in (folder / "d" / lost_id).iterdir())
    for device in (a, b, early):
        device.sync()
    assert a.records()[mine[1]][2] == "edited while it was forgotten" and new in a.records()
    assert a.records() == b.records() == early.records() == lost.records()
    late = joined_device(_home(tmp_path / "late"), str(folder))
    assert late.records() == a.records() and late.conflicts() == a.conflicts()
    for device in (a, b, early, lost, late):
        device.close()


def test_a_forgotten_device_that_only_read_leaves_nothing_behind_and_can_come_back(tmp_path, folder, cheap_kdf,
                                                                                   publish_often):
    a = first_device(_home(tmp_path / "a"), str(folder))
    rid = a.add("note", "v0")
    a.sync()
    reader = joined_device(_home(tmp_path / "reader"), str(folder))
    reader_id = _device_id(reader)
    assert (folder / "d" / reader_id / "head").exists()  # it says how far it read
    a.engine.sync_forget(a.vault_id, reader_id)
    a.sync()
    assert not (folder / "d" / reader_id / "head").exists() and not (folder / "d" / reader_id / "forgotten").exists()
    a.edit(rid, "v1")
    a.sync()
    reader.sync()
    assert reader.records() == a.records()
    a.close()
    reader.close()


def _shift_wall(monkeypatch, days: float) -> None:
    real = time.time_ns
    monkeypatch.setattr(compaction, "wall_ms", lambda: real() // 1_000_000 + int(days * DAY_MS))


def test_an_offline_device_past_hold_days_stops_holding_back_and_catches_up_with_nothing_lost(
        tmp_path, folder, cheap_kdf, publish_often, monkeypatch):
    a = first_device(_home(tmp_path / "a"), str(folder))
    rid = a.add("note", "line one\nline two\n")
    a.sync()
    away = joined_device(_home(tmp_path / "away"), str(folder))
    away_only = away.add("written while away", "kept")
    away.edit(rid, "line one\naway's line two\n")  # a conflict with a's edits below; not pushed yet
    device_a = a.sync().device
    for i in range(3 * K):
        a.edit(rid, f"line one\na's line two {i}\n")
        a.sync()
    assert _bundles(folder, device_a)[0] <= 2  # away read bundle 1 only: everything after stays
    _shift_wall(monkeypatch, 29)
    a.edit(rid, "line one\na's line two, a day before the hold ends\n")
    a.sync()
    assert _bundles(folder, device_a)[0] <= 2  # 29 days by a's clock: still held
    _shift_wall(monkeypatch, 31)
    a.edit(rid, "line one\na's last line two\n")
    a.sync()
    assert all(n > 2 for n in _bundles(folder, device_a)) and len(_bundles(folder, device_a)) <= K + 1
    monkeypatch.undo()
    away.sync()  # its next bundle of a is gone: it reads a's snapshot, then pushes what it wrote
    a.sync()
    assert a.records() == away.records()
    assert a.records()[away_only] == ("memory", "written while away", "kept")
    assert a.records()[rid][2] == "line one\na's last line two\n" or a.conflicts().get(rid)
    assert a.conflicts() == away.conflicts() and rid in a.conflicts()  # the concurrent edit kept, not lost
    assert sorted(r[1] for r in a.records().values()) == ["note", "written while away"]  # nothing doubled
    a.close()
    away.close()


@pytest.mark.parametrize("off_days", [-365, 365])
def test_a_device_whose_clock_is_a_year_off_does_not_make_another_delete_early(tmp_path, folder, cheap_kdf,
                                                                              publish_often, monkeypatch, off_days):
    from memories_tui.sync import run

    a = first_device(_home(tmp_path / "a"), str(folder))
    rid = a.add("note", "v0")
    device_a = a.sync().device
    real = time.time_ns
    with monkeypatch.context() as skewed:  # everything on this device runs a year off: its clock, its heads
        skewed.setattr(time, "time_ns", lambda: real() + off_days * DAY_MS * 1_000_000)
        skewed.setattr(run, "now", lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                           time.gmtime(real() / 1e9 + off_days * 86_400)))
        odd = joined_device(_home(tmp_path / "odd"), str(folder))
        odd.edit(next(iter(odd.records())), "edited on the device with the odd clock")
        odd.sync()
    for i in range(3 * K):
        a.edit(rid, f"v{i + 1}")
        a.sync()
    assert _bundles(folder, device_a)[0] <= 2  # odd has not read them: kept, whatever its clock said
    _shift_wall(monkeypatch, 31)
    a.sync()
    assert all(n > 2 for n in _bundles(folder, device_a))  # a month by a's own clock: no longer held
    monkeypatch.undo()
    odd.sync()
    a.sync()
    assert odd.records() == a.records()
    a.close()
    odd.close()


def test_hold_days_is_checked(tmp_path):
    from memories_tui.config import load_config
    from memories_tui.errors import ConfigError

    home = _home(tmp_path / "h", hold_days=-1)
    with pytest.raises(ConfigError) as caught:
        load_config(home / "config.toml", home)
    assert "hold_days" in caught.value.message
    ok = _home(tmp_path / "ok", hold_days=0)
    assert load_config(ok / "config.toml", ok).sync.hold_days == 0
    default = tmp_path / "d"
    default.mkdir()
    assert load_config(default / "config.toml", default).sync.hold_days == compaction.HOLD_DAYS


def test_heads_and_snapshots_say_what_they_carry_and_nothing_else_passes():
    from memories_tui.errors import SyncTamperedError
    from memories_tui.sync import snapshots
    from memories_tui.sync.chains import entry
    from memories_tui.sync.hlc import Stamp
    from memories_tui.sync.revtree import Rev
    from memories_tui.sync.sealing import Head, head_ad, seal
    from memories_tui.vault.keys import VaultKeys

    keys = VaultKeys(bytearray(range(32)), "0123456789abcdef")
    aead, device, gone = keys.sync_aead("head"), "fedcba9876543210", "aaaaaaaaaaaaaaaa"
    carrying = Head(device, 4, "d4", "t", 4, "s4", {gone: 2}, {gone: 2}, "laptop")
    assert Head.opened(aead, keys.vault_id, device, carrying.sealed(aead, keys.vault_id)) == carrying
    for bad in ({"snap": 4, "adopted": {gone: 0}}, {"adopted": {gone: 2}}, {"snap": 4, "adopted": [gone]},
                {"name": 7}, {"name": "x" * 65}):
        with pytest.raises(SyncTamperedError):
            Head.opened(aead, keys.vault_id, device,
                        seal(aead, {"seq": 4, "digest": "d4", "time": "t", **bad}, head_ad(keys.vault_id, device)))
    theirs = entry("r1", Rev("rev1", (), Stamp(1, 0), gone, False, "memory"), '{"t":"x"}')
    snap_aead = keys.sync_aead("snapshot")
    for carried, passes in (({gone: (2, "d2")}, True), ({}, False)):
        parts = snapshots.seal_parts(snap_aead, keys.vault_id, device, 4, "d4", [theirs], carried)
        named = Head(device, 4, "d4", "t", 4, snapshots.parts_digest(parts))
        blobs = {snapshots.snapshot_name(device, 4, k): p for k, p in enumerate(parts)}
        if passes:
            read = snapshots.read(snap_aead, keys.vault_id, named, blobs.get)
            assert read.adopted == carried and read.revs[0][1].device == gone
        else:  # another device's revision in a snapshot that does not say it carries that device
            with pytest.raises(SyncTamperedError):
                snapshots.read(snap_aead, keys.vault_id, named, blobs.get)
    keys.wipe()


def test_a_sync_killed_while_deleting_a_forgotten_device_leaves_a_target_that_still_syncs(tmp_path, folder):
    """Through the CLI: a carries the forgotten `lost`, then the sync that deletes lost's objects
    is killed after its first deletion; the next sync finishes, and a device joining afterwards
    has lost's records."""
    from tests.helpers.cli import call_cli
    from tests.helpers.faults import killed_at

    def titles(home: Path) -> set[str]:
        return {r["title"] for r in call_cli(home, "--json", "memory", "list", "notes").json["records"]}

    a, lost, c = _home(tmp_path / "a"), _home(tmp_path / "lost"), _home(tmp_path / "c")
    call_cli(a, "vault", "create", "notes")
    call_cli(a, "memory", "add", "notes", "--title", "a-1", "--text", "one")
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    assert call_cli(a, "sync", "notes").code == 0
    assert call_cli(lost, "sync", "join", str(folder)).code == 0
    for i in range(2):
        call_cli(lost, "memory", "add", "notes", "--title", f"lost-{i}", "--text", "from the lost device")
        assert call_cli(lost, "sync", "notes").code == 0
    lost_id = next(d["device"] for d in call_cli(lost, "--json", "sync", "devices", "notes").json["devices"]
                   if d["this_device"])
    assert call_cli(a, "sync", "notes").code == 0
    assert call_cli(a, "sync", "forget", "notes", lost_id).code == 0
    call_cli(a, "memory", "add", "notes", "--title", "a-2", "--text", "two")
    assert call_cli(a, "sync", "notes").code == 0  # carried now; deleted at the next sync
    assert _bundles(folder, lost_id) == [1, 2]
    call_cli(a, "memory", "add", "notes", "--title", "a-3", "--text", "three")
    killed_at("sync-mid-collect", a, tmp_path, "sync", "notes")
    assert _bundles(folder, lost_id) == [2] and (folder / "d" / lost_id / "head").exists()
    assert call_cli(c, "sync", "join", str(folder)).code == 0  # joins while lost's objects are half gone
    done = call_cli(a, "sync", "notes")
    assert done.code == 0, done.stderr
    assert not (folder / "d" / lost_id).exists() or not any((folder / "d" / lost_id).iterdir())
    assert call_cli(c, "sync", "notes").code == 0
    assert titles(a) == titles(c) == {"a-1", "a-2", "a-3", "lost-0", "lost-1"}


def test_two_devices_that_forgot_each_other_keep_carrying_each_other(tmp_path, folder, cheap_kdf, publish_often):
    """a forgets b, carries it and deletes its objects; then b forgets a and carries a, as far as
    b's own snapshot reaches. b writes again: its next snapshot is read from a's, which carries b
    exactly as far as b's own. It must still carry a (whose objects b then deletes), or a finds
    nobody carrying it and refuses to go on (`sync_target_rolled_back`). Found by
    scripts/sync_soak.py --forget (one run in a hundred)."""
    homes = {name: _home(tmp_path / name, compact_after=1) for name in ("a", "b")}  # a snapshot at every push
    a = first_device(homes["a"], str(folder))
    rid = a.add("from a", "a")
    a.sync()
    b = joined_device(homes["b"], str(folder))
    theirs = b.add("from b", "b")
    b.sync()
    a.sync()
    id_a, id_b = _device_id(a), _device_id(b)
    a.engine.sync_forget(a.vault_id, id_b)
    a.edit(rid, "a again")
    a.sync()  # a has read b's whole chain: its snapshot carries b
    a.sync()  # and it deletes b's objects
    assert not (folder / "d" / id_b / "head").exists()
    b.engine.sync_forget(b.vault_id, id_a)
    b.sync()  # b's own objects are gone (a carries it): b now carries a
    b.edit(theirs, "b again")
    b.sync()  # b's chain comes from a's snapshot; b deletes a's objects
    report = a.sync()  # a is carried by b: it goes on
    assert report.device == id_a
    b.sync()
    assert a.records() == b.records() and a.records()[theirs][2] == "b again"
    late = joined_device(_home(tmp_path / "late"), str(folder))
    assert late.records() == a.records()
    for device in (a, b, late):
        device.close()


def test_a_device_that_came_back_and_carries_another_is_not_deleted_with_that_chain(tmp_path, folder, cheap_kdf,
                                                                                   publish_often):
    """y forgets x, carries it and deletes its objects; x comes back without writing, and carries
    z (forgotten too), deleting z's objects; y forgets x again. y's snapshot carries x only as x
    was, not z: deleting x's objects then (its snapshot included) left z carried by nobody, so z
    refused to go on (`sync_target_rolled_back`) and a new device missed z's notes. Found by
    scripts/sync_soak.py --devices 4 --forget --damage --stream (seed 939). Once x leaves for
    good, y carries x again, and z with it (from x's snapshot), and deletes x's objects: they
    used to stay in the target for good."""
    homes = {name: _home(tmp_path / name, compact_after=1) for name in ("y", "x", "z")}  # a snapshot at every push
    y = first_device(homes["y"], str(folder))
    mine = y.add("from y", "y")
    y.sync()
    x = joined_device(homes["x"], str(folder))
    x.add("from x", "x")
    x.sync()
    z = joined_device(homes["z"], str(folder))
    z.add("from z", "z")
    z.sync()
    y.sync()
    x.sync()
    id_x, id_z = _device_id(x), _device_id(z)
    y.engine.sync_forget(y.vault_id, id_x)
    y.edit(mine, "y again")
    y.sync()  # y's snapshot carries x
    y.sync()  # and y deletes x's objects
    assert not (folder / "d" / id_x / "head").exists()
    y.engine.sync_forget(y.vault_id, id_z)
    x.sync()  # x comes back (carried by y) and carries z
    x.sync()  # and x deletes z's objects
    assert not (folder / "d" / id_z / "head").exists()
    y.engine.sync_forget(y.vault_id, id_x)
    y.edit(mine, "y once more")
    y.sync()
    z.sync()  # someone still carries z: it goes on
    x.sync()
    y.sync()
    assert y.records() == x.records() == z.records()
    late = joined_device(_home(tmp_path / "late"), str(folder))
    assert late.records() == y.records() and "from z" in {title for _k, title, _b in late.records().values()}
    x.close()  # x leaves for good: y carries what x carried, and x's objects go
    for n in range(3):
        y.edit(mine, f"y after x left {n}")
        y.sync()
    assert not list((folder / "d" / id_x).glob("*")), sorted(p.name for p in (folder / "d" / id_x).glob("*"))
    z.sync()
    newest = joined_device(_home(tmp_path / "newest"), str(folder))
    assert newest.records() == y.records() == z.records()
    assert {"from x", "from z"} <= {title for _k, title, _b in newest.records().values()}
    for device in (y, z, late, newest):
        device.close()
