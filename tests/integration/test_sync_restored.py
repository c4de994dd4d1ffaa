"""A vault restored from a backup is behind its own chain in the target: sync refuses it with a
sentence naming the way forward, and `sync VAULT --as-new-device` goes on under a new device id;
the changes made after the backup come back from the target and those made since the restore
reach the other devices. Nothing is lost, nothing is duplicated."""

from __future__ import annotations

from pathlib import Path

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
