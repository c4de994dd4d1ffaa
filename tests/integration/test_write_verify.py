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
        vault.add(NewRecord("memory", "second", "two"))
        assert vault.rows_written == 1
        vault.add_many([NewRecord("memory", "third", "three"), NewRecord("memory", "fourth", "four")])
        assert vault.rows_written == 2
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
