"""Concurrent edits that do not overlap merge three-way with their common ancestor on sync: two
devices edit different lines of one Markdown body (or one the title, the other the body) and every
device ends with both edits and no conflict; tags changed on both sides merge as sets; overlapping
edits stay a conflict; two devices that merge the same pair on their own write the very same merged
revision."""

from __future__ import annotations

import shutil

import pytest

from tests.helpers.sync import first_device, joined_device

BODY = "# Sourdough\n\n- flour 500 g\n- water 350 g\n- salt 10 g\n\nBake at 250 °C.\n"


@pytest.fixture
def devices(tmp_path, cheap_kdf):
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    rid = a.add("bread", BODY, tags=("baking",))
    a.sync()
    b = joined_device(tmp_path / "b", str(folder))
    c = joined_device(tmp_path / "c", str(folder))
    yield folder, rid, a, b, c
    for device in (a, b, c):
        device.close()


def _sync_all(*devices) -> None:
    for _ in range(2):
        for device in devices:
            device.sync()


def test_edits_of_different_lines_merge_on_every_device_without_a_conflict(devices):
    _folder, rid, a, b, c = devices
    a.edit(rid, BODY.replace("flour 500 g", "flour 550 g"))
    b.edit(rid, BODY.replace("Bake at 250 °C.", "Bake at 230 °C, lid on."))
    _sync_all(a, b, c)
    merged = BODY.replace("flour 500 g", "flour 550 g").replace("Bake at 250 °C.", "Bake at 230 °C, lid on.")
    for device in (a, b, c):
        assert device.records()[rid] == ("memory", "bread", merged)
        assert device.conflicts() == {}


def test_a_title_changed_on_one_side_merges_with_a_body_changed_on_the_other(devices):
    _folder, rid, a, b, c = devices
    a.engine.update_record(a.vault_id, rid, title="country bread", tags=("baking", "weekly"))
    b.edit(rid, BODY + "\nFeed the starter the night before.\n")
    _sync_all(a, b, c)
    for device in (a, b, c):
        record = device.engine.read_record(device.vault_id, rid)
        assert (record.title, record.body, record.tags) == (
            "country bread", BODY + "\nFeed the starter the night before.\n", ("baking", "weekly"))
        assert device.conflicts() == {}


def test_tags_changed_on_two_devices_merge_as_sets(devices):
    """One device tags the note "weekly" and drops "baking", the other tags it "rye" and edits a
    line: every device ends with the edit and the tags "weekly" and "rye", no conflict."""
    _folder, rid, a, b, c = devices
    a.engine.update_record(a.vault_id, rid, tags=("weekly",))
    b.engine.update_record(b.vault_id, rid, body=BODY.replace("250", "240"), tags=("baking", "rye"))
    _sync_all(a, b, c)
    for device in (a, b, c):
        record = device.engine.read_record(device.vault_id, rid)
        assert (record.body, sorted(record.tags)) == (BODY.replace("250", "240"), ["rye", "weekly"])
        assert device.conflicts() == {}


def test_overlapping_edits_and_two_new_titles_stay_a_conflict(devices):
    _folder, rid, a, b, c = devices
    a.edit(rid, BODY.replace("water 350 g", "water 360 g"))
    b.edit(rid, BODY.replace("water 350 g", "water 340 g"))
    _sync_all(a, b, c)
    assert a.records() == b.records() == c.records()
    assert all(len(device.conflicts()[rid]) == 1 for device in (a, b, c))
    a.engine.resolve_conflict(a.vault_id, rid)
    _sync_all(a, b, c)
    a.engine.update_record(a.vault_id, rid, title="title on a")
    b.engine.update_record(b.vault_id, rid, title="title on b")
    _sync_all(a, b, c)
    assert all(set(device.conflicts()) == {rid} for device in (a, b, c))


def test_two_devices_merging_the_same_pair_on_their_own_write_one_revision(devices):
    folder, rid, a, b, c = devices
    a_dir, b_dir = (folder / "d" / next(d.device for d in x.engine.sync_devices(x.vault_id) if d.this_device)
                    for x in (a, b))  # a device that has only read has a head there too (compaction.py)
    b.edit(rid, BODY.replace("salt 10 g", "salt 12 g"))
    b.sync()
    hidden = b_dir.with_name("." + b_dir.name)  # a sync tool has not delivered b's bundle to a yet
    b_dir.rename(hidden)
    a.edit(rid, BODY.replace("# Sourdough", "# Sourdough (weekday)"))
    a.sync()
    hidden.rename(b_dir)
    shutil.copytree(a_dir, folder / "a-before-merge")
    first_a = a.sync()  # merges the pair and sends the merged revision ...
    a_dir.rename(a_dir.with_name(".a-after-merge"))
    (folder / "a-before-merge").rename(a_dir)
    first_b = b.sync()  # ... which has not reached b yet: b merges the same pair on its own
    shutil.rmtree(a_dir)
    a_dir.with_name(".a-after-merge").rename(a_dir)
    assert first_a.pushed_revisions == 1 and first_b.pushed_revisions == 1
    again_a, again_b, again_c = a.sync(), b.sync(), c.sync()
    assert again_a.pushed_revisions == again_b.pushed_revisions == again_c.pushed_revisions == 0
    assert again_a.pulled_revisions == 0 and again_b.pulled_revisions == 0  # the same revision id: known already
    merged = BODY.replace("salt 10 g", "salt 12 g").replace("# Sourdough", "# Sourdough (weekday)")
    for device in (a, b, c):
        assert device.records()[rid][2] == merged
        assert device.conflicts() == {}
