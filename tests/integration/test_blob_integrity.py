"""Every blob read is checked against authenticated data, a process
that stays open notices another process's edits, and a damaged cache is dropped and rebuilt.

Real vault files, real SQLite edits (from another process where the issue says so), real CLI
subprocesses.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memories_tui.engine import Engine
from memories_tui.errors import TamperError
from memories_tui.index.cache import SNAPSHOT_BLOB
from memories_tui.vault.store import UnlockedVault, create_vault_file
from tests.helpers.cli import call_cli
from tests.helpers.tamper import flip, sql
from tests.helpers.vaults import CHILD_PRELUDE


def _vault_file(home: Path) -> Path:
    (path,) = (home / "vaults").glob("*.mvault")
    return path


def _blob_row(path: Path, name: str) -> tuple[bytes, bytes, bytes]:
    (nonce, ciphertext, digest), = sql(path, "SELECT nonce, ciphertext, digest FROM blobs WHERE name = ?", name)
    return nonce, ciphertext, digest




# -- item 1: settings rollback -------------------------------------------------------------

def test_settings_ciphertext_rolled_back_from_an_older_copy_is_refused(tmp_path):
    home = tmp_path / "home"
    vid = call_cli(home, "--json", "vault", "create", "notes").json["vault_id"]
    path = _vault_file(home)
    older = tmp_path / "older.mvault"
    shutil.copyfile(path, older)
    assert call_cli(home, "--json", "vault", "policy", vid, "--device-only", "on").json["device_only"] is True
    nonce, ct, _ = _blob_row(older, "settings")
    # the attack from the issue: nonce + ciphertext only, the (manifest-covered) digest stays
    sql(path, "UPDATE blobs SET nonce = ?, ciphertext = ? WHERE name = 'settings'", nonce, ct)
    result = call_cli(home, "--json", "vault", "policy", vid)
    assert result.code == 1, result.stdout
    assert result.json["error"]["code"] == "vault_tampered"
    assert "device_only" not in result.stdout


def test_settings_rollback_is_seen_by_an_open_vault_too(tmp_path, cheap_kdf):
    path = tmp_path / "v.mvault"
    create_vault_file(path, "t", "pw")
    older = tmp_path / "older.mvault"
    shutil.copyfile(path, older)
    vault = UnlockedVault(path, "pw")
    try:
        vault.set_settings({"device_only": True})
        nonce, ct, _ = _blob_row(older, "settings")
        sql(path, "UPDATE blobs SET nonce = ?, ciphertext = ? WHERE name = 'settings'", nonce, ct)
        with pytest.raises(TamperError):
            vault.settings()
    finally:
        vault.close()


def test_cache_blob_with_a_mismatching_digest_is_not_trusted(tmp_path, cheap_kdf):
    """A cache row whose ciphertext was swapped for another authentic one of the same name
    (an older copy) but whose digest was left alone fails the digest check."""
    path = tmp_path / "v.mvault"
    create_vault_file(path, "t", "pw")
    vault = UnlockedVault(path, "pw")
    try:
        vault.put_cache_blob("emb:aa", b"old vector")
        old = _blob_row(path, "emb:aa")
        vault.put_cache_blob("emb:aa", b"new vector")
        sql(path, "UPDATE blobs SET nonce = ?, ciphertext = ? WHERE name = 'emb:aa'", old[0], old[1])
        assert vault.get_cache_blobs(["emb:aa"]) == {}
        assert any("emb:aa" in note for note in vault.cache_repairs)
    finally:
        vault.close()


def test_rolled_back_lexical_snapshot_never_returns_text_that_is_gone(tmp_path, cheap_kdf):
    """An older, authentic index snapshot swapped in whole (nonce, ciphertext and digest) is only
    trusted where it matches a verified record revision: the removed word is not found."""
    home = tmp_path / "home"
    eng = Engine.open(home)
    vid = eng.create_vault("v", "pw").vault_id
    eng.unlock(vid, "pw")
    rec = eng.add_record(vid, kind="memory", title="diary", body="the zeppelin password is hunter2")
    eng.search(vid, "zeppelin")
    eng.close()  # saves the snapshot that knows "zeppelin"
    path = _vault_file(home)
    old = _blob_row(path, SNAPSHOT_BLOB)
    eng = Engine.open(home)
    eng.unlock(vid, "pw")
    eng.update_record(vid, rec.id, body="nothing to see here")
    eng.search(vid, "nothing")
    eng.close()
    sql(path, "UPDATE blobs SET nonce = ?, ciphertext = ?, digest = ? WHERE name = ?", *old, SNAPSHOT_BLOB)
    eng = Engine.open(home)
    try:
        eng.unlock(vid, "pw")
        assert eng.search(vid, "zeppelin").results == []
        assert [h.record_id for h in eng.search(vid, "nothing").results] == [rec.id]
    finally:
        eng.close()


# -- item 2: a long-running process re-checks ---------------------------------------------

DELETE_NEWEST = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute("DELETE FROM records WHERE record_id = ? AND revision = 2", (sys.argv[2],))
conn.commit()
conn.close()
"""


def test_row_deleted_by_another_process_is_noticed_by_an_open_engine(engine):
    vid = engine.test_vault_id
    rec = engine.add_record(vid, kind="memory", title="t", body="first")
    engine.update_record(vid, rec.id, body="second")
    assert engine.read_record(vid, rec.id).revision == 2
    path = _vault_file(engine.home)
    subprocess.run([sys.executable, "-c", DELETE_NEWEST, str(path), rec.id], check=True)
    with pytest.raises(TamperError, match="manifest"):
        engine.read_record(vid, rec.id)
    with pytest.raises(TamperError):
        engine.revisions(vid, rec.id)
    with pytest.raises(TamperError):
        engine.list_records(vid)
    with pytest.raises(TamperError):
        engine.device_only(vid)


def test_other_processes_honest_writes_still_pass(engine):
    vid = engine.test_vault_id
    rec = engine.add_record(vid, kind="memory", title="t", body="first")
    writer = (CHILD_PRELUDE + "from memories_tui.engine import Engine\n"
              "eng = Engine.open(sys.argv[1]); eng.unlock(sys.argv[2], 'correct horse')\n"
              "eng.update_record(sys.argv[2], sys.argv[3], body='from elsewhere'); eng.close()\n")
    subprocess.run([sys.executable, "-c", writer, str(engine.home), vid, rec.id], check=True)
    assert engine.read_record(vid, rec.id).body == "from elsewhere"
    assert engine.revisions(vid, rec.id) == [1, 2]


# -- item 7: a damaged cache blob is dropped and rebuilt -----------------------------------

def _flip_blob_byte(path: Path, name: str, offset: int = 7) -> None:
    flip(path, "blobs", "ciphertext", "name = ?", name, offset=offset)


@pytest.mark.parametrize("fix_digest", [False, True])
def test_damaged_lexical_snapshot_is_reported_dropped_and_rebuilt(tmp_path, fix_digest):
    import hashlib

    home = tmp_path / "home"
    vid = call_cli(home, "--json", "vault", "create", "notes").json["vault_id"]
    note = tmp_path / "n.md"
    note.write_text("# 茶葉\n\n烏龍茶的香氣 and oolong aroma", encoding="utf-8")
    assert call_cli(home, "--json", "rag", "ingest", vid, str(note)).code == 0
    before = call_cli(home, "--json", "rag", "search", vid, "oolong")
    assert before.code == 0 and before.json["results"]
    path = _vault_file(home)
    _flip_blob_byte(path, SNAPSHOT_BLOB)
    if fix_digest:  # digest recomputed to match: only AEAD can tell now
        nonce, ct, _ = _blob_row(path, SNAPSHOT_BLOB)
        sql(path, "UPDATE blobs SET digest = ? WHERE name = ?", hashlib.sha256(nonce + ct).digest(), SNAPSHOT_BLOB)
    status = call_cli(home, "--json", "rag", "status", vid)
    assert status.code == 0, status.stdout
    assert any(SNAPSHOT_BLOB in note for note in status.json["cache_repairs"])
    after = call_cli(home, "--json", "rag", "search", vid, "oolong")
    assert after.code == 0, after.stdout
    assert after.json["results"] == before.json["results"]
    # the rebuilt snapshot was saved again and verifies
    assert call_cli(home, "--json", "rag", "status", vid).json["cache_repairs"] == []
    # records stay strict
    (rid, revision), *_ = sql(path, "SELECT record_id, revision FROM records ORDER BY revision DESC")
    flip(path, "records", "ciphertext", "record_id = ? AND revision = ?", rid, revision)
    broken = call_cli(home, "--json", "rag", "search", vid, "oolong")
    assert broken.code == 1 and broken.json["error"]["code"] == "vault_tampered"


def test_damaged_embedding_blob_is_dropped_not_fatal(tmp_path, cheap_kdf):
    path = tmp_path / "v.mvault"
    create_vault_file(path, "t", "pw")
    vault = UnlockedVault(path, "pw")
    try:
        vault.put_cache_blobs({"emb:good": b"v1", "emb:bad": b"v2"})
        _flip_blob_byte(path, "emb:bad", offset=0)
        assert vault.get_cache_blobs(["emb:good", "emb:bad"]) == {"emb:good": b"v1"}
        assert any("emb:bad" in note for note in vault.cache_repairs)
        assert sql(path, "SELECT name FROM blobs WHERE name LIKE 'emb:%'") == [("emb:good",)]
    finally:
        vault.close()
