"""A write verifies the manifest once per change from elsewhere, not once per write: a sync
writes twice, and each full pass over the rows costs as much as the vault is large. Another
connection's commit (a row deleted behind the open vault) is still refused on the next write.
"""

from __future__ import annotations

import pytest

from memories_tui.errors import TamperError
from memories_tui.vault import store
from memories_tui.vault.records import NewRecord
from memories_tui.vault.store import UnlockedVault, create_vault_file
from tests.helpers.tamper import sql


def _counting(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = store.manifest

    def counted(conn, keys, counter):  # type: ignore[no-untyped-def]
        calls.append(counter)
        return real(conn, keys, counter)

    monkeypatch.setattr(store, "manifest", counted)
    return calls


def test_back_to_back_writes_compute_the_manifest_once_each(tmp_path, cheap_kdf, monkeypatch):
    path = tmp_path / "v.mvault"
    create_vault_file(path, "t", "pw")
    vault = UnlockedVault(path, "pw")
    try:
        vault.add(NewRecord("memory", "first", "one"))
        calls = _counting(monkeypatch)
        vault.add(NewRecord("memory", "second", "two"))
        vault.add(NewRecord("memory", "third", "three"))
        assert len(calls) == 2  # the new MAC of each write; its own last write needs no re-check
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
