"""A device with nothing of its own to send (it only read since its last sync) commits what a
pull brings as it verifies it, as a join does (sync/stream.py): a device far behind (the other
one imported a whole folder of notes) holds a few megabytes, not everything pulled. A device
with a change of its own still verifies everything before it touches the vault. Here the
threshold is a few hundred bytes, so a pull commits at nearly every bundle."""

from __future__ import annotations

import threading

import pytest

from memories_tui.errors import MemoriesError
from memories_tui.sync import run, stream
from tests.helpers.sync import first_device, joined_device
from tests.integration.test_sync_join_stream import _history, _home, _same, commits  # noqa: F401 - a fixture


def test_a_device_far_behind_commits_as_it_reads_and_ends_where_a_sync_that_holds_everything_ends(
        tmp_path, cheap_kdf, monkeypatch, commits):  # noqa: F811 - the fixture
    folder = tmp_path / "Sync"
    folder.mkdir()
    devices, (held, streamed) = _history(tmp_path, folder, readers=2)  # they join, then the others write
    for device in devices:
        device.sync()
    before = commits["commits"]
    held.sync()
    assert commits["commits"] - before == 1, "a pull below the threshold commits once"
    monkeypatch.setattr(stream, "STREAM_BYTES", 300)
    before = commits["commits"]
    streamed.sync()
    assert commits["commits"] - before > 10, "the pull did not commit as it read"
    _same(held, streamed)
    for device in [*devices, held]:
        device.sync()
    streamed.sync()
    _same(devices[0], streamed)


def _behind(tmp_path, monkeypatch):  # noqa: ANN001, ANN202
    """Devices b and c joined when the vault held one note; c then made a change of its own; a
    then pushed 30 notes in many small bundles. (a, b, c, the folder, a's bundles in order)"""
    monkeypatch.setattr(run, "BUNDLE_BYTES", 3000)
    monkeypatch.setattr(stream, "STREAM_BYTES", 3000)
    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(_home(tmp_path / "a", 0), str(folder))
    seed = a.add("seed", "0")
    a.sync()
    b = joined_device(_home(tmp_path / "b", 0), str(folder))
    c = joined_device(_home(tmp_path / "c", 0), str(folder))
    c.add("mine", "a change of c's own, not sent yet")
    for i in range(30):
        a.add(f"note {i}", f"{i} " + "line of text " * 60)
    a.sync()
    a_id = next(d.device for d in a.engine.sync_devices(a.vault_id) if d.this_device)
    bundles = sorted(p for p in (folder / "d" / a_id).iterdir() if p.name.isdigit())
    return a, b, c, seed, bundles


def test_a_damaged_bundle_keeps_a_verified_prefix_only_on_a_device_with_nothing_to_send(
        tmp_path, cheap_kdf, monkeypatch):
    a, b, c, _seed, bundles = _behind(tmp_path, monkeypatch)
    assert len(bundles) > 6
    damaged = bundles[5]
    kept = damaged.read_bytes()
    damaged.write_bytes(kept[:-3])
    b_before, c_before = b.records(), c.records()
    with pytest.raises(MemoriesError) as caught:
        b.sync()
    assert caught.value.code == "sync_target_tampered"
    assert "had no change of its own to send" in caught.value.message
    got = b.records()
    assert len(b_before) < len(got) < len(a.records()) and all(a.records()[k] == v for k, v in got.items())
    with pytest.raises(MemoriesError) as refused:
        c.sync()  # c has a change to send: it verifies everything first, so it keeps nothing
    assert refused.value.code == "sync_target_tampered" and "kept here" not in refused.value.message
    assert c.records() == c_before
    damaged.write_bytes(kept)
    for device in (b, c, a, b):
        device.sync()
    _same(a, b)
    _same(a, c)
    assert len(a.records()) == 32


def test_an_edit_made_while_a_pull_commits_as_it_reads_is_kept(tmp_path, cheap_kdf, monkeypatch):
    a, b, _c, seed, _bundles = _behind(tmp_path, monkeypatch)
    a.edit(seed, "a's edit of the seed, in a's last bundle")
    a.sync()
    monkeypatch.setattr(stream, "STREAM_BYTES", 1)  # every bundle committed as read, the last one too
    real, calls = run._merge_and_commit, []

    def commit_then_edit(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        out = real(*args, **kwargs)
        calls.append(1)
        if len(calls) == 1:  # the user edits the seed while the pull goes on
            b.edit(seed, "b's edit of the seed, made during the pull")
        return out

    real_once, runs = run._once, []

    def once(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        runs.append(1)
        return real_once(*args, **kwargs)

    monkeypatch.setattr(run, "_merge_and_commit", commit_then_edit)
    monkeypatch.setattr(run, "_once", once)
    b.sync()  # the commit of a's edit meets b's: that sync starts over, now with b's change to send
    assert len(runs) == 2
    monkeypatch.setattr(run, "_merge_and_commit", real)
    a.sync()
    b.sync()
    _same(a, b)
    texts = {a.records()[seed][2]} | {body for _deleted, body in a.conflicts()[seed]}
    assert texts == {"a's edit of the seed, in a's last bundle", "b's edit of the seed, made during the pull"}


def test_ctrl_c_during_a_readers_pull_keeps_what_it_received_and_says_so(tmp_path, cheap_kdf, monkeypatch):
    a, b, _c, _seed, _bundles = _behind(tmp_path, monkeypatch)
    cancel = threading.Event()

    def progress(p) -> None:  # noqa: ANN001
        if p.stage == "pull" and p.done >= 8:
            cancel.set()  # ctrl+c while the bundles are read

    before = len(b.records())
    with pytest.raises(MemoriesError) as stopped:
        b.engine.sync_now(b.vault_id, progress=progress, cancel=cancel)
    assert stopped.value.code == "cancelled"
    assert "received so far are kept here (this device had no change of its own to send)" in stopped.value.message
    assert before < len(b.records()) < len(a.records())
    b.sync()
    _same(a, b)
