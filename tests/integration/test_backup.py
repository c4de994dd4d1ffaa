"""`vault backup`: consistent copies of a vault another process is writing, verified, named,
rotated; and every fault (full disk, unwritable folder, a path that is a file, kill -9 mid-copy)
a clear error with nothing left under a final name."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memories_tui.engine import Engine
from memories_tui.errors import TamperError, VaultError
from memories_tui.vault.backups import backups_of
from memories_tui.vault.header import read_header
from memories_tui.vault.keys import open_keys
from memories_tui.vault.verify import check_vault_file
from tests.helpers.cli import cli_env, run_cli
from tests.helpers.faults import file_size_limit, killed_at, obey_permissions, run_cli_as
from tests.helpers.vaults import CHILD_PRELUDE, PASS

BULK_RECORDS, BULK_CHARS = 60, 24_000  # ~1.4 MB: several backup steps of 256 pages


def _vault(home: Path, name: str = "notes", records: int = BULK_RECORDS) -> str:
    engine = Engine.open(home)
    try:
        vault_id = engine.create_vault(name, PASS).vault_id
        engine.unlock(vault_id, PASS)
        for i in range(records):
            engine.add_record(vault_id, kind="memory", title=f"note {i}", body=os.urandom(BULK_CHARS // 2).hex())
        engine.add_record(vault_id, kind="credential", title="bank", body="PIN 2468")
        return vault_id
    finally:
        engine.close()


def _fully_checked(path: Path) -> int:
    """Records in a backup after decrypting every revision and matching the keyed manifest."""
    keys = open_keys(read_header(path), PASS)
    try:
        return check_vault_file(path, keys).records
    finally:
        keys.wipe()


def _visible(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) if folder.exists() else []


# The count file is replaced, never rewritten in place: the test reads it while the writer runs,
# and a read between write_text's truncate and its write would see "" (a rare failure under load).
WRITER = CHILD_PRELUDE + """
import os, sys, time
from pathlib import Path
from memories_tui.engine import Engine
home, vault, stop, count = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
engine = Engine.open(home)
engine.unlock(vault, "correct horse")
n = 0
while not stop.exists():
    engine.add_record(vault, kind="memory", title=f"live {n}", body="written during the backup " * 200)
    n += 1
    count.with_name("count.tmp").write_text(str(n))
    os.replace(count.with_name("count.tmp"), count)
engine.close()
"""


def test_backup_while_another_process_writes_is_consistent_and_verifies(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    vault_id = _vault(home)
    stop, count = tmp_path / "stop", tmp_path / "count"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(home), vault_id, str(stop), str(count)],
                              env=cli_env(home), stderr=subprocess.PIPE)
    try:
        while not count.exists():  # the writer is committing before the first backup starts
            assert writer.poll() is None, writer.stderr.read().decode()
            time.sleep(0.01)
        results = [run_cli(home, "vault", "backup", "notes", str(tmp_path / "bk"), "--json") for _ in range(3)]
        written_meanwhile = int(count.read_text())
    finally:
        stop.touch()
        assert writer.wait(timeout=120) == 0, writer.stderr.read().decode()
    assert written_meanwhile > 1
    sizes = []
    for result in results:
        assert result.code == 0, result.stderr
        report = result.json
        assert report["verified"] == "full"
        path = Path(report["path"])
        records = _fully_checked(path)  # opens and verifies: every AEAD, the keyed manifest
        assert records == report["records"]
        assert BULK_RECORDS + 1 <= records <= BULK_RECORDS + 1 + int(count.read_text())
        sizes.append(records)
        copy = tmp_path / "open-me.mvault"  # and a copy opens as a vault with its records readable
        shutil.copyfile(path, copy)
        engine = Engine.open(tmp_path / "other-home")
        try:
            engine.init_home()
            target = engine.home / "vaults" / f"{vault_id}.mvault"
            shutil.move(copy, target)
            engine.unlock(vault_id, PASS)
            assert len(engine.list_records(vault_id)) == records
        finally:
            engine.close()
            shutil.rmtree(tmp_path / "other-home")
    assert sizes == sorted(sizes)  # later backups never hold less


def test_names_rotation_and_a_locked_vault_is_checked_by_structure(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    vault_id = _vault(home, name='a/b:c*? 筆記 CON', records=2)
    folder = tmp_path / "bk"
    engine = Engine.open(home)
    try:
        locked = engine.backup_vault(vault_id, folder)
        assert locked.verified == "structure"
        engine.unlock(vault_id, PASS)
        reports = [engine.backup_vault(vault_id, folder, keep=2) for _ in range(3)]
    finally:
        engine.close()
    assert all(r.verified == "full" for r in reports)
    names = _visible(folder)
    assert len(names) == 2  # rotated to the newest two
    assert {Path(r.path).name for r in reports[1:]} == set(names)
    for name in names:
        assert name.startswith("a_b_c__ 筆記 CON-") and name.endswith(".mvault")
        assert not set('/:*?"<>|\\') & set(name)
    assert [len(r.removed) for r in reports] == [0, 1, 1]  # the locked one, then reports[0]
    assert locked.path in reports[1].removed and reports[0].path in reports[2].removed
    listed = [b.path for b in backups_of(folder, vault_id, 'a/b:c*? 筆記 CON')]
    assert listed == [r.path for r in reports[1:]]  # oldest first, even within one second


def test_rotation_never_removes_another_vaults_or_unknown_files(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    one, two = _vault(home, "same", records=1), None
    other_home = tmp_path / "home2"
    two = _vault(other_home, "same", records=1)
    folder = tmp_path / "bk"
    folder.mkdir()
    (folder / "same-20000101T000000Z.mvault").write_text("not a vault")
    for source, vid in ((other_home, two), (home, one)):
        engine = Engine.open(source)
        try:
            engine.backup_vault(vid, folder)
        finally:
            engine.close()
    engine = Engine.open(home)
    try:
        engine.backup_vault(one, folder, keep=1)
    finally:
        engine.close()
    names = _visible(folder)
    assert "same-20000101T000000Z.mvault" in names
    assert sum(1 for n in names if read_ok(folder / n) == two) == 1
    assert sum(1 for n in names if read_ok(folder / n) == one) == 1


def read_ok(path: Path) -> str | None:
    try:
        return read_header(path).vault_id
    except VaultError:
        return None


def test_verification_refuses_a_tampered_or_foreign_copy(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    vault_id = _vault(home, records=3)
    engine = Engine.open(home)
    try:
        engine.unlock(vault_id, PASS)
        path = engine.backup_vault(vault_id, tmp_path / "bk").path
        keys = engine._state.vaults.get(vault_id).vault.keys
        import sqlite3

        conn = sqlite3.connect(path)
        row = conn.execute("SELECT rowid, ciphertext FROM records LIMIT 1").fetchone()
        flipped = bytes([row[1][0] ^ 1]) + row[1][1:]
        conn.execute("UPDATE records SET ciphertext = ? WHERE rowid = ?", (flipped, row[0]))
        conn.commit()
        conn.close()
        with pytest.raises(TamperError):
            check_vault_file(path, keys)  # digest mismatch
        with pytest.raises(TamperError):
            check_vault_file(path)  # even without the key
        other = _vault(tmp_path / "h3", "other", records=1)
        other_file = tmp_path / "h3" / "vaults" / f"{other}.mvault"
        with pytest.raises(VaultError) as caught:
            check_vault_file(other_file, keys)
        assert caught.value.code == "vault_mismatch"
    finally:
        engine.close()


@pytest.mark.parametrize("where", ["file", "inside-file"])
def test_backup_to_a_path_that_is_a_file(tmp_path, cheap_kdf, where):
    home = tmp_path / "home"
    _vault(home, records=1)
    blocker = tmp_path / "blocker"
    blocker.write_text("keep me")
    target = blocker if where == "file" else blocker / "sub"
    result = run_cli(home, "vault", "backup", "notes", str(target), "--json")
    assert result.code == 1 and result.json["error"]["code"] == "not_a_folder"
    assert blocker.read_text() == "keep me"


def test_backup_to_an_unwritable_folder(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    _vault(home, records=1)
    folder = tmp_path / "ro"
    folder.mkdir()
    os.chmod(folder, 0o500)
    try:
        result = run_cli_as(home, "vault", "backup", "notes", str(folder), "--json", preexec=obey_permissions)
    finally:
        os.chmod(folder, 0o700)
    assert result.code == 1, result.stdout
    assert result.json["error"]["code"] == "folder_unwritable"
    assert list(folder.iterdir()) == []


def test_backup_onto_a_full_disk_leaves_nothing(tmp_path, cheap_kdf):
    """The child cannot grow a file past 300 KB (RLIMIT_FSIZE: writes fail as on a full disk)."""
    home = tmp_path / "home"
    _vault(home)
    folder = tmp_path / "bk"
    folder.mkdir()
    result = run_cli_as(home, "vault", "backup", "notes", str(folder), "--json", preexec=file_size_limit(300_000))
    assert result.code == 1, result.stdout
    assert result.json["error"]["code"] == "disk_full", result.json
    assert list(folder.iterdir()) == []  # no partial, no journal
    ok = run_cli(home, "vault", "backup", "notes", str(folder), "--json")
    assert ok.code == 0 and _fully_checked(Path(ok.json["path"])) == BULK_RECORDS + 1


def test_kill_9_mid_backup_leaves_no_file_under_a_final_name(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    _vault(home)
    folder = tmp_path / "bk"
    killed_at("backup-mid-copy", home, tmp_path, "vault", "backup", "notes", str(folder))
    assert _visible(folder) == []  # only the hidden partial of the dead process
    assert [p for p in folder.iterdir() if p.name.endswith(".partial")]
    ok = run_cli(home, "vault", "backup", "notes", str(folder), "--json")
    assert ok.code == 0
    assert [p.name for p in folder.iterdir()] == [Path(ok.json["path"]).name]  # the stale partial was cleared
    assert _fully_checked(Path(ok.json["path"])) == BULK_RECORDS + 1


def test_backup_if_due_follows_every_hours(tmp_path, cheap_kdf):
    from datetime import UTC, datetime, timedelta

    home = tmp_path / "home"
    vault_id = _vault(home, records=1)
    (home / "config.toml").write_text(f'[backup]\ndir = "{tmp_path / "auto"}"\nevery_hours = 24\nkeep = 3\n')
    engine = Engine.open(home)
    try:
        engine.unlock(vault_id, PASS)
        first = engine.backup_if_due(vault_id)
        assert first is not None and first.verified == "full" and first.path.parent == tmp_path / "auto"
        assert engine.backup_if_due(vault_id) is None  # the newest is minutes old
        taken = backups_of(tmp_path / "auto", vault_id, "notes")[-1].taken
        assert engine.backup_if_due(vault_id, now=taken + timedelta(hours=23, minutes=59)) is None  # hours, not minutes
        later = datetime.now(UTC) + timedelta(hours=25)
        assert engine.backup_if_due(vault_id, now=later) is not None
    finally:
        engine.close()
    assert len(_visible(tmp_path / "auto")) == 2


PEER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "touch":  # open, read and close, as another Memories process does
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
else:
    print(conn.execute("SELECT count(*) FROM records").fetchone()[0])
conn.close()
"""


def test_a_backup_of_a_vault_open_here_keeps_it_shared_with_other_processes(tmp_path, cheap_kdf):
    """Reading a file this process holds open through SQLite drops SQLite's locks on it when
    the reader closes; another process closing the vault then thinks it is the last user and
    deletes the -wal/-shm files, after which our writes are invisible to everyone else."""
    home = tmp_path / "home"
    vault_id = _vault(home, records=1)
    engine = Engine.open(home)
    try:
        engine.unlock(vault_id, PASS)
        path = engine.resolve_vault(vault_id).path
        engine.backup_vault(vault_id, tmp_path / "bk")
        engine.list_vaults()  # reads every header, this open vault's too
        assert subprocess.run([sys.executable, "-c", PEER, str(path), "touch"], check=True).returncode == 0
        assert Path(f"{path}-shm").exists()
        engine.add_record(vault_id, kind="memory", title="after", body="written after the backup")
        seen = subprocess.run([sys.executable, "-c", PEER, str(path), "count"], check=True, capture_output=True,
                              text=True).stdout
        assert int(seen) == 3  # the record written after the backup is there for another process
    finally:
        engine.close()
