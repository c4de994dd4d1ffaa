"""A sync after one edit reads and writes that record's sync state only, whatever the vault's
size: each record's entry is a row of its own, and the manifest is adjusted by the rows a write
changed. Counted in rows (never in time), at two vault sizes. The rows are covered by the
manifest like records: one deleted or rolled back outside Memories is refused."""

from __future__ import annotations

import shutil

import pytest

from memories_tui.errors import TamperError
from memories_tui.sync.run import load_state
from memories_tui.vault.records import NewRecord, RecordUpdate
from memories_tui.vault.store import UnlockedVault
from tests.helpers.sync import SYNC_PASS, first_device, joined_device
from tests.helpers.tamper import sql


def _two_devices(tmp_path, records: int):  # noqa: ANN202 - (a, b, ids)
    folder = tmp_path / f"Sync{records}"
    folder.mkdir()
    a = first_device(tmp_path / f"a{records}", str(folder))
    ids = [r.id for r in a.engine.add_records(a.vault_id, [NewRecord("memory", f"note {i}", f"body {i}")
                                                            for i in range(records)])]
    a.sync()
    b = joined_device(tmp_path / f"b{records}", str(folder))
    return a, b, ids


def _one_edit(a, b, record_id: str) -> tuple[int, int, int]:
    """(rows a's sync wrote, rows b's sync wrote, sync entries b's state read) for one edit on a."""
    va, vb = a.engine._vault(a.vault_id), b.engine._vault(b.vault_id)
    a.edit(record_id, "edited once")
    before_a, before_b = va.rows_written, vb.rows_written
    assert a.sync().pushed_revisions == 1
    assert b.sync().pulled_revisions == 1
    return va.rows_written - before_a, vb.rows_written - before_b, len(load_state(vb).docs)


def test_one_edit_writes_the_same_rows_at_any_vault_size(tmp_path, cheap_kdf):
    costs = []
    for records in (20, 300):
        a, b, ids = _two_devices(tmp_path, records)
        try:
            assert len(load_state(b.engine._vault(b.vault_id)).every_doc()) == records
            costs.append(_one_edit(a, b, ids[records // 2]))
            assert b.records()[ids[records // 2]][2] == "edited once"
        finally:
            a.close()
            b.close()
    small, large = costs
    assert small == large
    # a: its record's entry replaced (a delete and an insert), its bundle into the outbox and out once
    # uploaded; b: the new revision, and the entry replaced
    assert small[:2] == (4, 3)
    assert small[2] == 0  # nothing is read before a sync asks for a record's entry


def test_a_sync_row_deleted_or_rolled_back_outside_memories_is_refused(tmp_path, cheap_kdf):
    a, b, ids = _two_devices(tmp_path, 5)
    path = b.engine._vault(b.vault_id).path
    a.edit(ids[0], "second")
    a.sync()
    old = sql(path, "SELECT local, nonce, ciphertext, digest FROM sync_docs WHERE record_id = ?", ids[0])[0]
    b.sync()
    a.close()
    b.close()
    copy = path.with_suffix(".copy")
    shutil.copyfile(path, copy)
    sql(path, "UPDATE sync_docs SET local = ?, nonce = ?, ciphertext = ?, digest = ? WHERE record_id = ?", *old, ids[0])
    with pytest.raises(TamperError):
        UnlockedVault(path, SYNC_PASS)
    sql(copy, "DELETE FROM sync_docs WHERE record_id = ?", ids[1])
    with pytest.raises(TamperError):
        UnlockedVault(copy, SYNC_PASS)


def test_a_state_of_the_first_form_moves_to_rows_and_syncs_on(tmp_path, cheap_kdf):
    """A vault whose sync state is still one blob with every record's entry in it and no rows
    (as the first form wrote it), made here through the vault's own write transaction."""
    import json

    from memories_tui.vault.integrity import put_blob

    a, b, ids = _two_devices(tmp_path, 6)
    vb = b.engine._vault(b.vault_id)
    state = load_state(vb)
    value = json.loads(state.to_bytes())
    docs = state.every_doc()
    value.update(v=1, docs={rid: {"revs": d.stored_revs(), "cur": d.cur, "local": d.local, "high": d.high}
                            for rid, d in docs.items()}, bases={rid: d.bases for rid, d in docs.items() if d.bases})
    with vb._write() as conn:
        conn.execute("DELETE FROM sync_docs")
        put_blob(conn, vb.keys, "sync", json.dumps(value).encode())
    assert load_state(vb).legacy
    try:
        a.edit(ids[2], "after the move")
        a.sync()
        b.edit(ids[3], "from b")
        report = b.sync()
        assert (report.pulled_revisions, report.pushed_revisions) == (1, 1)
        assert not load_state(vb).legacy
        assert len(load_state(vb).every_doc()) == 6
        a.sync()
        assert a.records() == b.records()
        assert b.records()[ids[2]][2] == "after the move"
    finally:
        a.close()
        b.close()
    UnlockedVault(vb.path, SYNC_PASS).close()  # the rows written by the move verify from scratch


def test_an_edit_by_another_process_is_still_found(tmp_path, cheap_kdf):
    """A sync compares only the records this vault object wrote since the last sync, unless another
    connection committed meanwhile (here a second vault object on the same file, as the CLI is
    beside a running TUI): then it compares every record."""
    a, b, ids = _two_devices(tmp_path, 8)
    try:
        a.edit(ids[1], "here")
        assert a.sync().pushed_revisions == 1
        other = UnlockedVault(a.engine._vault(a.vault_id).path, SYNC_PASS)
        try:
            other.update(RecordUpdate(ids[5], body="from another process"))
        finally:
            other.close()
        assert a.sync().pushed_revisions == 1
        b.sync()
        assert b.records()[ids[5]][2] == "from another process"
    finally:
        a.close()
        b.close()


def test_a_failed_sync_forgets_nothing_it_was_to_push(tmp_path, cheap_kdf, monkeypatch):
    """The first sync after opening compares every record; if it fails before its commit, the
    next one compares every record again rather than only what was written since."""
    from memories_tui.engine import Engine
    from memories_tui.errors import SyncError

    a, b, ids = _two_devices(tmp_path, 8)
    home = a.engine.home
    a.close()
    engine = Engine.open(home)
    engine.unlock(a.vault_id, SYNC_PASS)
    try:
        engine.update_record(a.vault_id, ids[2], body="edited before a failed sync")
        vault = engine._vault(a.vault_id)
        real = vault.apply_synced

        def fail_once(change):  # noqa: ANN001, ANN202 - the disk refuses the commit once
            monkeypatch.setattr(vault, "apply_synced", real)
            raise SyncError("the disk is full", code="sync_test_fault")

        monkeypatch.setattr(vault, "apply_synced", fail_once)
        with pytest.raises(SyncError):
            engine.sync_now(a.vault_id)
        assert engine.sync_now(a.vault_id).pushed_revisions == 1
        b.sync()
        assert b.records()[ids[2]][2] == "edited before a failed sync"
    finally:
        engine.close()
        b.close()
