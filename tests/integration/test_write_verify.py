"""A write verifies the manifest once per change from elsewhere, not once per write, and its new
manifest adjusts the row sum by the rows it changed: no full pass over the rows, which costs as
much as the vault is large. Another connection's commit (a row deleted behind the open vault) is
still refused on the next write.
"""

from __future__ import annotations

import pytest

from memories_tui.errors import TamperError
from memories_tui.vault import manifest
from memories_tui.vault.records import NewRecord
from memories_tui.vault.store import UnlockedVault, create_vault_file
from tests.helpers.tamper import sql


def _counting(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = manifest.row_sum

    def counted(conn, keys):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(conn, keys)

    monkeypatch.setattr(manifest, "row_sum", counted)
    return calls


def test_back_to_back_writes_pass_over_no_rows_but_their_own(tmp_path, cheap_kdf, monkeypatch):
    path = tmp_path / "v.mvault"
    create_vault_file(path, "t", "pw")
    vault = UnlockedVault(path, "pw")
    try:
        vault.add(NewRecord("memory", "first", "one"))
        calls = _counting(monkeypatch)
        before = vault.rows_written
        vault.add(NewRecord("memory", "second", "two"))
        assert vault.rows_written - before == 1
        vault.add_many([NewRecord("memory", "third", "three"), NewRecord("memory", "fourth", "four")])
        assert vault.rows_written - before == 3
        assert calls == []  # its own last write needs no re-check, and the new MAC no full pass
        vault.close()
        vault = UnlockedVault(path, "pw")  # the manifest written incrementally verifies from scratch
        assert calls == [1]
        assert len(vault.read_many()) == 4
    finally:
        vault.close()


def test_a_row_deleted_by_another_connection_is_refused_on_the_next_write(tmp_path, cheap_kdf):
    path = tmp_path / "v.mvault"
    create_vault_file(path, "t", "pw")
    vault = UnlockedVault(path, "pw")
    try:
        kept = vault.add(NewRecord("memory", "kept", "one"))
        vault.add(NewRecord("memory", "gone", "two"))
        sql(path, "DELETE FROM records WHERE record_id != ?", kept.id)
        with pytest.raises(TamperError):
            vault.add(NewRecord("memory", "third", "three"))
    finally:
        vault.close()


def test_a_form_1_manifest_still_verifies_and_the_next_write_makes_it_form_2(tmp_path, cheap_kdf):
    from tests.integration.test_vault import GOLDEN_PASS, _golden_copy

    path = _golden_copy(tmp_path)
    assert len(sql(path, "SELECT manifest FROM state")[0][0]) == 32  # form 1: a MAC over every row in order
    vault = UnlockedVault(path, GOLDEN_PASS)
    count = len(vault.read_many())
    vault.add(NewRecord("memory", "new", "after the upgrade"))
    vault.close()
    assert sql(path, "SELECT manifest FROM state")[0][0][:1] == manifest.FORM2
    vault = UnlockedVault(path, GOLDEN_PASS)
    try:
        assert len(vault.read_many()) == count + 1
    finally:
        vault.close()
    sql(path, "DELETE FROM records WHERE rowid = (SELECT MIN(rowid) FROM records)")
    with pytest.raises(TamperError):
        UnlockedVault(path, GOLDEN_PASS)
