"""The sync verbs run by the resident engine while it holds the vault: `sync devices`, `sync
forget`, `memory conflicts`, `memory resolve` (and --keep-both) answer without a passphrase and
say what the same verbs say in-process; with the vault locked they ask for one as before."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import call_cli
from tests.helpers.daemon import daemon, unlock

CONFIG = "[daemon]\nidle_lock_minutes = 0\n[sync]\nbackground = false\n"


def _conflicted(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    ids = [call_cli(a, "--json", "memory", "add", "notes", "--title", title, "--text", "one").json["id"]
           for title in ("plan", "list")]
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0 and call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    for rid in ids:
        for home, text in ((a, "on a"), (b, "on b")):
            assert call_cli(home, "memory", "update", "notes", rid, "--text", text).code == 0
    for home in (a, b, a):
        assert call_cli(home, "sync", "notes").code == 0
    (a / "config.toml").write_text(CONFIG, encoding="utf-8")
    return a, b, ids


def test_conflicts_resolve_devices_and_forget_are_served_without_a_passphrase(tmp_path: Path) -> None:
    a, b, ids = _conflicted(tmp_path)
    in_process = call_cli(a, "--json", "memory", "conflicts", "notes").json
    locked = call_cli(a, "--json", "memory", "conflicts", "notes", passphrase=None)
    assert locked.code != 0  # no daemon, no passphrase: refused as before
    with daemon(a):
        assert unlock(a, "notes").code == 0
        served = call_cli(a, "--json", "memory", "conflicts", "notes", passphrase=None)
        assert served.code == 0 and served.json == in_process, served.stderr
        assert sorted(c["record_id"] for c in served.json["conflicts"]) == sorted(ids)
        text = call_cli(a, "memory", "conflicts", "notes", passphrase=None)
        assert text.code == 0 and "plan" in text.stdout

        devices = call_cli(a, "--json", "sync", "devices", "notes", passphrase=None)
        assert devices.code == 0, devices.stderr
        other = [d["device"] for d in devices.json["devices"] if not d["this_device"]]
        assert len(devices.json["devices"]) == 2 and len(other) == 1

        ended = call_cli(a, "--json", "memory", "resolve", "notes", ids[0], passphrase=None)
        assert ended.code == 0 and ended.json["ended"] == 1, ended.stderr
        both = call_cli(a, "--json", "memory", "resolve", "notes", ids[1], "--keep-both", passphrase=None)
        assert both.code == 0 and len(both.json["copies"]) == 1, both.stderr
        again = call_cli(a, "--json", "memory", "resolve", "notes", ids[0], passphrase=None)
        assert again.json["error"]["code"] == "no_conflict"  # the same error, through the daemon
        assert call_cli(a, "--json", "memory", "conflicts", "notes", passphrase=None).json["conflicts"] == []

        unknown = call_cli(a, "--json", "sync", "forget", "notes", "ffffffffffff", passphrase=None)
        assert unknown.json["error"]["code"] == "sync_unknown_device"
        gone = call_cli(a, "--json", "sync", "forget", "notes", other[0][:8], passphrase=None)
        assert gone.code == 0 and gone.json["forgotten"]["device"] == other[0], gone.stderr
        assert call_cli(a, "--json", "sync", "notes", passphrase=None).code == 0
    for home in (b, a):
        assert call_cli(home, "sync", "notes").code == 0
    assert call_cli(b, "--json", "memory", "conflicts", "notes").json["conflicts"] == []
