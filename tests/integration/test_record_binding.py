"""Each record ciphertext is bound to its row by AEAD associated data.

The keyed manifest alone would already notice a moved ciphertext, so these tests re-MAC the
manifest with the vault's own key after tampering (an attacker cannot, but it isolates the
second line of defence): the move must then still fail AES-GCM authentication, not just some
later plausibility check. The digest column is moved along with the ciphertext.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from memories_tui.errors import TamperError
from memories_tui.vault import integrity
from memories_tui.vault.records import NewRecord, RecordUpdate
from memories_tui.vault.store import UnlockedVault, create_vault_file
from tests.helpers.tamper import sql

PW = "pw"
AEAD_FAILED = "failed authentication"  # crypto.open_sealed's refusal


@pytest.fixture
def made(tmp_path: Path, cheap_kdf) -> Iterator[tuple[Path, UnlockedVault, dict[str, str]]]:
    path = tmp_path / "v.mvault"
    create_vault_file(path, "t", PW)
    vault = UnlockedVault(path, PW)
    alpha = vault.add(NewRecord("memory", "alpha", "alpha revision one"))
    vault.update(RecordUpdate(alpha.id, body="alpha revision two"))
    beta = vault.add(NewRecord("memory", "beta", "beta body"))
    private = vault.add(NewRecord("private", "diary", "private body"))
    ids = {"alpha": alpha.id, "beta": beta.id, "private": private.id}
    yield path, vault, ids
    vault.close()


def _tamper_and_remac(path: Path, vault: UnlockedVault, *statements: tuple[str, tuple[object, ...]]) -> None:
    conn = sqlite3.connect(path)
    try:
        for statement, params in statements:
            conn.execute(statement, params)
        counter = conn.execute("SELECT change_counter FROM state").fetchone()[0]
        conn.execute("UPDATE state SET manifest = ?", (integrity.manifest(conn, vault.keys, counter),))
        conn.commit()
    finally:
        conn.close()


def _row(path: Path, record_id: str, revision: int) -> tuple[bytes, bytes, bytes]:
    (nonce, ciphertext, digest), = sql(path, "SELECT nonce, ciphertext, digest FROM records "
                                             "WHERE record_id = ? AND revision = ?", record_id, revision)
    return nonce, ciphertext, digest


def _reopened(path: Path) -> UnlockedVault:
    """Opening verifies the manifest: it passes, so only the AEAD stands between us and the data."""
    return UnlockedVault(path, PW)


def test_untampered_rows_read_back(made):
    path, _, ids = made
    vault = _reopened(path)
    try:
        assert vault.read(ids["alpha"], 1).body == "alpha revision one"
        assert vault.read(ids["alpha"], 2).body == "alpha revision two"
    finally:
        vault.close()


def test_ciphertext_moved_to_another_revision_fails_aead(made):
    path, vault, ids = made
    old = _row(path, ids["alpha"], 1)
    _tamper_and_remac(path, vault, ("UPDATE records SET nonce = ?, ciphertext = ?, digest = ? "
                                    "WHERE record_id = ? AND revision = 2", (*old, ids["alpha"])))
    reopened = _reopened(path)
    try:
        with pytest.raises(TamperError, match=AEAD_FAILED):
            reopened.read(ids["alpha"], 2)
    finally:
        reopened.close()


def test_ciphertext_moved_to_another_record_fails_aead(made):
    path, vault, ids = made
    beta = _row(path, ids["beta"], 1)
    _tamper_and_remac(path, vault, ("UPDATE records SET nonce = ?, ciphertext = ?, digest = ? "
                                    "WHERE record_id = ? AND revision = 1", (*beta, ids["alpha"])))
    reopened = _reopened(path)
    try:
        with pytest.raises(TamperError, match=AEAD_FAILED):
            reopened.read(ids["alpha"], 1)
    finally:
        reopened.close()


@pytest.mark.parametrize("who,new_kind", [
    ("beta", "card"),         # same sensitivity (general): only the kind in the AD differs
    ("private", "memory"),    # excluded relabelled as general: kind and sensitivity differ
    ("private", "credential"),  # excluded to excluded
])
def test_kind_relabelled_on_disk_fails_aead(made, who, new_kind):
    path, vault, ids = made
    _tamper_and_remac(path, vault, ("UPDATE records SET kind = ? WHERE record_id = ?", (new_kind, ids[who])))
    reopened = _reopened(path)
    try:
        with pytest.raises(TamperError, match=AEAD_FAILED):
            reopened.read(ids[who])
    finally:
        reopened.close()
