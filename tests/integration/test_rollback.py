"""Rollback detection: the home's anchor of the newest state seen per vault."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from memories_tui.engine import Engine
from tests.helpers.cli import run_cli
from tests.helpers.vaults import PASS


def _vault_with_history(home: Path, tmp: Path) -> tuple[str, Path, Path]:
    """A vault, a raw copy of its file at change 3, and its backup at the same state."""
    created = run_cli(home, "vault", "create", "notes", "--json").json
    vault_id = created["vault_id"]
    for i in range(2):
        assert run_cli(home, "memory", "add", "notes", "--title", f"n{i}", "--text", f"text {i}").code == 0
    vault_file = home / "vaults" / f"{vault_id}.mvault"
    old_copy = tmp / "old-copy.mvault"
    shutil.copyfile(vault_file, old_copy)  # WAL checkpointed on close: the file alone holds change 3
    backup = Path(run_cli(home, "vault", "backup", "notes", str(tmp / "bk"), "--json").json["path"])
    for i in range(2, 4):
        assert run_cli(home, "memory", "add", "notes", "--title", f"n{i}", "--text", f"text {i}").code == 0
    return vault_id, old_copy, backup


def _put_back(old: Path, vault_file: Path) -> None:
    for extra in ("-wal", "-shm"):
        Path(str(vault_file) + extra).unlink(missing_ok=True)
    shutil.copyfile(old, vault_file)


def test_an_old_copy_put_back_is_detected_and_accepted_only_on_purpose(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    vault_id, old_copy, _ = _vault_with_history(home, tmp_path)
    vault_file = home / "vaults" / f"{vault_id}.mvault"
    _put_back(old_copy, vault_file)
    for verb in (["memory", "list", "notes"], ["rag", "search", "notes", "text"], ["vault", "policy", "notes"]):
        result = run_cli(home, *verb, "--json")
        assert result.code == 1, result.stdout
        error = result.json["error"]
        assert error["code"] == "vault_rolled_back"
        assert "change 3" in error["message"] and "change 5" in error["message"]  # both states named
    accepted = run_cli(home, "memory", "list", "notes", "--accept-rollback", "--json")
    assert accepted.code == 0 and len(accepted.json["records"]) == 2
    assert run_cli(home, "memory", "list", "notes", "--json").code == 0  # the anchor moved to change 3


def test_a_deliberate_restore_moves_the_anchor(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    vault_id, _, backup = _vault_with_history(home, tmp_path)
    assert run_cli(home, "vault", "restore", str(backup), "--force", "--json").code == 0
    listed = run_cli(home, "memory", "list", "notes", "--json")
    assert listed.code == 0 and len(listed.json["records"]) == 2


def test_a_forged_anchor_is_refused_and_a_missing_one_is_the_documented_blind_spot(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    vault_id, old_copy, _ = _vault_with_history(home, tmp_path)
    anchor = home / "anchors" / f"{vault_id}.json"
    data = json.loads(anchor.read_text())
    assert data["counter"] == 5
    data["counter"] = 3  # lowering it to match an old copy needs the key: the MAC no longer matches
    anchor.write_text(json.dumps(data))
    _put_back(old_copy, home / "vaults" / f"{vault_id}.mvault")
    result = run_cli(home, "memory", "list", "notes", "--json")
    assert result.json["error"]["code"] == "anchor_invalid"
    anchor.unlink()  # a home without an anchor (fresh home, other machine) cannot tell: docs/backups.md says so
    assert run_cli(home, "memory", "list", "notes", "--json").code == 0


def test_a_reader_behind_a_writer_is_not_a_rollback_and_a_restore_under_an_open_vault_is_seen(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    vault_id, _, backup = _vault_with_history(home, tmp_path)
    engine = Engine.open(home)
    try:
        engine.unlock(vault_id, PASS)
        assert len(engine.list_records(vault_id)) == 4
        for i in range(3):  # another process writes: this one's next read sees newer states
            assert run_cli(home, "memory", "add", "notes", "--title", f"w{i}", "--text", "x").code == 0
        assert len(engine.list_records(vault_id)) == 7
        assert run_cli(home, "vault", "restore", str(backup), "--force", "--json").code == 0
        assert len(engine.list_records(vault_id)) == 2  # the restored state, no rollback error
        engine.add_record(vault_id, kind="memory", title="after restore", body="y")
    finally:
        engine.close()
