"""Rollback detection: the newest state seen per vault, in the home and outside it (the
per-user state folder, which a replay of the home does not reach)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from memories_tui.engine import Engine
from memories_tui.errors import RollbackError, TamperError
from memories_tui.vault.state_folder import STATE_DIR_ENV, home_tag, state_folder
from tests.helpers.cli import run_cli
from tests.helpers.vaults import PASS, create_vault


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


def _outside(vault_id: str) -> Path:
    """The home's second anchor of the vault, in the state folder outside the home (conftest.py)."""
    found = list((Path(os.environ[STATE_DIR_ENV]) / "anchors").glob(f"{vault_id}-*.json"))
    assert len(found) == 1, found
    return found[0]


def test_a_forged_anchor_is_refused_and_only_both_copies_gone_is_the_documented_blind_spot(tmp_path, cheap_kdf):
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
    anchor.unlink()  # the home's anchor gone: the copy outside the home still knows change 5
    assert run_cli(home, "memory", "list", "notes", "--json").json["error"]["code"] == "vault_rolled_back"
    _outside(vault_id).unlink()  # both gone (a new machine) cannot tell: docs/backups.md says so
    assert run_cli(home, "memory", "list", "notes", "--json").code == 0


def _records(home: Path, vault: str, *, accept: bool = False) -> int:
    engine = Engine.open(home)
    try:
        engine.unlock(vault, PASS, accept_rollback=accept)
        return len(engine.list_records(vault))
    finally:
        engine.close()


def _add(home: Path, vault: str, *titles: str) -> None:
    engine = Engine.open(home)
    try:
        engine.unlock(vault, PASS)
        for title in titles:
            engine.add_record(vault, kind="memory", title=title, body=f"text of {title}")
    finally:
        engine.close()


def _rolled_back(home: Path, vault: str) -> str:
    with pytest.raises(RollbackError) as refused:
        _records(home, vault)
    return str(refused.value)


def test_the_whole_home_put_back_with_its_old_anchors_is_detected_and_accepted_on_purpose(tmp_path, cheap_kdf):
    """A sync tool or a restore of the home brings back the vault file *and* the anchor that
    matched it; the copy outside the home still knows the newer state."""
    home, saved = tmp_path / "home", tmp_path / "saved-home"
    vault_id = create_vault(home)
    _add(home, vault_id, "a", "b")
    shutil.copytree(home, saved)  # vault at change 3 and the anchor that says change 3
    _add(home, vault_id, "c", "d")
    shutil.rmtree(home)
    shutil.copytree(saved, home)
    message = _rolled_back(home, vault_id)
    assert "change 3" in message and "change 5" in message
    refused = run_cli(home, "memory", "list", "notes", "--json")  # the CLI's accept flow covers this copy too
    assert refused.json["error"]["code"] == "vault_rolled_back"
    accepted = run_cli(home, "memory", "list", "notes", "--accept-rollback", "--json")
    assert accepted.code == 0 and len(accepted.json["records"]) == 2
    assert json.loads(_outside(vault_id).read_text())["counter"] == 3  # accepting moved both copies
    assert _records(home, vault_id) == 2


def test_two_copies_changed_apart_at_the_same_change_count_are_told_apart(tmp_path, cheap_kdf):
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    vault_id = create_vault(home)
    _add(home, vault_id, "a")
    shutil.copytree(home, elsewhere)  # another home (another path: its own anchors) with the same vault
    _add(home, vault_id, "written here")
    _add(elsewhere, vault_id, "written elsewhere")  # the same change count, other contents
    vault_file = f"vaults/{vault_id}.mvault"
    _put_back(elsewhere / vault_file, home / vault_file)
    message = _rolled_back(home, vault_id)
    assert "went another way" in message and message.count("change 3") == 2
    assert _records(home, vault_id, accept=True) == 2 and _records(home, vault_id) == 2


def test_a_fresh_home_and_several_vaults_and_homes_are_independent(tmp_path, cheap_kdf):
    home, saved, fresh = tmp_path / "home", tmp_path / "saved-home", tmp_path / "fresh"
    first, second = create_vault(home, "first"), create_vault(home, "second")
    _add(home, first, "a")
    _add(home, second, "b")
    shutil.copytree(home, saved)
    _add(home, first, "c")  # only the first vault moves on
    shutil.copytree(saved, fresh)  # the old home under a new path is a new home: nothing to compare
    shutil.rmtree(home)
    shutil.copytree(saved, home)
    assert "change 2" in _rolled_back(home, first)
    assert _records(home, second) == 1  # the other vault's copies are its own
    assert _records(fresh, first) == 1 and _records(fresh, second) == 1
    assert _records(home, first, accept=True) == 1
    folder = Path(os.environ[STATE_DIR_ENV]) / "anchors"
    names = {p.name for p in folder.iterdir() if p.name.startswith((first, second))}
    assert len(names) == 4  # one per vault and home; files 0600 in a 0700 folder
    assert {(folder / n).stat().st_mode & 0o777 for n in names} == {0o600}
    assert folder.stat().st_mode & 0o777 == 0o700


def test_a_copy_outside_the_home_is_bound_to_its_vault_key_and_home(tmp_path, cheap_kdf):
    home, other = tmp_path / "home", tmp_path / "other"
    vault_id = create_vault(home)
    _add(home, vault_id, "a")
    shutil.copytree(home, other)
    _add(other, vault_id, "b")
    mine = _outside_of(home, vault_id)
    theirs = _outside_of(other, vault_id)
    mine.write_bytes(theirs.read_bytes())  # the other home's newer copy, renamed to this home's
    with pytest.raises(TamperError) as refused:
        _records(home, vault_id)
    assert refused.value.code == "anchor_invalid" and str(mine) in str(refused.value)
    assert _records(home, vault_id, accept=True) == 1
    mine.write_bytes(mine.read_bytes()[:30])  # torn by a crash (written without fsync): read as missing
    assert _records(home, vault_id) == 1
    assert json.loads(mine.read_text())["counter"] == 2  # and written again


def _outside_of(home: Path, vault_id: str) -> Path:
    return Path(os.environ[STATE_DIR_ENV]) / "anchors" / f"{vault_id}-{home_tag(home)}.json"


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


def test_the_state_folder_is_never_inside_the_home(tmp_path, monkeypatch):
    """On macOS and Windows the platform's state folder is the default home itself: the copy
    outside the home then goes beside it. (A temporary XDG_STATE_HOME stands in for the user's.)"""
    monkeypatch.delenv(STATE_DIR_ENV)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert state_folder(tmp_path / "home") == tmp_path / "state" / "memories"
    for home in (tmp_path / "state" / "memories", tmp_path / "state" / "memories" / "inner"):
        assert state_folder(home) == tmp_path / "state" / "memories-state"
    monkeypatch.setenv(STATE_DIR_ENV, str(tmp_path / "chosen"))
    assert state_folder(tmp_path / "state" / "memories") == tmp_path / "chosen"


def test_what_sync_calls_checks_a_head_and_raises_the_anchors(tmp_path, cheap_kdf):
    """`AnchorBook.confirm` with a state learnt elsewhere (a sync target's head): an older one
    is refused, a newer one moves both copies up, so the local file is then behind."""
    from memories_tui.vault.header import read_header
    from memories_tui.vault.keys import open_keys

    home = tmp_path / "home"
    vault_id = create_vault(home)
    _add(home, vault_id, "a")
    engine = Engine.open(home)
    keys = open_keys(read_header(home / "vaults" / f"{vault_id}.mvault"), PASS)
    try:
        book = engine.anchors
        seen = book.newest(keys)
        assert seen is not None and seen.counter == 2
        with pytest.raises(RollbackError):
            book.confirm(keys, 1, seen.manifest)
        book.confirm(keys, 7, bytes(32), name="notes")
        assert book.newest(keys).counter == 7 and json.loads(_outside(vault_id).read_text())["counter"] == 7
    finally:
        keys.wipe()
        engine.close()
    assert "change 7" in _rolled_back(home, vault_id)
