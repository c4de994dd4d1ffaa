"""The vault file: golden format, tamper detection, wrong passphrase, truncation."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from memories_tui.errors import NotFoundError, TamperError, VaultError, WrongPassphraseError
from memories_tui.vault.records import NewRecord, RecordUpdate
from memories_tui.vault.store import UnlockedVault, create_vault_file, read_header
from tests.helpers.tamper import flip, sql

GOLDEN = Path(__file__).parents[1] / "golden" / "format-v1.mvault"
GOLDEN_PASS = "golden passphrase 金庫"


def _golden_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "golden.mvault"
    shutil.copyfile(GOLDEN, dest)
    return dest


def test_golden_format_v1_still_opens(tmp_path, cheap_kdf):
    """The golden file was made with the test-only cheap KDF, so it opens under that hook."""
    path = _golden_copy(tmp_path)
    header = read_header(path)
    assert (header.vault_id, header.name, header.format) == ("f15b8e550dded3c5", "golden", 1)
    vault = UnlockedVault(path, GOLDEN_PASS)
    try:
        records = {r.title: r for r in vault.read_many()}
        note = records["First note 第一則"]
        assert note.id == "c6a2590d3e212836"
        assert note.revision == 2
        assert note.body == "Hello vault, revision two.\n你好，第二版。"
        assert note.tags == ("t1",) and note.metadata == {"source": "a.md"}
        assert vault.read(note.id, 1).body == "Hello vault.\n你好，保管庫。"
        assert records["Card"].kind == "card"
        assert records["API key"].kind == "credential" and records["API key"].body == "sk-golden-credential"
        assert records["blob.bin"].data == bytes(range(256))
        assert vault.settings() == {"device_only": False}
    finally:
        vault.close()


def _make(tmp_path: Path, cheap: None = None) -> tuple[Path, list[str]]:
    path = tmp_path / "v.mvault"
    create_vault_file(path, "t", "pw")
    vault = UnlockedVault(path, "pw")
    a = vault.add(NewRecord("memory", "alpha", "alpha body"))
    vault.update(RecordUpdate(a.id, body="alpha body v2"))
    b = vault.add(NewRecord("credential", "bank", "PIN 1234"))
    c = vault.add(NewRecord("memory", "gamma", "gamma body"))
    vault.close()
    return path, [a.id, b.id, c.id]


def _open_all(path: Path) -> None:
    vault = UnlockedVault(path, "pw")
    try:
        vault.read_many()
    finally:
        vault.close()


def test_round_trip_and_revisions(tmp_path, cheap_kdf):
    path, (a, b, c) = _make(tmp_path)
    vault = UnlockedVault(path, "pw")
    assert vault.read(a).body == "alpha body v2"
    assert vault.read(a, 1).body == "alpha body"
    assert vault.revisions(a) == [1, 2]
    with pytest.raises(NotFoundError):
        vault.read(a, 3)
    vault.delete(c)
    with pytest.raises(NotFoundError):
        vault.read(c)
    vault.close()


def test_wrong_passphrase_changes_nothing(tmp_path, cheap_kdf):
    path, _ = _make(tmp_path)
    before = path.read_bytes()
    with pytest.raises(WrongPassphraseError):
        UnlockedVault(path, "not it")
    assert path.read_bytes() == before


def test_flipped_record_ciphertext_detected(tmp_path, cheap_kdf):
    path, (a, _, _) = _make(tmp_path)
    flip(path, "records", "ciphertext", "record_id=? AND revision=2", a, offset=5)
    with pytest.raises(TamperError):
        _open_all(path)


def test_flipped_record_ciphertext_with_recomputed_digest_still_detected(tmp_path, cheap_kdf):
    import hashlib

    path, (a, _, _) = _make(tmp_path)
    flip(path, "records", "ciphertext", "record_id=? AND revision=2", a, offset=-1, mask=0x80)
    (nonce, ct), = sql(path, "SELECT nonce, ciphertext FROM records WHERE record_id=? AND revision=2", a)
    sql(path, "UPDATE records SET digest=? WHERE record_id=? AND revision=2", hashlib.sha256(nonce + ct).digest(), a)
    with pytest.raises(TamperError):
        _open_all(path)


def test_flipped_header_detected(tmp_path, cheap_kdf):
    path, _ = _make(tmp_path)
    flip(path, "header", "salt", "1", mask=0xFF)
    with pytest.raises(TamperError, match="header"):
        UnlockedVault(path, "pw")


def test_renamed_vault_header_detected(tmp_path, cheap_kdf):
    path, _ = _make(tmp_path)
    sql(path, "UPDATE header SET name='evil'")
    with pytest.raises(TamperError):
        read_header(path)


def test_flipped_sqlite_file_header_refused(tmp_path, cheap_kdf):
    path, _ = _make(tmp_path)
    raw = bytearray(path.read_bytes())
    raw[0] ^= 0xFF  # "SQLite format 3\0" magic
    path.write_bytes(bytes(raw))
    with pytest.raises(VaultError, match="not a Memories vault"):
        UnlockedVault(path, "pw")


def test_swapped_ciphertexts_detected(tmp_path, cheap_kdf):
    path, (a, _, c) = _make(tmp_path)
    ra, = sql(path, "SELECT nonce, ciphertext, digest FROM records WHERE record_id=? AND revision=1", a)
    rc, = sql(path, "SELECT nonce, ciphertext, digest FROM records WHERE record_id=? AND revision=1", c)
    sql(path, "UPDATE records SET nonce=?, ciphertext=?, digest=? WHERE record_id=? AND revision=1", *rc, a)
    sql(path, "UPDATE records SET nonce=?, ciphertext=?, digest=? WHERE record_id=? AND revision=1", *ra, c)
    with pytest.raises(TamperError):
        _open_all(path)


def test_credential_relabelled_as_memory_detected(tmp_path, cheap_kdf):
    path, (_, b, _) = _make(tmp_path)
    sql(path, "UPDATE records SET kind='memory' WHERE record_id=?", b)
    with pytest.raises(TamperError):
        _open_all(path)


def test_deleted_row_detected(tmp_path, cheap_kdf):
    path, (_, _, c) = _make(tmp_path)
    sql(path, "DELETE FROM records WHERE record_id=?", c)
    with pytest.raises(TamperError, match="manifest"):
        UnlockedVault(path, "pw")


def test_rolled_back_row_detected(tmp_path, cheap_kdf):
    path, (a, _, _) = _make(tmp_path)
    sql(path, "DELETE FROM records WHERE record_id=? AND revision=2", a)  # back to revision 1
    with pytest.raises(TamperError, match="manifest"):
        UnlockedVault(path, "pw")


def test_rolled_back_settings_detected(tmp_path, cheap_kdf):
    path, _ = _make(tmp_path)
    old, = sql(path, "SELECT nonce, ciphertext, digest FROM blobs WHERE name='settings'")
    vault = UnlockedVault(path, "pw")
    vault.set_settings({"device_only": True})
    vault.close()
    sql(path, "UPDATE blobs SET nonce=?, ciphertext=?, digest=? WHERE name='settings'", *old)
    with pytest.raises(TamperError):
        UnlockedVault(path, "pw")


def test_truncated_file_refused(tmp_path, cheap_kdf):
    path, _ = _make(tmp_path)
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 3])
    with pytest.raises(VaultError):
        _open_all(path)


def test_plaintext_sqlite_and_random_files_refused(tmp_path):
    plain = tmp_path / "plain.mvault"
    conn = sqlite3.connect(plain)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(VaultError, match="not a Memories vault"):
        read_header(plain)
    text = tmp_path / "text.mvault"
    text.write_text("just some notes\n")
    with pytest.raises(VaultError, match="not a Memories vault"):
        read_header(text)


def test_newer_format_refused(tmp_path, cheap_kdf):
    path, _ = _make(tmp_path)
    sql(path, "UPDATE header SET format=99")
    with pytest.raises(VaultError, match="newer version"):
        read_header(path)


def test_passwd_rewraps_without_reencrypting(tmp_path, cheap_kdf):
    path, (a, _, _) = _make(tmp_path)
    before = sql(path, "SELECT ciphertext FROM records ORDER BY record_id, revision")
    vault = UnlockedVault(path, "pw")
    vault.change_passphrase("pw", "new pass")
    vault.close()
    with pytest.raises(WrongPassphraseError):
        UnlockedVault(path, "pw")
    vault = UnlockedVault(path, "new pass")
    assert vault.read(a).body == "alpha body v2"
    vault.close()
    assert sql(path, "SELECT ciphertext FROM records ORDER BY record_id, revision") == before


def test_create_refuses_to_overwrite(tmp_path, cheap_kdf):
    path, _ = _make(tmp_path)
    with pytest.raises(VaultError, match="already exists"):
        create_vault_file(path, "again", "pw")


def test_vault_files_are_private_to_the_user(tmp_path, cheap_kdf):
    path, _ = _make(tmp_path)
    assert path.stat().st_mode & 0o077 == 0
