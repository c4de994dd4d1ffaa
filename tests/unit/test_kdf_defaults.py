"""The shipped Argon2id parameters, with no test override.

Every other test makes vaults with cheap parameters through ``crypto._TEST_KDF_OVERRIDE``;
this one creates and opens a vault with the real defaults (m = 256 MiB, t = 3, p = 4: about
one second per derivation) and reads the parameters back from the raw header row.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from memories_tui.errors import VaultError
from memories_tui.vault import crypto
from memories_tui.vault.records import NewRecord
from memories_tui.vault.store import UnlockedVault, create_vault_file, read_header

# Hand-written from docs/security.md, not read from the code under test.
SHIPPED = {"alg": "argon2id", "m": 256 * 1024, "t": 3, "p": 4}


def test_real_defaults_create_and_open_a_vault(tmp_path):
    assert crypto._TEST_KDF_OVERRIDE is None  # nothing in this test made parameters cheap
    path = tmp_path / "real.mvault"
    create_vault_file(path, "real", "a real passphrase")
    conn = sqlite3.connect(path)
    try:
        stored = json.loads(conn.execute("SELECT kdf FROM header").fetchone()[0])
    finally:
        conn.close()
    assert stored == SHIPPED
    header = read_header(path)
    assert (header.kdf.memory_kib, header.kdf.iterations, header.kdf.lanes) == (256 * 1024, 3, 4)
    vault = UnlockedVault(path, "a real passphrase")  # derives again with the stored parameters
    try:
        record = vault.add(NewRecord("memory", "title", "body"))
        assert vault.read(record.id).body == "body"
    finally:
        vault.close()


def test_creation_params_are_the_shipped_ones():
    assert crypto._TEST_KDF_OVERRIDE is None
    assert crypto.creation_params().to_dict() == SHIPPED


@pytest.mark.parametrize("memory_kib,iterations", [
    (64 * 1024 - 1, 3),   # just below the memory floor
    (256 * 1024, 2),      # just below the iteration floor
    (256 * 1024, 1),
    (8, 1),               # the test override's parameters are never creatable
])
def test_floor_refuses_weak_creation_parameters(memory_kib, iterations):
    with pytest.raises(VaultError, match="too weak"):
        crypto.KdfParams(memory_kib=memory_kib, iterations=iterations, lanes=4).check_creatable()


def test_floor_accepts_exactly_the_minimum():
    crypto.KdfParams(memory_kib=64 * 1024, iterations=3, lanes=1).check_creatable()
