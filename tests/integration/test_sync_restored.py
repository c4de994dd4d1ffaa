"""A vault restored from a backup is behind its own chain in the target: sync refuses it with a
sentence naming the way forward, and `sync VAULT --as-new-device` goes on under a new device id;
the changes made after the backup come back from the target and those made since the restore
reach the other devices. Nothing is lost, nothing is duplicated."""

from __future__ import annotations

import shutil
from pathlib import Path

from memories_tui.vault.state_folder import STATE_DIR_ENV
from tests.helpers.cli import call_cli


def _titles(home: Path) -> list[str]:
    listed = call_cli(home, "--json", "memory", "list", "notes", "--accept-rollback")
    assert listed.code == 0, listed.stderr
    return sorted(r["title"] for r in listed.json["records"])


def test_a_restored_vault_goes_on_as_a_new_device_and_loses_nothing(tmp_path: Path) -> None:
    a, b, folder, backups = tmp_path / "a", tmp_path / "b", tmp_path / "Sync", tmp_path / "Backups"
    folder.mkdir()
    backups.mkdir()
    call_cli(a, "vault", "create", "notes")
    call_cli(a, "memory", "add", "notes", "--title", "before the backup", "--text", "one")
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0 and call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    backup = call_cli(a, "--json", "vault", "backup", "notes", str(backups))
    assert backup.code == 0, backup.stderr
    call_cli(a, "memory", "add", "notes", "--title", "after the backup", "--text", "two")
    assert call_cli(a, "sync", "notes").code == 0
    [file] = list(backups.glob("*.mvault"))
    restored = call_cli(a, "--json", "vault", "restore", str(file), "--force")
    assert restored.code == 0, restored.stderr
    assert _titles(a) == ["before the backup"]
    call_cli(a, "memory", "add", "notes", "--title", "since the restore", "--text", "three", "--accept-rollback")

    refused = call_cli(a, "--json", "sync", "notes", "--accept-rollback")
    assert refused.json["error"]["code"] == "sync_device_behind"
    assert "--as-new-device" in refused.json["error"]["message"] and "nothing is lost" in refused.json["error"]["message"]
    not_behind = call_cli(b, "--json", "sync", "notes", "--as-new-device")
    assert not_behind.json["error"]["code"] == "sync_not_behind"

    renewed = call_cli(a, "sync", "notes", "--as-new-device", "--accept-rollback")
    assert renewed.code == 0 and "now syncs as device" in renewed.stdout, renewed.stderr
    everything = ["after the backup", "before the backup", "since the restore"]
    assert _titles(a) == everything
    assert call_cli(b, "sync", "notes").code == 0 and _titles(b) == everything
    assert call_cli(a, "sync", "notes", "--accept-rollback").code == 0 and _titles(a) == everything
    devices = call_cli(a, "--json", "sync", "devices", "notes", "--accept-rollback").json["devices"]
    # b only read (its head says how far, for compaction: no bundles); the old id stays listed,
    # with both bundles it wrote, until forgotten
    assert sorted((d["this_device"], d["bundles"]) for d in devices) == [(False, 0), (False, 2), (True, 1)]


def test_a_home_put_back_with_its_state_folder_is_caught_by_the_sync_target(tmp_path: Path) -> None:
    """Both anchors come back from the same older moment (a full-disk image): unlock cannot tell,
    but the target holds this device's later bundles, so the next sync refuses the vault."""
    home, state, folder = tmp_path / "home", tmp_path / "state", tmp_path / "Sync"
    folder.mkdir()
    env = {STATE_DIR_ENV: str(state)}
    call_cli(home, "vault", "create", "notes", env=env)
    call_cli(home, "memory", "add", "notes", "--title", "before the image", "--text", "one", env=env)
    assert call_cli(home, "sync", "add", "notes", str(folder), env=env).code == 0
    assert call_cli(home, "sync", "notes", env=env).code == 0
    assert any(state.rglob("*.json"))  # the outside copy is there to be put back
    shutil.copytree(home, tmp_path / "home-image")
    shutil.copytree(state, tmp_path / "state-image")
    call_cli(home, "memory", "add", "notes", "--title", "after the image", "--text", "two", env=env)
    assert call_cli(home, "sync", "notes", env=env).code == 0
    for live in (home, state):
        shutil.rmtree(live)
        shutil.copytree(tmp_path / f"{live.name}-image", live)

    opened = call_cli(home, "--json", "memory", "list", "notes", env=env)
    assert opened.code == 0, opened.stderr  # neither anchor knows the later state: not seen at unlock
    assert [r["title"] for r in opened.json["records"]] == ["before the image"]
    refused = call_cli(home, "--json", "sync", "notes", env=env)
    assert refused.code != 0 and refused.json["error"]["code"] == "sync_device_behind", refused.stdout
    assert "--as-new-device" in refused.json["error"]["message"]
