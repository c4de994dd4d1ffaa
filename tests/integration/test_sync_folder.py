"""Sync through a plain folder: devices converge, concurrent edits keep a conflict with the same
winner everywhere, an edit beats a concurrent delete, the folder holds only ciphertext, and
joining needs the passphrase."""

from __future__ import annotations

import pytest

from memories_tui.errors import MemoriesError
from tests.helpers.sync import SYNC_PASS, first_device, joined_device, target_bytes
from tests.integration.test_sync_slow_target import dav, slow  # noqa: F401 - the fixtures


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "Sync"
    path.mkdir()
    return path


@pytest.fixture
def devices(tmp_path, folder, cheap_kdf):
    a = first_device(tmp_path / "a", str(folder))
    a.add("first note", "made on a")
    a.sync()
    b = joined_device(tmp_path / "b", str(folder))
    c = joined_device(tmp_path / "c", str(folder))
    yield a, b, c
    for device in (a, b, c):
        device.close()


def _sync_all(*devices, rounds: int = 2) -> None:
    for _ in range(rounds):
        for device in devices:
            device.sync()


def test_three_homes_converge_and_the_index_sees_pulled_notes(devices):
    a, b, c = devices
    assert [t for _, t, _ in b.records().values()] == ["first note"]
    b.add("from b", "written on b 蘋果")
    rid = c.add("from c", "written on c")
    c.edit(rid, "edited on c")
    _sync_all(a, b, c)
    assert a.records() == b.records() == c.records()
    assert len(a.records()) == 3
    hits = a.engine.memory_search(a.vault_id, "蘋果")  # the pulled note is searchable at once
    assert [h.title for h in hits] == ["from b"]


def test_concurrent_edits_keep_a_conflict_with_the_same_winner_on_every_device(devices):
    a, b, c = devices
    rid = next(iter(a.records()))
    a.edit(rid, "edit on a")
    b.edit(rid, "edit on b")
    _sync_all(a, b, c)
    assert a.records() == b.records() == c.records()
    winner = a.records()[rid][2]
    loser = ({"edit on a", "edit on b"} - {winner}).pop()
    for device in (a, b, c):
        assert device.conflicts() == {rid: {(False, loser)}}
    listed = a.engine.conflicts(a.vault_id)[0]
    assert listed.title == "first note" and listed.kept[0].body == loser
    a.delete(rid)  # deleted here, not synced yet: still listed, without a winner to name
    assert [(c.record_id, c.title) for c in a.engine.conflicts(a.vault_id)] == [(rid, None)]


def test_an_edit_beats_a_concurrent_delete_and_the_delete_is_reported(devices):
    a, b, c = devices
    rid = next(iter(a.records()))
    a.delete(rid)
    b.edit(rid, "kept alive on b")
    _sync_all(a, b, c)
    for device in (a, b, c):
        assert device.records()[rid][2] == "kept alive on b"
        assert device.conflicts() == {rid: {(True, None)}}


def test_a_delete_alone_reaches_every_device(devices):
    a, b, c = devices
    rid = next(iter(a.records()))
    b.delete(rid)
    _sync_all(a, b, c)
    assert a.records() == b.records() == c.records() == {}


def test_the_folder_holds_no_plaintext(tmp_path, folder, cheap_kdf):
    canary = "金絲雀-canary 机密备忘录 ÆØÅ"
    a = first_device(tmp_path / "a", str(folder))
    rid = a.add(f"title {canary}", f"body {canary}", tags=("tag-" + canary,))
    a.add("private one", f"secret {canary}", kind="private")
    a.sync()
    b = joined_device(tmp_path / "b", str(folder))
    b.edit(rid, f"edited {canary}")
    b.sync()
    a.sync()
    stored = target_bytes(folder)
    assert b"memories-sync/1" in stored  # the clear join record is there: the search looks in the right place
    for encoding in ("utf-8", "gb18030", "utf-16-le"):
        for needle in (canary, "金絲雀", "机密备忘录"):
            assert needle.encode(encoding) not in stored
    for needle in (rid, "title", "body", "private", "memory", "notes"):
        assert needle.encode() not in stored
    assert a.records() == b.records()
    a.close()
    b.close()


def test_join_needs_the_right_passphrase_and_leaves_nothing_behind_when_wrong(tmp_path, folder, cheap_kdf):
    from memories_tui.engine import Engine

    a = first_device(tmp_path / "a", str(folder))
    a.add("note", "text")
    a.sync()
    engine = Engine.open(tmp_path / "b")
    with pytest.raises(MemoriesError) as caught:
        engine.sync_join(str(folder), "not the passphrase")
    assert caught.value.code == "wrong_passphrase"
    assert engine.list_vaults() == []  # nothing was made
    engine.create_vault("notes", "another vault's passphrase")  # the name is taken here
    with pytest.raises(MemoriesError) as caught:
        engine.sync_join(str(folder), SYNC_PASS)
    assert caught.value.code == "vault_exists"
    joined = engine.sync_join(str(folder), SYNC_PASS, name="notes from a")
    assert joined.sync.pulled_revisions == 1 and joined.name == "notes from a"
    with pytest.raises(MemoriesError) as caught:
        engine.sync_join(str(folder), SYNC_PASS)
    assert caught.value.code == "sync_already_joined"
    engine.close()
    a.close()


def test_a_target_of_another_vault_and_a_missing_folder_are_refused(tmp_path, folder, cheap_kdf):
    from memories_tui.engine import Engine

    a = first_device(tmp_path / "a", str(folder))
    other = Engine.open(tmp_path / "o")
    info = other.create_vault("other", SYNC_PASS)
    other.unlock(info.vault_id, SYNC_PASS)
    with pytest.raises(MemoriesError) as caught:
        other.sync_add(info.vault_id, str(folder), SYNC_PASS)
    assert caught.value.code == "sync_target_other_vault"
    with pytest.raises(MemoriesError) as caught:
        other.sync_add(info.vault_id, str(tmp_path / "absent"), SYNC_PASS)
    assert caught.value.code == "sync_target_missing"
    a.engine.sync_add(a.vault_id, str(folder), SYNC_PASS)  # the same target again: fine
    (tmp_path / "second").mkdir()
    a.engine.sync_add(a.vault_id, str(tmp_path / "second"), SYNC_PASS)  # nothing went anywhere yet: fine
    a.add("pushed")
    a.sync()
    (tmp_path / "third").mkdir()
    with pytest.raises(MemoriesError) as caught:  # its chain positions belong to the second one
        a.engine.sync_add(a.vault_id, str(tmp_path / "third"), SYNC_PASS)
    assert caught.value.code == "sync_target_exists"
    other.close()
    a.close()


def test_device_only_vault_refuses_a_network_target_before_contacting_it(tmp_path, cheap_kdf):
    from memories_tui.engine import Engine

    engine = Engine.open(tmp_path / "a")
    info = engine.create_vault("notes", SYNC_PASS, device_only=True)
    engine.unlock(info.vault_id, SYNC_PASS)
    with pytest.raises(MemoriesError) as caught:
        engine.sync_add(info.vault_id, "s3://bucket/memories", SYNC_PASS, endpoint_url="https://s3.example.com")
    assert caught.value.code == "policy_denied"
    assert "device-only" in caught.value.message
    assert engine.sync_status() == []
    engine.close()


def test_every_push_is_in_the_egress_log(tmp_path, folder, cheap_kdf):
    a = first_device(tmp_path / "a", str(folder))
    a.add("note", "text")
    report = a.sync()
    entries = a.engine.egress_log(a.vault_id).entries
    assert [(e.purpose, e.host, e.objects, e.bytes_sent, e.outcome) for e in entries] == [
        ("sync", str(folder), report.pushed_objects, report.pushed_bytes, "ok")]
    a.sync()  # nothing new: nothing sent, nothing logged
    assert len(a.engine.egress_log(a.vault_id).entries) == 1
    a.close()


def _overlapping_edits_synced(a, b, c):
    """A conflict on every device: a and b edit one record at once, all three sync; returns the
    record's id and the winning text."""
    rid = next(iter(a.records()))
    a.edit(rid, "edit on a")
    b.edit(rid, "edit on b")
    _sync_all(a, b, c)
    return rid, a.records()[rid][2]


def test_resolving_a_conflict_ends_it_on_every_device(devices):
    a, b, c = devices
    rid, winner = _overlapping_edits_synced(a, b, c)
    loser = ({"edit on a", "edit on b"} - {winner}).pop()
    kept = a.engine.conflicts(a.vault_id)[0].kept[0].revision
    c.engine.resolve_conflict(c.vault_id, rid, keep=kept)  # the third device keeps the losing text
    _sync_all(a, b, c)
    for device in (a, b, c):
        assert device.records()[rid][2] == loser
        assert device.conflicts() == {}
    with pytest.raises(MemoriesError) as caught:
        a.engine.resolve_conflict(a.vault_id, rid)
    assert caught.value.code == "no_conflict"


def test_keeping_the_winner_ends_the_conflict_on_every_device(devices):
    """The resolving revision names every leaf as its parent; naming only the winner would leave
    the losing edit (which overlaps it, so no merge ends it) a conflict on every device."""
    a, b, c = devices
    rid, winner = _overlapping_edits_synced(a, b, c)
    c.engine.resolve_conflict(c.vault_id, rid)  # the third device keeps the winner as it is
    _sync_all(a, b, c)
    for device in (a, b, c):
        assert device.records()[rid][2] == winner
        assert device.conflicts() == {}


def test_resolving_a_reported_delete_keeps_the_edit_everywhere(devices):
    a, b, c = devices
    rid = next(iter(a.records()))
    a.delete(rid)
    b.edit(rid, "kept alive on b")
    _sync_all(a, b, c)
    a.engine.resolve_conflict(a.vault_id, rid)
    _sync_all(a, b, c)
    for device in (a, b, c):
        assert device.records()[rid][2] == "kept alive on b"
        assert device.conflicts() == {}


def test_a_passphrase_change_reaches_the_target_for_devices_joining_later(tmp_path, folder, cheap_kdf):
    from memories_tui.engine import Engine

    a = first_device(tmp_path / "a", str(folder))
    a.add("note", "text")
    a.sync()
    a.engine.change_passphrase(a.vault_id, SYNC_PASS, "a brand new passphrase")
    late = Engine.open(tmp_path / "late")
    with pytest.raises(MemoriesError) as caught:
        late.sync_join(str(folder), SYNC_PASS)
    assert caught.value.code == "wrong_passphrase"
    assert late.sync_join(str(folder), "a brand new passphrase").sync.pulled_revisions == 1
    late.close()
    folder.rename(tmp_path / "gone")  # the target cannot be reached at the next change
    with pytest.raises(MemoriesError) as caught:
        a.engine.change_passphrase(a.vault_id, "a brand new passphrase", "third passphrase")
    assert caught.value.code == "sync_join_record_stale"
    a.engine.lock()
    a.engine.unlock(a.vault_id, "third passphrase")  # the vault's own passphrase did change
    (tmp_path / "gone").rename(folder)  # back: a's next sync puts the third passphrase's wrap there
    a.sync()
    later = Engine.open(tmp_path / "later")
    assert later.sync_join(str(folder), "third passphrase").vault_id == a.vault_id
    later.close()
    late = Engine.open(tmp_path / "late")  # joined with the second: takes the third at its next sync
    late.unlock(a.vault_id, "a brand new passphrase")
    assert late.sync_now(a.vault_id).passphrase_adopted
    late.lock()
    late.unlock(a.vault_id, "third passphrase")
    late.close()
    a.close()


def test_a_large_push_goes_up_as_several_chained_bundles_and_joins_whole(tmp_path, folder, cheap_kdf, monkeypatch):
    from memories_tui.sync import run

    monkeypatch.setattr(run, "BUNDLE_BYTES", 4000)  # small bundles; the bound is what is tested, not its size
    a = first_device(tmp_path / "a", str(folder))
    for i in range(12):
        a.add(f"note {i}", f"{i} " + "line of text " * 80)
    report = a.sync()
    bundles = [p for p in folder.rglob("*") if p.is_file() and p.parent.parent.name == "d" and p.name != "head"]
    assert len(bundles) >= 4 and report.pushed_objects == len(bundles) + 1
    b = joined_device(tmp_path / "b", str(folder))
    assert b.records() == a.records()
    edited = next(iter(a.records()))
    a.edit(edited, "changed after the big push")
    a.sync()
    b.sync()
    assert b.records() == a.records()
    a.close()
    b.close()


def test_stray_files_a_sync_tool_leaves_in_the_target_are_not_devices(devices, folder):
    """A folder a person or a sync tool made beside the devices' (with a file called `head`
    in it) is nobody's chain: listing the devices, forgetting one and syncing go on."""
    a, b, _c = devices
    stray = folder / "d" / "Notes (conflicted copy)"
    stray.mkdir()
    (stray / "head").write_bytes(b"not a sealed head")
    listed = a.engine.sync_devices(a.vault_id)
    assert len(listed) == 3 and all(len(d.device) == 16 for d in listed)
    b_id = next(d.device for d in b.engine.sync_devices(b.vault_id) if d.this_device)
    a.engine.sync_forget(a.vault_id, b_id)
    assert b_id not in {d.device for d in a.engine.sync_devices(a.vault_id)}
    a.add("after the stray folder", "still syncing")
    a.sync()


def test_a_process_unlocked_before_a_passphrase_change_does_not_put_the_old_wrap_back(tmp_path, folder, cheap_kdf):
    """The daemon or the TUI holds the vault (its header and wrap are the old passphrase's) while the
    CLI changes the passphrase: its next sync must leave the target's new wrap alone."""
    from memories_tui.engine import Engine

    a = first_device(tmp_path / "a", str(folder))
    a.add("note", "text")
    a.sync()
    cli = Engine.open(tmp_path / "a")  # another process on the same home
    cli.change_passphrase(a.vault_id, SYNC_PASS, "changed from the CLI")
    cli.close()
    a.add("another", "written in the process that unlocked first")
    a.sync()
    later = Engine.open(tmp_path / "later")
    with pytest.raises(MemoriesError) as caught:
        later.sync_join(str(folder), SYNC_PASS)
    assert caught.value.code == "wrong_passphrase"
    assert later.sync_join(str(folder), "changed from the CLI").vault_id == a.vault_id
    later.close()
    a.close()


def test_a_target_refusing_the_join_record_does_not_fail_the_sync_that_puts_it_back(slow, tmp_path, cheap_kdf):  # noqa: F811
    """A sync that went through stays a good sync when the one extra write of a stale join record is
    refused (a WebDAV server answering 403 to that upload only); the next sync puts it there."""
    from memories_tui.engine import Engine

    url, hold, _waiting = slow
    a = first_device(tmp_path / "a", url)
    a.add("note", "text")
    a.sync()
    hold("refuse-key")
    with pytest.raises(MemoriesError) as caught:
        a.engine.change_passphrase(a.vault_id, SYNC_PASS, "changed while the key was refused")
    assert caught.value.code == "sync_join_record_stale"
    a.engine.lock()
    a.engine.unlock(a.vault_id, "changed while the key was refused")
    a.add("second", "pushed while the join record is still refused")
    assert a.sync().pushed_revisions == 1  # went through; the refused join record is not its failure
    assert a.engine.sync_status(a.vault_id)[0].last_error is None
    hold("")
    a.sync()
    later = Engine.open(tmp_path / "later")
    assert later.sync_join(url, "changed while the key was refused").vault_id == a.vault_id
    later.close()
    a.close()


def test_a_process_unlocked_before_two_changes_elsewhere_never_puts_its_passphrase_back(tmp_path, folder, cheap_kdf):
    """The CLI changes the passphrase twice while the daemon or the TUI holds the vault from before
    both, and the second change does not reach the target: that process's sync must not put the
    first passphrase (the one it unlocked with) there as the newest."""
    from memories_tui.engine import Engine

    a = first_device(tmp_path / "a", str(folder))
    a.add("note", "text")
    a.sync()
    cli = Engine.open(tmp_path / "a")  # another process on the same home
    cli.change_passphrase(a.vault_id, SYNC_PASS, "second passphrase")
    folder.rename(tmp_path / "away")
    with pytest.raises(MemoriesError):
        cli.change_passphrase(a.vault_id, "second passphrase", "third passphrase")
    cli.close()
    (tmp_path / "away").rename(folder)
    a.sync()  # the process unlocked with the first passphrase
    later = Engine.open(tmp_path / "later")
    with pytest.raises(MemoriesError) as caught:
        later.sync_join(str(folder), SYNC_PASS)
    assert caught.value.code == "wrong_passphrase"
    assert later.sync_join(str(folder), "second passphrase").vault_id == a.vault_id  # as the target last had it
    later.close()
    a.close()


def test_the_process_that_changed_the_passphrase_mends_the_target_without_a_new_unlock(tmp_path, folder, cheap_kdf):
    """The TUI (or any process holding the vault) changes the passphrase while the target is out of
    reach: its own next sync, with no lock and unlock between, puts the new wrap there."""
    from memories_tui.engine import Engine

    a = first_device(tmp_path / "a", str(folder))
    a.add("note", "text")
    a.sync()
    folder.rename(tmp_path / "away")
    with pytest.raises(MemoriesError) as caught:
        a.engine.change_passphrase(a.vault_id, SYNC_PASS, "changed in the open process")
    assert caught.value.code == "sync_join_record_stale"
    (tmp_path / "away").rename(folder)
    a.sync()  # the same unlock as before the change
    later = Engine.open(tmp_path / "later")
    assert later.sync_join(str(folder), "changed in the open process").vault_id == a.vault_id
    later.close()
    a.close()
