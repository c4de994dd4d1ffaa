"""`memories vault create` as shipped: real Argon2id defaults end to end.

The only CLI test that runs without the cheap-KDF hook (`python -m memories_tui`); each
derivation costs ~1 s and 256 MiB, so it does the minimum: create, then one unlock that
writes a record, and one that reads it back.
"""

from __future__ import annotations

import json
import sqlite3

from tests.helpers.cli import run_cli


def test_vault_create_and_unlock_with_the_shipped_kdf(tmp_path):
    home = tmp_path / "home"
    created = run_cli(home, "vault", "create", "real", "--json", real_kdf=True)
    assert created.code == 0, created.stderr
    vault_id = created.json["vault_id"]
    conn = sqlite3.connect(home / "vaults" / f"{vault_id}.mvault")
    try:
        stored = json.loads(conn.execute("SELECT kdf FROM header").fetchone()[0])
    finally:
        conn.close()
    assert stored == {"alg": "argon2id", "m": 262144, "t": 3, "p": 4}
    added = run_cli(home, "memory", "add", vault_id, "--title", "t", "--text", "real kdf body", "--json",
                    real_kdf=True)
    assert added.code == 0, added.stderr
    read = run_cli(home, "memory", "read", vault_id, added.json["id"], "--json", real_kdf=True)
    assert read.code == 0, read.stderr
    assert read.json["body"] == "real kdf body"
