"""Sync as a user watches it: pending local changes in `sync status` (no passphrase), progress
on stderr only (never in --json output), ctrl+c before anything is written leaves the vault as it was."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from tests.helpers.cli import CHEAP_CLI, call_cli, cli_env


def _synced_home(tmp_path):
    home, folder = tmp_path / "a", tmp_path / "Sync"
    folder.mkdir()
    call_cli(home, "vault", "create", "notes")
    call_cli(home, "memory", "add", "notes", "--title", "one", "--text", "first")
    assert call_cli(home, "sync", "add", "notes", str(folder)).code == 0
    return home, folder


def _pending(home):
    targets = call_cli(home, "--json", "sync", "status", passphrase=None).json["targets"]
    return [t["pending"] for t in targets]


def test_pending_counts_local_writes_since_the_last_sync_and_drops_to_zero_after_one(tmp_path):
    home, _folder = _synced_home(tmp_path)
    assert _pending(home) == [None]  # never synced: not known
    assert call_cli(home, "sync", "notes").code == 0
    assert _pending(home) == [0]
    rid = call_cli(home, "--json", "memory", "add", "notes", "--title", "two", "--text", "second").json["id"]
    assert call_cli(home, "memory", "update", "notes", rid, "--text", "second, edited").code == 0
    assert _pending(home) == [2]
    shown = call_cli(home, "sync", "status", "notes", passphrase=None)
    assert shown.code == 0 and "PENDING" in shown.stdout
    assert call_cli(home, "sync", "notes").code == 0
    assert _pending(home) == [0]


def test_sync_progress_goes_to_stderr_and_json_stays_one_document(tmp_path):
    home, _folder = _synced_home(tmp_path)
    shown = call_cli(home, "sync", "notes")
    assert shown.code == 0 and "Synced with" in shown.stdout
    assert "Syncing" in shown.stderr and "Syncing" not in shown.stdout
    quiet = call_cli(home, "--json", "sync", "notes")
    assert quiet.code == 0 and quiet.json["pushed_revisions"] == 0 and "Syncing" not in quiet.stderr


def test_ctrl_c_during_a_sync_changes_nothing_and_the_next_sync_pushes_everything(tmp_path):
    home, folder = _synced_home(tmp_path)
    ready = tmp_path / "held"
    env = cli_env(home, MEMORIES_TEST_HOLD_AT=f"sync-after-read:{ready}")
    child = subprocess.Popen([sys.executable, str(CHEAP_CLI), "sync", "notes"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the sync never reached the point"
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)  # what ctrl+c sends: pulled and compared, nothing written yet
    time.sleep(0.3)
    ready.unlink()
    out, err = child.communicate(timeout=120)
    text = err.decode()
    assert child.returncode != 0 and "Sync cancelled; nothing was changed here." in text, text
    assert "Traceback" not in text and out == b""
    assert not list(folder.glob("d/*/0*")), "a cancelled sync uploaded a bundle"
    status = call_cli(home, "--json", "sync", "status", passphrase=None).json["targets"]
    assert [(t["last_sync"], t["last_error"], t["pending"]) for t in status] == [(None, None, None)]
    pushed = call_cli(home, "--json", "sync", "notes")
    assert pushed.code == 0 and pushed.json["pushed_revisions"] == 1


def test_keep_both_keeps_a_file_asset_too_with_its_bytes(tmp_path, cheap_kdf):
    from memories_tui.engine import Engine
    from tests.helpers.vaults import PASS

    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    scan = tmp_path / "scan.bin"
    scan.write_bytes(bytes(range(256)) * 3)
    rid = call_cli(a, "--json", "asset", "add", "notes", str(scan), "--title", "scan").json["id"]
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0 and call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    for home, title in ((a, "scan on a"), (b, "scan on b")):
        assert call_cli(home, "memory", "update", "notes", rid, "--title", title).code == 0
    for home in (a, b, a):
        assert call_cli(home, "sync", "notes").code == 0
    both = call_cli(a, "--json", "memory", "resolve", "notes", rid, "--keep-both")
    assert both.code == 0, both.stderr
    [copy_id] = both.json["copies"]
    engine = Engine.open(a)
    try:
        vault_id = engine.resolve_vault("notes").vault_id
        engine.unlock(vault_id, PASS)
        copy, kept = engine.read_record(vault_id, copy_id), engine.read_record(vault_id, rid)
        assert (copy.kind, copy.data) == ("asset", scan.read_bytes())
        assert {copy.title, kept.title} == {"scan on a (conflict copy)", "scan on b"} or {copy.title, kept.title} == {
            "scan on b (conflict copy)", "scan on a"}
        assert engine.conflicts(vault_id) == []
    finally:
        engine.close()


def test_through_the_resident_engine_progress_and_pending_are_the_same(tmp_path):
    from tests.helpers.daemon import daemon, unlock

    home, _folder = _synced_home(tmp_path)
    (home / "config.toml").write_text("[daemon]\nidle_lock_minutes = 0\n[sync]\nbackground = false\n",
                                      encoding="utf-8")
    with daemon(home):
        assert unlock(home, "notes").code == 0
        shown = call_cli(home, "sync", "notes", passphrase=None)
        assert shown.code == 0 and "Syncing" in shown.stderr and "Syncing" not in shown.stdout, shown.stderr
        assert call_cli(home, "memory", "add", "notes", "--title", "two", "--text", "x", passphrase=None).code == 0
        assert _pending(home) == [1]
        quiet = call_cli(home, "--json", "sync", "notes", passphrase=None)
        assert quiet.code == 0 and quiet.json["pushed_revisions"] == 1 and "Syncing" not in quiet.stderr
        assert _pending(home) == [0]


def test_pending_counts_records_where_the_vault_is_open_and_writes_elsewhere(tmp_path):
    """A batch of three records is one write: `sync status` says 3 when the daemon holds the
    vault (it counts the records to push), and "1 write" with a sentence saying so otherwise."""
    from memories_tui.engine import Engine, NewRecord
    from tests.helpers.daemon import daemon, unlock
    from tests.helpers.vaults import PASS, cheap_kdf

    home, _folder = _synced_home(tmp_path)
    assert call_cli(home, "sync", "notes").code == 0
    with cheap_kdf():
        engine = Engine.open(home)
        vault_id = engine.unlock("notes", PASS).vault_id
        engine.add_records(vault_id, [NewRecord("memory", f"batch {n}", "imported at once") for n in range(3)])
        assert [(e.pending, e.pending_records) for e in engine.sync_status()] == [(1, 3)]  # open here
        engine.close()
    locked = call_cli(home, "--json", "sync", "status", passphrase=None).json["targets"]
    assert [(t["pending"], t["pending_records"]) for t in locked] == [(1, None)]
    text = call_cli(home, "sync", "status", passphrase=None).stdout
    assert "1 write" in text and "counts writes" in text
    (home / "config.toml").write_text("[daemon]\nidle_lock_minutes = 0\n[sync]\nbackground = false\n", encoding="utf-8")
    with daemon(home):
        assert unlock(home, "notes").code == 0
        served = call_cli(home, "--json", "sync", "status", passphrase=None).json["targets"]
        assert [(t["pending"], t["pending_records"]) for t in served] == [(1, 3)]
        text = call_cli(home, "sync", "status", passphrase=None).stdout
        assert " 3 " in text and "counts writes" not in text
        assert call_cli(home, "sync", "notes", passphrase=None).code == 0
        assert [t["pending_records"] for t in call_cli(home, "--json", "sync", "status").json["targets"]] == [0]


def test_ctrl_c_during_a_cli_join_says_which_vault_it_made_and_the_next_sync_finishes_it(tmp_path):
    """ctrl+c in `sync join` ended with "Interrupted." (and an empty vault nobody mentioned)."""
    home, folder = _synced_home(tmp_path)
    assert call_cli(home, "sync", "notes").code == 0
    joiner, ready = tmp_path / "b", tmp_path / "held"
    env = cli_env(joiner, MEMORIES_TEST_HOLD_AT=f"sync-after-read:{ready}")
    child = subprocess.Popen([sys.executable, str(CHEAP_CLI), "sync", "join", str(folder)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the join never reached the point"
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)  # the vault is made and what the target holds was read
    time.sleep(0.3)
    ready.unlink()
    _out, err = child.communicate(timeout=120)
    text = err.decode()
    assert child.returncode != 0 and "Traceback" not in text, text
    assert "Join cancelled: vault notes was made here" in text and "memories sync notes" in text, text
    assert call_cli(joiner, "sync", "notes").code == 0
    titles = [r["title"] for r in call_cli(joiner, "--json", "memory", "list", "notes").json["records"]]
    assert titles == ["one"]


def test_a_passphrase_change_the_target_could_not_take_is_a_warning_not_a_failure(tmp_path):
    """The passphrase is changed either way; `vault passwd` exited 1, so a script took it for a
    failure (and retried with the old passphrase, which no longer works)."""
    home, folder = _synced_home(tmp_path)
    assert call_cli(home, "sync", "notes").code == 0
    (tmp_path / "new").write_text("another long passphrase\n", encoding="utf-8")
    folder.rename(tmp_path / "away")  # the disk is not mounted
    changed = call_cli(home, "vault", "passwd", "notes", "--new-passphrase-file", str(tmp_path / "new"))
    assert changed.code == 0 and "Passphrase changed" in changed.stdout, changed.stderr
    assert "warning:" in changed.stderr and "next sync of notes" in changed.stderr, changed.stderr
    quiet = call_cli(home, "--json", "vault", "passwd", "notes", "--new-passphrase-file", str(tmp_path / "new"),
                     passphrase="another long passphrase")
    assert quiet.code == 0 and quiet.json["warning"]["code"] == "sync_join_record_stale", quiet.stdout


def test_a_mistyped_sync_verb_is_named_and_the_help_teaches_the_targets(tmp_path):
    """`sync stauts` reads as syncing a vault named "stauts": the error says which verb was meant.
    `--help` names the three kinds of target and where their credentials come from."""
    typo = call_cli(tmp_path / "a", "sync", "stauts", passphrase=None)
    assert typo.code == 1 and "Did you mean `memories sync status`?" in typo.stderr, typo.stderr
    helped = call_cli(tmp_path / "a", "sync", "join", "--help", passphrase=None)
    for needed in ("s3://BUCKET/PREFIX", "MEMORIES_WEBDAV_USERNAME", "AWS_ACCESS_KEY_ID"):
        assert needed in " ".join(helped.stdout.split()), needed


def test_sync_status_says_how_to_see_why_the_last_sync_failed(tmp_path):
    home, folder = _synced_home(tmp_path)
    folder.rename(tmp_path / "away")  # the disk is not mounted
    assert call_cli(home, "sync", "notes").code == 1
    shown = call_cli(home, "sync", "status", passphrase=None)
    assert "sync_target_missing" in shown.stdout
    assert "notes: the last sync failed (sync_target_missing); `memories sync notes` tries again" in shown.stdout
