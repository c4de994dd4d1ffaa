"""Compaction through a real folder target with several homes as devices: the object count stays
bounded over many syncs, a device joining later or coming back after long gets everything
through the snapshot, nothing a known device still needs is deleted, `sync forget` releases
what a lost device held back, and a snapshot the target drops, alters, swaps or rolls back is
refused with the reading vault left exactly as it was."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memories_tui.engine import Engine
from memories_tui.errors import ConfigError, MemoriesError
from memories_tui.sync import compaction, snapshots
from tests.helpers.sync import SYNC_PASS, Device, first_device, joined_device

K = 3  # compact after this many bundles: small, so a test sees several compactions


def _home(path: Path, compact_after: int = K) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.toml").write_text(f"[sync]\ncompact_after = {compact_after}\n", encoding="utf-8")
    return path


def _objects(folder: Path, device: str | None = None) -> list[str]:
    root = folder / "d" / device if device else folder
    return sorted(str(p.relative_to(folder)) for p in root.rglob("*") if p.is_file())


def _bundles(folder: Path, device: str) -> list[int]:
    return sorted(int(p.name) for p in (folder / "d" / device).iterdir() if p.name.isdigit())


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "Sync"
    path.mkdir()
    return path


@pytest.fixture
def publish_often(monkeypatch):
    monkeypatch.setattr(compaction, "PUBLISH_EVERY", 1)  # every read is published: deletions follow at once


def _compacted_while_read(a, b, rid: str, mine: Path) -> Path:  # noqa: ANN001 - Devices
    """a edits `rid` and syncs until it compacted, b reading after each push; a's one snapshot part."""
    for i in range(K + 1):
        a.edit(rid, f"v{i + 1}")
        a.sync()
        b.sync()
    a.sync()
    (part,) = mine.glob("s*")
    return part


def _own_snapshot_damaged(tmp_path: Path, folder: Path) -> tuple[Device, Device, str, str]:
    """a writes a note and compacts while b reads; then the target truncates a's one snapshot part."""
    a = first_device(_home(tmp_path / "a"), str(folder))
    rid = a.add("note", "v0 中文")
    device = a.sync().device
    b = joined_device(_home(tmp_path / "b"), str(folder))
    part = _compacted_while_read(a, b, rid, folder / "d" / device)
    part.write_bytes(part.read_bytes()[:-3])
    return a, b, rid, device


def _rounds(a, b, rid_a: str, rid_b: str, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        a.edit(rid_a, f"a round {i}")
        a.sync()
        if i % 3 == 0:
            b.edit(rid_b, f"b round {i}")
        b.sync()


def test_the_object_count_stays_bounded_over_many_syncs(tmp_path, folder, cheap_kdf, publish_often):
    a = first_device(_home(tmp_path / "a"), str(folder))
    rid_a = a.add("from a", "a")
    a.sync()
    b = joined_device(_home(tmp_path / "b"), str(folder))
    rid_b = b.add("from b", "b")
    b.sync()
    _rounds(a, b, rid_a, rid_b, 12)
    middle = len(_objects(folder))
    _rounds(a, b, rid_a, rid_b, 36, start=12)
    device_a = a.sync().device
    own = _bundles(folder, device_a)
    assert len(_objects(folder)) <= middle + 2 <= 2 * (K + 5)  # 48 pushes by a, 16 by b: no growth
    assert own and own[0] > 40 and len(own) <= K + 1  # what is left is recent; the snapshot holds the rest
    assert a.records() == b.records()
    assert a.records()[rid_a][2] == "a round 47"
    c = joined_device(_home(tmp_path / "c"), str(folder))  # joins from the snapshots and the few bundles after
    assert c.records() == a.records()
    assert max(d.bundles for d in c.engine.sync_devices(c.vault_id)) >= 48  # positions are still the chain's
    for device in (a, b, c):
        device.close()


def test_join_after_compaction_reads_the_snapshot_and_brings_everything(tmp_path, folder, cheap_kdf, publish_often):
    a = first_device(_home(tmp_path / "a"), str(folder))
    ids = [a.add(f"note {i}", f"body {i} 中文內容") for i in range(5)]
    a.sync()
    for i in range(10):
        a.edit(ids[i % 5], f"edit {i}")
        a.sync()
    a.delete(ids[0])
    report = a.sync()
    assert 1 not in _bundles(folder, report.device)  # alone: nobody else needs the bundles
    assert any(name.split("/")[-1].startswith("s") for name in _objects(folder, report.device))
    c = joined_device(_home(tmp_path / "c"), str(folder))
    assert c.records() == a.records() and ids[0] not in c.records()
    c.edit(ids[1], "edited on the joined device")
    c.sync()
    a.sync()
    assert a.records()[ids[1]][2] == "edited on the joined device"
    a.close()
    c.close()


def test_nothing_a_known_device_still_needs_is_deleted_and_it_catches_up_via_the_snapshot(
        tmp_path, folder, cheap_kdf, publish_often, monkeypatch):
    a = first_device(_home(tmp_path / "a"), str(folder))
    rid = a.add("note", "v0")
    a.sync()
    b = joined_device(_home(tmp_path / "b"), str(folder))  # then offline for long
    for i in range(20):
        a.edit(rid, f"v{i + 1}")
        last = a.sync()
    own = _bundles(folder, last.device)
    assert own[0] <= 2 and len(own) >= 20  # b read only bundle 1 and part of 2: they all stay
    monkeypatch.setattr(snapshots, "FAR_BEHIND", 5)
    caught_up = b.sync()
    assert b.records() == a.records()
    assert caught_up.fetched_objects < 10  # the heads and the snapshot, not twenty bundles
    a.sync()  # b's head now says it has read everything: a deletes what its snapshot holds
    assert len(_bundles(folder, last.device)) <= K
    a.close()
    b.close()


def test_forget_releases_compaction_and_a_forgotten_device_comes_back_through_the_snapshot(
        tmp_path, folder, cheap_kdf, publish_often):
    a = first_device(_home(tmp_path / "a"), str(folder))
    rid = a.add("note", "v0")
    a.sync()
    b = joined_device(_home(tmp_path / "b"), str(folder))
    lost = joined_device(_home(tmp_path / "lost"), str(folder))
    lost_id = lost.engine.sync_devices(lost.vault_id)
    lost_device = next(d.device for d in lost_id if d.this_device)
    for i in range(10):
        a.edit(rid, f"v{i + 1}")
        device_a = a.sync().device
        b.sync()
    assert _bundles(folder, device_a)[0] <= 2  # the lost device holds them back
    b.engine.sync_forget(b.vault_id, lost_device[:8])
    a.edit(rid, "after forget")
    a.sync()
    b.sync()
    a.sync()
    assert all(n > 2 for n in _bundles(folder, device_a))  # released
    lost.sync()  # its next bundle is gone: it reads the snapshot
    assert lost.records() == a.records() == b.records()
    for device in (a, b, lost):
        device.close()


@pytest.fixture
def compacted(tmp_path, folder, cheap_kdf, publish_often):
    """a wrote 8 bundles and compacted; `late` joined at bundle 1, was forgotten and must now read
    a's snapshot (its next bundle is gone). Yields (a, late, a's folder, tmp)."""
    a = first_device(_home(tmp_path / "a"), str(folder))
    rid = a.add("note", "v0")
    a.sync()
    late = joined_device(_home(tmp_path / "late"), str(folder))
    late_device = next(d.device for d in late.engine.sync_devices(late.vault_id) if d.this_device)
    a.engine.sync_forget(a.vault_id, late_device)
    for i in range(8):
        a.edit(rid, f"v{i + 1}")
        device = a.sync().device
    mine = folder / "d" / device
    assert 1 not in _bundles(folder, device) and list(mine.glob("s*"))
    yield a, late, mine, tmp_path
    a.close()
    late.close()


def _state(device):
    vault = device.engine._vault(device.vault_id)
    return device.records(), vault.change_counter(), vault.sync_state()


def _refused(device, code: str) -> None:
    before = _state(device)
    with pytest.raises(MemoriesError) as caught:
        device.sync()
    assert caught.value.code == code, caught.value.message
    assert _state(device) == before


def _parts(mine: Path) -> list[Path]:
    return sorted(mine.glob("s*"))


def test_a_dropped_or_altered_snapshot_is_refused(compacted):
    a, late, mine, _ = compacted
    part = _parts(mine)[-1]
    blob = part.read_bytes()
    part.unlink()
    _refused(late, "sync_target_tampered")
    part.write_bytes(blob[:50] + bytes([blob[50] ^ 1]) + blob[51:])
    _refused(late, "sync_target_tampered")
    part.write_bytes(blob)
    late.sync()
    assert late.records() == a.records()


def test_an_older_snapshot_or_another_object_in_place_of_the_current_one_is_refused(compacted):
    a, late, mine, _ = compacted
    older = {p.name: p.read_bytes() for p in _parts(mine)}
    bundles = []
    for i in range(K):
        a.edit(next(iter(a.records())), f"later {i}")
        a.sync()
        bundles += [p.read_bytes() for p in mine.iterdir() if p.name.isdigit()]
    current = _parts(mine)[-1]
    assert current.name not in older  # a newer snapshot
    kept = current.read_bytes()
    current.write_bytes(older[sorted(older)[-1]])  # the older snapshot under the new name
    _refused(late, "sync_target_tampered")
    current.write_bytes(bundles[-1])  # a bundle put where the snapshot is
    _refused(late, "sync_target_tampered")
    current.write_bytes(kept)
    late.sync()
    assert late.records() == a.records()


def test_a_rolled_back_target_with_an_older_snapshot_is_refused(compacted, folder):
    a, late, mine, tmp = compacted
    late.sync()  # late has read a up to its head
    saved = tmp / "saved"
    shutil.copytree(mine, saved)
    for i in range(K + 1):
        a.edit(next(iter(a.records())), f"later {i}")
        a.sync()
    late.sync()
    shutil.rmtree(mine)
    shutil.copytree(saved, mine)  # a's prefix as it was, older snapshot and head included
    _refused(late, "sync_target_rolled_back")
    _refused(a, "sync_target_rolled_back")


def test_the_setting_is_checked(tmp_path):
    from memories_tui.config import load_config

    home = _home(tmp_path / "h", compact_after=-1)
    with pytest.raises(ConfigError) as caught:
        load_config(home / "config.toml", home)
    assert "compact_after" in caught.value.message
    assert load_config(_home(tmp_path / "ok", compact_after=0) / "config.toml", tmp_path / "ok").sync.compact_after == 0


@pytest.mark.parametrize("point", ["sync-before-head", "sync-before-prune", "sync-mid-prune"])
def test_a_sync_killed_during_compaction_leaves_a_target_that_still_syncs(tmp_path, folder, point):
    """The killed sync writes a snapshot (its second bundle, compact_after 2), then its head,
    then deletes bundle 1, which the other device has read: killed before each step."""
    from tests.helpers.cli import call_cli
    from tests.helpers.faults import killed_at

    def titles(home: Path) -> set[str]:
        return {r["title"] for r in call_cli(home, "--json", "memory", "list", "notes").json["records"]}

    a, b, c = _home(tmp_path / "a", 2), _home(tmp_path / "b", 2), _home(tmp_path / "c", 2)
    call_cli(a, "vault", "create", "notes")
    call_cli(a, "memory", "add", "notes", "--title", "a-1", "--text", "one")
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    assert call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    call_cli(b, "memory", "add", "notes", "--title", "b-1", "--text", "from b")
    assert call_cli(b, "sync", "notes").code == 0
    call_cli(a, "memory", "add", "notes", "--title", "a-2", "--text", "two")
    killed_at(point, a, tmp_path, "sync", "notes")
    assert any(p.name.startswith("s") for p in folder.rglob("*"))  # the snapshot was written before the kill
    for home in (b, a, b, a):
        done = call_cli(home, "sync", "notes")
        assert done.code == 0, done.stderr
    assert call_cli(c, "sync", "join", str(folder)).code == 0
    assert titles(a) == titles(b) == titles(c) == {"a-1", "a-2", "b-1"}
    a_prefix = next(p for p in (folder / "d").iterdir() if list(p.glob("s*")))  # only a wrote a snapshot
    assert not (a_prefix / "0000000001").exists()  # and a later sync finished what the killed one began


def test_a_head_from_before_compaction_opens_and_a_head_naming_an_impossible_snapshot_is_refused():
    from memories_tui.errors import SyncTamperedError
    from memories_tui.sync.sealing import Head, head_ad, seal
    from memories_tui.vault.keys import VaultKeys

    keys = VaultKeys(bytearray(range(32)), "0123456789abcdef")
    aead, device = keys.sync_aead("head"), "fedcba9876543210"

    def opened(value: dict) -> Head:
        return Head.opened(aead, keys.vault_id, device, seal(aead, value, head_ad(keys.vault_id, device)))

    old = opened({"seq": 4, "digest": "d4", "time": "t"})  # what devices wrote before compaction
    assert (old.snap, old.snap_digest, old.read) == (0, "", {})
    new = Head(device, 4, "d4", "t", 3, "s3", {"aaaaaaaaaaaaaaaa": 2})
    assert Head.opened(aead, keys.vault_id, device, new.sealed(aead, keys.vault_id)) == new
    for bad in ({"snap": 5}, {"snap": -1}, {"snap": "3"}, {"read": {"x": -1}}, {"read": ["x"]}, {"snapd": 3}):
        with pytest.raises(SyncTamperedError):
            opened({"seq": 4, "digest": "d4", "time": "t", **bad})
    keys.wipe()


def test_a_damaged_own_snapshot_is_rebuilt_from_the_vault_and_new_devices_join_again(
        tmp_path, folder, cheap_kdf, publish_often):
    """The target damages a's snapshot (its bundles are gone): no new device can join. At a's
    next compaction a rebuilds it from its own vault (a conflict, a deletion by b, an edit b
    made of a's note, a's latest edits) and a device joining then gets everything."""
    a = first_device(_home(tmp_path / "a"), str(folder))
    rid, both, gone, theirs = (a.add(t, f"{t} v0 中文") for t in ("note", "both", "gone", "theirs"))
    device = a.sync().device
    b = joined_device(_home(tmp_path / "b"), str(folder))
    a.edit(both, "a's side")
    b.edit(both, "b's side")
    b.delete(gone)
    b.edit(theirs, "b's edit of a's note")
    part = _compacted_while_read(a, b, rid, folder / "d" / device)
    assert 1 not in _bundles(folder, device)  # the snapshot is the only copy of a's first bundles
    part.write_bytes(part.read_bytes()[:-3])
    with pytest.raises(MemoriesError) as refused:
        joined_device(_home(tmp_path / "before"), str(folder))
    assert refused.value.code == "sync_target_tampered"
    for i in range(K):  # until a's next compaction, which reads its own snapshot back
        a.edit(rid, f"after the damage {i}")
        a.sync()
        b.sync()
    a.sync()
    assert not part.exists() and list((folder / "d" / device).glob("s*"))  # replaced, the damaged one deleted
    c = joined_device(_home(tmp_path / "c"), str(folder))
    assert c.records() == a.records() == b.records()
    assert c.records()[rid][2] == f"after the damage {K - 1}" and gone not in c.records()
    assert c.records()[theirs][2] == "b's edit of a's note"
    assert c.conflicts() == a.conflicts() == b.conflicts() and both in c.conflicts()
    for device_ in (a, b, c):
        device_.close()


def test_three_devices_converge_with_frequent_compaction_and_a_late_join_matches(tmp_path, cheap_kdf,
                                                                                 publish_often):
    """The seeded random run of test_sync_convergence with a snapshot every 2 bundles; then a
    fourth device joins from the snapshots and ends with the same records and conflicts."""
    from tests.integration.test_sync_convergence import OPERATIONS, SEED, _converge

    for name in ("a", "b", "c"):
        _home(tmp_path / name, 2)
    _converge(tmp_path, SEED, OPERATIONS, expect_merges=False)
    folder = tmp_path / "Sync"
    assert list(folder.glob("d/*/s*"))  # snapshots were written
    late = joined_device(_home(tmp_path / "late", 2), str(folder))
    written = sum(d.bundles for d in late.engine.sync_devices(late.vault_id))
    assert len(list(folder.glob("d/*/[0-9]*"))) < written  # and bundles deleted
    engine = Engine.open(tmp_path / "a")
    engine.unlock(late.vault_id, SYNC_PASS)
    a = Device(engine, late.vault_id)
    assert late.records() == a.records() and late.conflicts() == a.conflicts()
    a.close()
    late.close()


def test_a_join_that_meets_a_compaction_deleting_what_it_listed_starts_over_and_gets_everything(
        tmp_path, folder, cheap_kdf, monkeypatch):
    """A compacts and deletes its old bundles (alone, nobody holds them back) just after a new
    device read A's head and before it fetched the bundles that head named: the join lists the
    target again and reads the new snapshot, instead of calling the target damaged."""
    from memories_tui.sync.folder import FolderTarget

    a = first_device(_home(tmp_path / "a"), str(folder))
    rid = a.add("note", "v0 中文")
    device = a.sync().device
    for i in range(K + 1):  # a snapshot, and bundles after it for the joiner to fetch
        a.edit(rid, f"v{i + 1}")
        a.sync()
    before = _bundles(folder, device)
    assert before, "the head must name bundles past the snapshot"
    fetch, lists, raced = FolderTarget.get, [], []

    def get(self, name: str, limit: int | None = None):  # noqa: ANN202 - FolderTarget.get
        if not raced and name == f"d/{device}/{before[0]:010d}":
            raced.append(name)
            for i in range(K):  # a's compaction runs now: its new snapshot covers `before`, then they go
                a.edit(rid, f"while the join reads {i}")
                a.sync()
            assert not set(before) & set(_bundles(folder, device))
        return fetch(self, name, limit)

    listing = FolderTarget.list
    monkeypatch.setattr(FolderTarget, "get", get)
    monkeypatch.setattr(FolderTarget, "list", lambda self, prefix: lists.append(prefix) or listing(self, prefix))
    c = joined_device(_home(tmp_path / "c"), str(folder))
    assert raced and lists.count("d/") >= 2  # it met the deletion and listed again
    assert c.records() == a.records() and c.records()[rid][2] == f"while the join reads {K - 1}"
    a.close()
    c.close()


def test_a_reader_behind_reads_a_damaged_bundle_from_the_snapshot_that_covers_it(
        tmp_path, folder, cheap_kdf, publish_often):
    """b is behind; a's bundles it still needs stay, and a's snapshot covers them. One of them is
    damaged in the target: b reads the snapshot instead of stopping at it. A damaged bundle no
    snapshot covers is still refused."""
    a = first_device(_home(tmp_path / "a"), str(folder))
    rid = a.add("note", "v0")
    a.sync()
    b = joined_device(_home(tmp_path / "b"), str(folder))
    for i in range(10):
        a.edit(rid, f"v{i + 1}")
        last = a.sync()
    own = _bundles(folder, last.device)
    assert own[0] <= 2 and len(own) >= 10  # b holds them back
    damaged = folder / "d" / last.device / f"{own[2]:010d}"
    damaged.write_bytes(damaged.read_bytes()[:-3])
    report = b.sync()
    assert b.records() == a.records() and b.records()[rid][2] == "v10"
    assert report.fetched_objects < len(own)  # from the snapshot on, not every bundle
    for i in range(2):  # bundles past a's snapshot only
        a.edit(rid, f"after {i}")
        a.sync()
    newest = folder / "d" / last.device / f"{max(_bundles(folder, last.device)):010d}"
    assert max(int(p.name[1:11]) for p in (folder / "d" / last.device).glob("s*")) < int(newest.name)
    newest.write_bytes(newest.read_bytes()[:-3])
    _refused(b, "sync_target_tampered")
    a.close()
    b.close()


def test_devices_converge_while_the_target_damages_snapshots_and_a_late_join_matches(tmp_path, cheap_kdf,
                                                                                    publish_often):
    """The seeded random run with a snapshot every 2 bundles while the target truncates snapshot
    parts now and then: each device rebuilds its own at its next compaction, the devices
    converge, and a device joining at the end gets the same records and conflicts."""
    from tests.integration.test_sync_convergence import SEED, _converge

    for name in ("a", "b", "c"):
        _home(tmp_path / name, 2)
    counts, _ = _converge(tmp_path, SEED, 300, damage=True, expect_merges=False)
    assert counts["damage"] >= 5, counts
    late = joined_device(_home(tmp_path / "late", 2), str(tmp_path / "Sync"))
    a = Device(Engine.open(tmp_path / "a"), late.vault_id)
    a.engine.unlock(late.vault_id, SYNC_PASS)
    assert late.records() == a.records() and late.conflicts() == a.conflicts()
    a.close()
    late.close()


def test_a_policy_change_reaches_devices_that_read_the_snapshot_and_a_rebuilt_one(tmp_path, folder, cheap_kdf,
                                                                                publish_often):
    """The device-only flag set on a travels in one bundle; once a's snapshot replaced that
    bundle, a device joining reads the change in the snapshot (it was lost before); so it does
    from a snapshot a rebuilt after the target damaged it."""
    a = first_device(_home(tmp_path / "a"), str(folder))
    rid = a.add("note", "v0")
    a.sync()
    a.engine.set_device_only(a.vault_id, True)
    device = a.sync().device  # bundle 2 carries the change
    for i in range(K + 1):
        a.edit(rid, f"v{i + 1}")
        a.sync()
    assert 2 not in _bundles(folder, device)
    c = joined_device(_home(tmp_path / "c"), str(folder))
    assert c.engine.device_only(c.vault_id) is True
    c.close()
    for part in (folder / "d" / device).glob("s*"):
        part.write_bytes(part.read_bytes()[:-3])
    for i in range(K):
        a.edit(rid, f"after the damage {i}")
        a.sync()
    d = joined_device(_home(tmp_path / "d"), str(folder))
    assert d.engine.device_only(d.vault_id) is True and d.records() == a.records()
    a.close()
    d.close()


def test_a_refused_sync_still_rebuilds_the_own_snapshot_it_finds_damaged_and_changes_nothing_here(
        tmp_path, folder, cheap_kdf, publish_often):
    """a's sync is refused (b's newest bundle is damaged) before it reaches its own compaction;
    a's own snapshot is damaged too. The refused sync puts a rebuilt snapshot and a head naming
    it in the target, logs that upload, and leaves a's vault as it was: two devices refused for
    each other's damage do not wait on each other for good."""
    from memories_tui.sync import snapshots
    from memories_tui.sync.sealing import Head, head_name

    a, b, rid, device = _own_snapshot_damaged(tmp_path, folder)
    b.add("from b", "b")
    device_b = b.sync().device
    newest = max((folder / "d" / device_b).glob("[0-9]*"))
    newest.write_bytes(newest.read_bytes()[:-3])
    vault = a.engine._unlocked(a.vault_id)
    logged = len(vault.egress.read().entries)
    _refused(a, "sync_target_tampered")
    keys = vault.keys
    head = Head.opened(keys.sync_aead("head"), keys.vault_id, device, (folder / head_name(device)).read_bytes())
    snap = snapshots.read(keys.sync_aead("snapshot"), keys.vault_id, head, lambda n: (
        (folder / n).read_bytes() if (folder / n).exists() else None))
    assert snap.upto == head.seq and {record_id for record_id, _rev, _x in snap.revs} == {rid}
    assert len(vault.egress.read().entries) == logged + 1  # the repair's upload is in the egress log
    a.close()
    b.close()


def test_a_note_a_rebuilt_snapshot_carries_without_its_text_names_its_device_until_that_device_syncs(
        tmp_path, folder, cheap_kdf, publish_often):
    """a deletes a note, then a's sync is refused (b's newest bundle is damaged) and rebuilds a's
    damaged snapshot from a vault that no longer holds the note's text: the snapshot carries it
    without text. A device joining then cannot settle that note; the error names a's device and
    says what lets it go on. Once a syncs (its deletion goes up), the new device converges."""
    a, b, rid, device = _own_snapshot_damaged(tmp_path, folder)
    a.delete(rid)
    b.add("from b", "b")
    device_b = b.sync().device
    newest = max((folder / "d" / device_b).glob("[0-9]*"))
    saved = newest.read_bytes()
    newest.write_bytes(saved[:-3])
    with pytest.raises(MemoriesError):
        a.sync()  # refused; a's snapshot is rebuilt without the deleted note's text
    newest.write_bytes(saved)
    c_engine = Engine.open(_home(tmp_path / "c"))
    with pytest.raises(MemoriesError) as caught:
        c_engine.sync_join(str(folder), SYNC_PASS)
    assert caught.value.code == "sync_state_incomplete"
    assert f"Sync again once {device} has synced" in caught.value.message
    a.sync()
    c = Device(c_engine, c_engine.list_vaults()[0].vault_id)
    c.engine.unlock(c.vault_id, SYNC_PASS)
    c.sync()
    b.sync()
    assert c.records() == a.records() == b.records() and rid not in c.records()
    for device_ in (a, b, c):
        device_.close()
