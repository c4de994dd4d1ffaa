"""Real faults of a folder target and of a join, through the CLI in a child process: a folder
that cannot be written (even by root: the child drops the capabilities that bypass permissions)
is one clear line and loses nothing; a join killed with SIGKILL while it pulls leaves a vault
that the next `memories sync` completes; files a sync tool is still copying are not there yet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import call_cli
from tests.helpers.faults import killed_at, obey_permissions, run_cli_as


def _titles(home: Path) -> set[str]:
    return {r["title"] for r in call_cli(home, "--json", "memory", "list", "notes").json["records"]}


def _set_writable(folder: Path, writable: bool) -> None:
    for path in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
        path.chmod(0o700 if writable else 0o500)


def _records_to_push(home: Path) -> int:
    """What `sync status` and the TUI's status screen count where the vault is open."""
    from memories_tui.engine import Engine
    from tests.helpers.vaults import PASS, cheap_kdf

    with cheap_kdf():
        engine = Engine.open(home)
        try:
            return engine.sync_pending(engine.unlock("notes", PASS).vault_id)
        finally:
            engine.close()


def _one_clear_line(result, code: str) -> None:  # noqa: ANN001 - a tests.helpers.cli.Result
    assert result.code != 0
    assert json.loads(result.stdout)["error"]["code"] == code, result.stdout
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout


def test_a_read_only_folder_is_one_clear_line_and_nothing_is_lost(tmp_path):
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    _set_writable(folder, False)
    try:
        refused = run_cli_as(a, "--json", "sync", "add", "notes", str(folder), preexec=obey_permissions)
        _one_clear_line(refused, "sync_target_readonly")
    finally:
        _set_writable(folder, True)
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    assert call_cli(a, "sync", "notes").code == 0
    call_cli(a, "memory", "add", "notes", "--title", "written while read-only", "--text", "kept")
    _set_writable(folder, False)
    try:
        refused = run_cli_as(a, "--json", "sync", "notes", preexec=obey_permissions)
        _one_clear_line(refused, "sync_target_readonly")
        assert not list(folder.rglob("*.tmp")), "a temporary upload was left behind"
        assert _records_to_push(a) == 1  # in the bundle the refused upload left waiting, still to push
    finally:
        _set_writable(folder, True)
    assert call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    assert _titles(b) == {"written while read-only"}


def test_a_join_killed_while_it_pulls_is_completed_by_the_next_sync(tmp_path):
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    for n in range(3):
        call_cli(a, "memory", "add", "notes", "--title", f"note {n}", "--text", f"text {n}")
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    assert call_cli(a, "sync", "notes").code == 0
    killed_at("sync-before-commit", b, tmp_path, "sync", "join", str(folder))  # fetched and verified, nothing written
    again = call_cli(b, "--json", "sync", "join", str(folder))
    assert again.code != 0 and again.json["error"]["code"] == "sync_already_joined"
    assert "`memories sync notes`" in again.json["error"]["message"]  # names the vault the stopped join made
    assert call_cli(b, "sync", "notes").code == 0
    assert _titles(b) == _titles(a) == {"note 0", "note 1", "note 2"}
    call_cli(b, "memory", "add", "notes", "--title", "from b", "--text", "after the kill")
    assert call_cli(b, "sync", "notes").code == 0 and call_cli(a, "sync", "notes").code == 0
    assert "from b" in _titles(a)


def test_objects_a_sync_tool_is_still_copying_are_not_there_yet(tmp_path, cheap_kdf):
    """Syncthing, Dropbox and rsync copy a file under a temporary name, then rename it: such a
    file is skipped (not damage), and a head that arrived before its bundle changes nothing here
    until the bundle lands."""
    from memories_tui.errors import MemoriesError
    from tests.helpers.sync import first_device, joined_device

    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    a.add("first", "one")
    device = folder / "d" / a.sync().device
    b = joined_device(tmp_path / "b", str(folder))
    old_head = (device / "head").read_bytes()
    a.add("second", "two")
    a.sync()
    bundle, new_head = device / "0000000002", (device / "head").read_bytes()
    copying = [device / ".syncthing.0000000002.tmp", device / "~0000000002", device / "0000000002.partial"]
    bundle.rename(copying[0])
    (device / "head").write_bytes(old_head)  # the tool has delivered neither yet
    for partial in copying[1:]:
        partial.write_bytes(copying[0].read_bytes()[:50])
    assert b.sync().pulled_revisions == 0 and set(t for _k, t, _b in b.records().values()) == {"first"}
    (device / "head").write_bytes(new_head)  # the head came first; the bundle is still being copied
    before = b.records()
    with pytest.raises(MemoriesError) as caught:
        b.sync()
    assert caught.value.code == "sync_target_tampered" and "not copied it yet" in caught.value.message
    assert b.records() == before
    copying[0].rename(bundle)  # the copy is complete
    b.sync()
    assert {t for _k, t, _b in b.records().values()} == {"first", "second"}
    a.close()
    b.close()


def test_a_full_disk_and_a_used_up_quota_are_both_a_full_folder(tmp_path):
    import errno

    from memories_tui.sync.folder import FolderTarget

    target = FolderTarget(tmp_path)
    for code in (errno.ENOSPC, errno.EDQUOT):
        failed = target._failed(OSError(code, "no room"))
        assert failed.code == "sync_target_full" and "Nothing was lost" in failed.message
