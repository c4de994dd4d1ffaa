"""A record deleted here after an edit this device never synced, then brought back by another
device's edit, must not come back under a revision number the vault already gave it: caches
(the engine's records, the index) take an unchanged number for unchanged content. Found by
scripts/sync_soak.py --forget (two runs in a hundred showed one device an edit the vault no
longer held)."""

from __future__ import annotations

from tests.helpers.sync import first_device, joined_device


def test_a_record_brought_back_after_an_unsynced_edit_and_a_delete_gets_a_fresh_revision(tmp_path, cheap_kdf):
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    rid = a.add("note", "v0")
    a.sync()
    b = joined_device(tmp_path / "b", str(folder))
    b.edit(rid, "b's edit")
    b.sync()
    a.edit(rid, "a's edit, never synced")  # revision 2 here
    assert a.records()[rid][2] == "a's edit, never synced"  # what a's engine now holds as revision 2
    a.delete(rid)
    a.sync()  # b's edit beats a's deletion: the record comes back
    assert a.records()[rid][2] == "b's edit"
    assert a.engine.read_record(a.vault_id, rid).revision > 2
    assert b.records() == a.records()
    a.close()
    b.close()
