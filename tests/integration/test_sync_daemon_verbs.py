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
        read = call_cli(a, "--json", "memory", "read", "notes", ids[0], passphrase=None)
        assert read.code == 0 and read.json["conflict"] is True, read.stderr

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


def test_sync_add_is_served_without_a_passphrase_and_asks_one_after_a_passwd(tmp_path: Path) -> None:
    """The join record wraps the vault key under the passphrase: the resident engine wrapped it
    at unlock, so `sync add` needs none. A `vault passwd` that could not reach the target says
    to run `sync add` again; the daemon's wrap is of the old passphrase by then, so the CLI is
    told, asks, and the new one goes to the target."""
    a, b, c, folder = (tmp_path / name for name in ("a", "b", "c", "Sync"))
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    call_cli(a, "memory", "add", "notes", "--title", "carried", "--text", "through the daemon")
    (a / "config.toml").write_text(CONFIG, encoding="utf-8")
    new = "a new passphrase for notes"
    (tmp_path / "new").write_text(new + "\n", encoding="utf-8")
    with daemon(a):
        assert unlock(a, "notes").code == 0
        added = call_cli(a, "--json", "sync", "add", "notes", str(folder), passphrase=None)
        assert added.code == 0 and added.json["url"] == str(folder), added.stdout + added.stderr
        assert call_cli(a, "sync", "notes", passphrase=None).code == 0
        assert call_cli(b, "sync", "join", str(folder)).code == 0  # the wrap made at unlock opens with it
        assert [r["title"] for r in call_cli(b, "--json", "memory", "list", "notes").json["records"]] == ["carried"]

        folder.rename(tmp_path / "away")  # the disk is not mounted while the passphrase changes
        changed = call_cli(a, "--json", "vault", "passwd", "notes", "--new-passphrase-file", str(tmp_path / "new"))
        assert changed.code == 0 and changed.json["changed"], changed.stdout  # changed; only the target waits
        assert changed.json["warning"]["code"] == "sync_join_record_stale", changed.stdout
        (tmp_path / "away").rename(folder)
        asked = call_cli(a, "--json", "sync", "add", "notes", str(folder), passphrase=None)
        assert asked.json["error"]["code"] == "usage_error" and "No passphrase given" in asked.stdout  # it asked
        again = call_cli(a, "--json", "sync", "add", "notes", str(folder), passphrase=new)
        assert again.code == 0, again.stdout + again.stderr
        assert call_cli(a, "sync", "notes", passphrase=None).code == 0
    assert call_cli(c, "--json", "sync", "join", str(folder)).json["error"]["code"] == "wrong_passphrase"
    joined = call_cli(c, "sync", "join", str(folder), passphrase=new)
    assert joined.code == 0, joined.stdout + joined.stderr
