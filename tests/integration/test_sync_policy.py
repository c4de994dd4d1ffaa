"""Vault policy (the device-only flag) follows the vault between devices by the rule records
follow: a change made on one device applies on the others at their next sync, the later change
wins on every device, and a change made without seeing another device's is reported on both."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import call_cli


def _two_devices(tmp_path: Path) -> tuple[Path, Path, Path]:
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    assert call_cli(a, "vault", "create", "notes").code == 0
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    assert call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    return a, b, folder


def _policy(home: Path, *change: str) -> bool:
    out = call_cli(home, "--json", "vault", "policy", "notes", *change)
    assert out.code == 0, out.stderr
    return bool(out.json["device_only"])


def _sync(home: Path) -> dict:
    out = call_cli(home, "--json", "sync", "notes")
    assert out.code == 0, out.stderr
    return out.json


def test_device_only_set_on_one_device_applies_on_the_other(tmp_path: Path) -> None:
    a, b, _folder = _two_devices(tmp_path)
    assert _policy(a, "--device-only", "on") is True
    assert _sync(a)["policy_pulled"] == []
    assert _policy(b) is False  # not synced yet
    pulled = _sync(b)
    assert pulled["policy_pulled"] == ["device_only"] and pulled["policy_conflicts"] == []
    assert _policy(b) is True
    text = call_cli(b, "sync", "notes").stdout
    assert "another device" not in text  # nothing new the second time

    assert _policy(b, "--device-only", "off") is False
    _sync(b)
    assert _sync(a)["policy_pulled"] == ["device_only"] and _policy(a) is False
    # a joined device that never touched the flag does not turn the later change back
    c = tmp_path / "c"
    assert call_cli(c, "sync", "join", str(_folder)).code == 0
    _sync(c)
    assert _policy(c) is False and _sync(a)["policy_pulled"] == [] and _policy(a) is False


def test_a_concurrent_change_is_reported_on_both_devices_and_both_keep_the_same_winner(tmp_path: Path) -> None:
    a, b, _folder = _two_devices(tmp_path)
    _policy(a, "--device-only", "on")
    _sync(a)
    _sync(b)  # both know "on"
    _policy(a, "--device-only", "off")
    _sync(a)
    _policy(a, "--device-only", "on")
    _sync(a)  # a went off and on again; b never saw either
    _policy(b, "--device-only", "off")  # b turns it off without having seen a's changes
    on_b = _sync(b)
    assert on_b["policy_conflicts"] == ["device_only"]
    on_a = _sync(a)
    assert on_a["policy_conflicts"] == ["device_only"]
    assert _policy(a) == _policy(b) is False  # b's change was stamped last: it wins on both
    text = call_cli(a, "sync", "notes").stdout
    assert "two devices at once" not in text  # reported once, when it arrived
