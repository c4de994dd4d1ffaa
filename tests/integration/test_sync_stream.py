"""A first push of many bundles is committed and uploaded a bundle's worth at a time (the upload
of one overlaps the making of the next): it holds a few bundles at once, not the vault; a push
stopped between two (ctrl+c, a failed upload) keeps what it committed, and the next sync sends
the rest; the egress log shows one entry that grew with the objects sent."""

from __future__ import annotations

import errno
import threading
import tracemalloc

import pytest

from memories_tui.errors import MemoriesError
from memories_tui.sync import run
from memories_tui.sync.folder import FolderTarget
from tests.helpers.sync import first_device, joined_device

RECORDS = 40


@pytest.fixture
def pushing(tmp_path, cheap_kdf, monkeypatch):
    monkeypatch.setattr(run, "BUNDLE_BYTES", 4000)  # ~3 records a bundle: a push of about 14 bundles
    path = tmp_path / "Sync"
    path.mkdir()
    a = first_device(tmp_path / "a", str(path))
    for i in range(RECORDS):
        a.add(f"note {i}", f"{i} " + "line of text " * 80)
    yield a, path
    a.close()


def _bundles(path):
    return sorted(p for p in path.glob("d/*/*") if p.name.isdigit())


def test_ctrl_c_during_a_long_first_push_sends_what_was_committed_and_the_next_sync_the_rest(
        tmp_path, pushing, monkeypatch):
    a, path = pushing
    cancel = threading.Event()
    real = FolderTarget.put

    def put(self, name, data):
        if name.rsplit("/", 1)[-1].isdigit():
            cancel.set()  # ctrl+c as the first bundle leaves
        real(self, name, data)

    monkeypatch.setattr(FolderTarget, "put", put)
    first = a.engine.sync_now(a.vault_id, cancel=cancel)
    monkeypatch.setattr(FolderTarget, "put", real)
    assert 0 < first.pushed_revisions < RECORDS
    assert first.left == RECORDS - first.pushed_revisions  # said, not reported as a whole sync
    status = a.engine.sync_status(a.vault_id, count_records=False)[0]  # as `sync status` without the daemon
    assert status.pending == first.left, status
    assert first.pushed_objects == len(_bundles(path)) + 1  # the bundles committed, then the head
    entries = a.engine.egress_log(a.vault_id).entries
    assert [(e.objects, e.bytes_sent, e.outcome) for e in entries] == [(first.pushed_objects, first.pushed_bytes, "ok")]
    b = joined_device(tmp_path / "b", str(path))
    assert len(b.records()) == first.pushed_revisions and set(b.records()) < set(a.records())
    rest = a.sync()
    assert rest.pushed_revisions == RECORDS - first.pushed_revisions and rest.left == 0
    assert a.engine.sync_status(a.vault_id, count_records=False)[0].pending == 0
    b.sync()
    assert b.records() == a.records()
    b.close()


def test_a_failed_upload_mid_push_is_the_error_and_the_next_sync_sends_everything(tmp_path, pushing, monkeypatch):
    a, path = pushing
    real = FolderTarget.put
    seen: list[str] = []

    def put(self, name, data):
        if name.rsplit("/", 1)[-1].isdigit():
            seen.append(name)
            if len(seen) == 3:
                raise self._failed(OSError(errno.ENOSPC, "No space left on device"))
        real(self, name, data)

    monkeypatch.setattr(FolderTarget, "put", put)
    with pytest.raises(MemoriesError) as caught:
        a.sync()
    assert caught.value.code == "sync_target_full"
    assert not list(path.glob("d/*/head")), "a head was written after a bundle failed to upload"
    assert len(_bundles(path)) < 14, "the push went on making and sending bundles after one failed"
    monkeypatch.setattr(FolderTarget, "put", real)
    again = a.sync()
    assert again.resent_bundles >= 1  # what the failed sync committed goes now, and the report says so
    b = joined_device(tmp_path / "b", str(path))
    assert b.records() == a.records() and len(b.records()) == RECORDS
    b.close()


def test_a_first_push_holds_a_few_bundles_not_the_vault(tmp_path, cheap_kdf, monkeypatch):
    monkeypatch.setattr(run, "BUNDLE_BYTES", 64_000)
    path = tmp_path / "Sync"
    path.mkdir()
    a = first_device(tmp_path / "a", str(path))
    text = "a line of a long note, 長い記事の一行. " * 1500  # ~60 KB of content a record
    for i in range(40):
        a.add(f"note {i}", f"{i} {text}")
    content = 40 * len(text.encode())
    tracemalloc.start()
    try:
        report = a.sync()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    a.close()
    assert report.pushed_revisions == 40 and report.pushed_bytes > content
    assert peak < content / 2, f"a push of {content} bytes of content held {peak} bytes at its peak"
