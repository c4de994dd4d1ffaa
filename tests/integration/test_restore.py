"""`vault restore`: verified first, never replaces a vault silently, counts the revisions a
replacement would lose, keeps the replaced vault, survives kill -9."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import pytest

from memories_tui.engine import Engine
from tests.helpers.cli import run_cli
from tests.helpers.faults import file_size_limit, killed_at, obey_permissions, run_cli_as
from tests.helpers.vaults import PASS

BULK_RECORDS, BULK_CHARS = 60, 24_000


def _setup(home: Path, records: int = 3) -> tuple[str, list[str]]:
    engine = Engine.open(home)
    try:
        vault_id = engine.create_vault("notes", PASS).vault_id
        engine.unlock(vault_id, PASS)
        ids = [engine.add_record(vault_id, kind="memory", title=f"n{i}", body=f"body {i} 內容").id
               for i in range(records)]
        engine.add_record(vault_id, kind="credential", title="bank", body="PIN 2468")
        return vault_id, ids
    finally:
        engine.close()


def _backup(home: Path, folder: Path) -> Path:
    result = run_cli(home, "vault", "backup", "notes", str(folder), "--json")
    assert result.code == 0, result.stderr
    return Path(result.json["path"])


def _state(home: Path, vault: str) -> dict[str, tuple[int, str]]:
    engine = Engine.open(home)
    try:
        engine.unlock(vault, PASS)
        return {r.id: (r.revision, r.body) for r in engine.list_records(vault)}
    finally:
        engine.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_restore_round_trip_counts_lost_revisions_and_keeps_the_replaced_vault(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    vault_id, ids = _setup(home)
    backup = _backup(home, tmp_path / "bk")
    before = _state(home, vault_id)
    run_cli(home, "memory", "update", "notes", ids[0], "--text", "changed once")
    run_cli(home, "memory", "update", "notes", ids[0], "--text", "changed twice")
    run_cli(home, "memory", "add", "notes", "--title", "later", "--text", "added after the backup")
    run_cli(home, "memory", "delete", "notes", ids[1])  # its revision 1 is in the backup, not lost
    after = _state(home, vault_id)
    vault_file = home / "vaults" / f"{vault_id}.mvault"

    refused = run_cli(home, "vault", "restore", str(backup), "--json")
    assert refused.code == 1
    assert refused.json["error"]["code"] == "restore_would_replace"
    assert "would lose 3 revision(s)" in refused.json["error"]["message"]  # 2 updates + 1 new record
    assert _state(home, vault_id) == after

    done = run_cli(home, "vault", "restore", str(backup), "--force", "--json")
    assert done.code == 0, done.stderr
    report = done.json
    assert (report["replaced"], report["revisions_lost"], report["vault_id"]) == (True, 3, vault_id)
    assert _state(home, vault_id) == before
    kept = Path(report["kept_copy"])
    assert kept.name.endswith("-before-restore.mvault")
    other = tmp_path / "home2"  # the replaced vault was kept whole: restore it elsewhere and compare
    assert run_cli(other, "vault", "restore", str(kept), "--json").code == 0
    assert _state(other, vault_id) == after
    assert vault_file.stat().st_mode & 0o777 == 0o600


def test_an_up_to_date_backup_is_not_restored_over_the_vault_without_force(tmp_path, cheap_kdf):
    """Nothing would be lost, but replacing a vault is still never silent."""
    home = tmp_path / "home"
    vault_id, _ = _setup(home)
    backup = _backup(home, tmp_path / "bk")
    vault_file = home / "vaults" / f"{vault_id}.mvault"
    before = _digest(vault_file)
    refused = run_cli(home, "vault", "restore", str(backup), "--json")
    assert refused.code == 1 and refused.json["error"]["code"] == "restore_would_replace"
    assert "would lose 0 revision(s)" in refused.json["error"]["message"]
    assert _digest(vault_file) == before
    assert not list((home / "backups").glob("*before-restore*"))  # nothing was replaced, so nothing kept


def test_restore_into_a_fresh_home_and_beside_the_original_with_as(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    vault_id, ids = _setup(home)
    run_cli(home, "memory", "update", "notes", ids[0], "--text", "second revision")
    backup = _backup(home, tmp_path / "bk")
    fresh = tmp_path / "fresh"
    result = run_cli(fresh, "vault", "restore", str(backup), "--json")
    assert result.code == 0, result.stderr
    assert result.json["vault_id"] == vault_id and not result.json["replaced"]
    assert _state(fresh, vault_id) == _state(home, vault_id)

    copy = run_cli(home, "vault", "restore", str(backup), "--as", "notes copy 副本", "--json")
    assert copy.code == 0, copy.stderr
    new_id = copy.json["vault_id"]
    assert new_id != vault_id and copy.json["name"] == "notes copy 副本"
    assert _state(home, new_id) == _state(home, vault_id)  # same record ids, revisions and text
    old_revision = run_cli(home, "memory", "read", new_id, ids[0], "--revision", "1", "--json")
    assert old_revision.json["body"] == "body 0 內容"  # every revision came along
    assert run_cli(home, "memory", "list", new_id, "--kind", "credential", "--json").json["records"][0]["title"] \
        == "bank"
    clash = run_cli(home, "vault", "restore", str(backup), "--as", "notes", "--json")
    assert clash.json["error"]["code"] == "vault_exists"


def test_a_vault_of_the_same_name_but_another_id_is_never_shadowed(tmp_path, cheap_kdf):
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    _setup(home)
    _setup(elsewhere)  # another vault also named "notes"
    backup = _backup(elsewhere, tmp_path / "bk")
    result = run_cli(home, "vault", "restore", str(backup), "--json")
    assert result.code == 1 and result.json["error"]["code"] == "vault_exists"
    assert "--as" in result.json["error"]["message"]


def _names(folder: Path) -> list[str]:
    """Files in a folder, without SQLite's own -wal/-shm beside a vault that was only read."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(("-wal", "-shm")))


def _truncated(src: Path, dest: Path) -> Path:
    dest.write_bytes(src.read_bytes()[: src.stat().st_size // 2])
    return dest


def _tampered(src: Path, dest: Path) -> Path:
    dest.write_bytes(src.read_bytes())
    conn = sqlite3.connect(dest)
    rowid, ct = conn.execute("SELECT rowid, ciphertext FROM records LIMIT 1").fetchone()
    conn.execute("UPDATE records SET ciphertext = ? WHERE rowid = ?", (ct[:-1] + bytes([ct[-1] ^ 1]), rowid))
    conn.commit()
    conn.close()
    return dest


def _foreign(src: Path, dest: Path) -> Path:
    conn = sqlite3.connect(dest)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    conn.executemany("INSERT INTO notes (text) VALUES (?)", [("x" * 300,)] * 50)
    conn.commit()
    conn.close()
    return dest


def _text(src: Path, dest: Path) -> Path:
    dest.write_text("# not a vault\n" * 100)
    return dest


def _relabelled(src: Path, dest: Path) -> Path:
    """A real vault whose manifest no longer matches (a row deleted outside Memories)."""
    dest.write_bytes(src.read_bytes())
    conn = sqlite3.connect(dest)
    conn.execute("DELETE FROM records WHERE kind = 'credential'")
    conn.commit()
    conn.close()
    return dest


@pytest.mark.parametrize(("make", "code"), [(_truncated, "vault_damaged"), (_tampered, "vault_tampered"),
                                            (_foreign, "vault_invalid"), (_text, "vault_invalid"),
                                            (_relabelled, "vault_tampered")])
def test_a_bad_file_is_refused_and_nothing_changes(tmp_path, cheap_kdf, make, code):
    home = tmp_path / "home"
    vault_id, _ = _setup(home)
    backup = _backup(home, tmp_path / "bk")
    bad = make(backup, tmp_path / "bad.mvault")
    vault_file = home / "vaults" / f"{vault_id}.mvault"
    before = (_digest(vault_file), _names(home / "vaults"), _names(tmp_path / "bk"))
    for extra in ([], ["--force"], ["--as", "other"]):
        result = run_cli(home, "vault", "restore", str(bad), *extra, "--json")
        assert result.code == 1, result.stdout
        assert result.json["error"]["code"] == code, result.json
    assert (_digest(vault_file), _names(home / "vaults"), _names(tmp_path / "bk")) == before


def test_wrong_passphrase_and_missing_file(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    _setup(home)
    backup = _backup(home, tmp_path / "bk")
    wrong = run_cli(tmp_path / "h2", "vault", "restore", str(backup), "--json", passphrase="not it")
    assert wrong.json["error"]["code"] == "wrong_passphrase"
    assert not (tmp_path / "h2" / "vaults").exists() or not any((tmp_path / "h2" / "vaults").iterdir())
    missing = run_cli(home, "vault", "restore", str(tmp_path / "nope.mvault"), "--json")
    assert missing.code == 1 and missing.json["error"]["code"] == "not_found"
    folder = run_cli(home, "vault", "restore", str(tmp_path), "--json")
    assert folder.code == 1 and folder.json["error"]["code"] == "vault_invalid"


def test_kill_9_during_restore_leaves_the_old_vault_intact(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    engine = Engine.open(home)
    try:
        vault_id = engine.create_vault("notes", PASS).vault_id
        engine.unlock(vault_id, PASS)
        for i in range(BULK_RECORDS):  # large enough for several copy steps
            engine.add_record(vault_id, kind="memory", title=f"bulk {i}", body=os.urandom(BULK_CHARS // 2).hex())
    finally:
        engine.close()
    backup = _backup(home, tmp_path / "bk")
    run_cli(home, "memory", "add", "notes", "--title", "after", "--text", "only in the live vault")
    live = _state(home, vault_id)
    killed_at("restore-mid-copy", home, tmp_path, "vault", "restore", str(backup), "--force")
    assert _state(home, vault_id) == live  # the half-written copy was rolled back
    assert sorted(p.name for p in (home / "vaults").iterdir() if not p.name.startswith(".")) == \
        [f"{vault_id}.mvault"] + [n for n in (f"{vault_id}.mvault-wal", f"{vault_id}.mvault-shm")
                                  if (home / "vaults" / n).exists()]
    done = run_cli(home, "vault", "restore", str(backup), "--force", "--json")
    assert done.code == 0 and done.json["revisions_lost"] == 1
    assert len(_state(home, vault_id)) == BULK_RECORDS
    assert not [p for p in (home / "vaults").iterdir() if p.name.endswith(".partial")]


def test_a_vault_made_before_these_features_backs_up_restores_logs_and_exports(tmp_path, cheap_kdf):
    """The golden format-1 file has no egress table: it is backed up, restored, gets its first
    egress entry (the table is made then) and exports, with no format change needed."""
    import shutil

    from memories_tui.egress import Outbound, SentChunk

    golden = Path(__file__).parents[1] / "golden" / "format-v1.mvault"
    home = tmp_path / "home"
    engine = Engine.open(home)
    try:
        engine.init_home()
        shutil.copyfile(golden, home / "vaults" / golden.name.replace("format-v1", "f15b8e550dded3c5"))
        engine.unlock("golden", "golden passphrase 金庫")
        before = {r.id: (r.revision, r.body) for r in engine.list_records("golden")}
        backup = engine.backup_vault("golden", tmp_path / "bk")
        assert backup.verified == "full" and backup.records == len(before)
        assert engine.egress_log("golden").entries == []
        finish = engine.egress_hook("golden").opened(Outbound("rerank", "127.0.0.1:9", True,
                                                              (SentChunk("c6a2590d3e212836", 2, "0" * 64),), 10))
        finish("ok", 5, 1)
        assert [e.outcome for e in engine.egress_log("golden").entries] == ["ok"]
        exported = engine.export_vault("golden", tmp_path / "export")
        assert exported.excluded_skipped == 2 and len(exported.files) == len(before) - 2
        engine.lock()
        restored = engine.restore_vault(backup.path, "golden passphrase 金庫", force=True)
        assert restored.revisions_lost == 0 and restored.replaced
        engine.unlock("golden", "golden passphrase 金庫")
        assert {r.id: (r.revision, r.body) for r in engine.list_records("golden")} == before
        # the backup was taken before the entry, but what left the machine is not forgotten
        assert [(e.seq, e.purpose) for e in engine.egress_log("golden").entries] == [(1, "rerank")]
    finally:
        engine.close()


def test_restore_into_an_unwritable_home_or_onto_a_full_disk_changes_nothing(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    engine = Engine.open(home)
    try:
        vault_id = engine.create_vault("notes", PASS).vault_id
        engine.unlock(vault_id, PASS)
        for i in range(BULK_RECORDS):  # ~1.4 MB: more than the file size limit below
            engine.add_record(vault_id, kind="memory", title=f"bulk {i}", body=os.urandom(BULK_CHARS // 2).hex())
    finally:
        engine.close()
    backup = _backup(home, tmp_path / "bk")
    other = tmp_path / "other"
    (other / "vaults").mkdir(parents=True)
    os.chmod(other / "vaults", 0o500)
    try:
        refused = run_cli_as(other, "vault", "restore", str(backup), "--json", preexec=obey_permissions)
    finally:
        os.chmod(other / "vaults", 0o700)
    assert refused.code == 1 and refused.json["error"]["code"] == "folder_unwritable", refused.stdout
    assert list((other / "vaults").iterdir()) == []
    run_cli(home, "memory", "add", "notes", "--title", "after", "--text", "only in the live vault")
    live = _state(home, vault_id)
    full = run_cli_as(home, "vault", "restore", str(backup), "--force", "--json", preexec=file_size_limit(300_000))
    assert full.code == 1 and full.json["error"]["code"] == "disk_full", full.stdout + full.stderr
    assert _state(home, vault_id) == live
    assert not [p for p in (home / "vaults").iterdir() if p.name.endswith(".partial") or "restore" in p.name]
    kept = home / "backups"  # where the replaced vault would have been saved first
    assert not kept.exists() or not [p for p in kept.iterdir() if p.name.endswith(".partial")]
