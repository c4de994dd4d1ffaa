"""`vault passwd` on one device reaches the devices already joined: at their next sync they take
the new wrap of the same vault key from the target (sealed with the vault key, so only a device
holding it could have written it), say so, and from then on unlock with the new passphrase only.
An older join record put back by the target, or one whose wrap was swapped, is not taken."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import call_cli
from tests.helpers.vaults import PASS


def _two_devices(tmp_path: Path) -> tuple[Path, Path, Path]:
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    assert call_cli(a, "vault", "create", "notes").code == 0
    assert call_cli(a, "memory", "add", "notes", "--title", "Rowan jelly", "--text", "Rowan berries, apples.").code == 0
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    assert call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    return a, b, folder


def _passwd(home: Path, tmp_path: Path, old: str, new: str) -> None:
    file = tmp_path / "new-passphrase.txt"
    file.write_text(new + "\n", encoding="utf-8")
    changed = call_cli(home, "--json", "vault", "passwd", "notes", "--new-passphrase-file", str(file), passphrase=old)
    assert changed.code == 0, changed.stderr


def _error(home: Path, passphrase: str) -> str | None:
    out = call_cli(home, "--json", "memory", "list", "notes", passphrase=passphrase)
    return out.json["error"]["code"] if out.code else None


def test_a_passphrase_changed_on_one_device_is_taken_by_the_other_at_its_next_sync(tmp_path: Path) -> None:
    a, b, _folder = _two_devices(tmp_path)
    _passwd(a, tmp_path, PASS, "quince orchard lantern")
    assert _error(b, PASS) is None  # nothing reached b yet: its file still takes the passphrase it had

    synced = call_cli(b, "--json", "sync", "notes", passphrase=PASS)
    assert synced.code == 0 and synced.json["passphrase_adopted"] is True, synced.stderr
    assert _error(b, PASS) == "wrong_passphrase"
    assert _error(b, "quince orchard lantern") is None  # (this unlock re-wraps it in the file's own form)
    assert _error(b, "quince orchard lantern") is None
    again = call_cli(b, "--json", "sync", "notes", passphrase="quince orchard lantern")
    assert again.code == 0 and again.json["passphrase_adopted"] is False
    status = call_cli(b, "--json", "sync", "status", passphrase=None).json["targets"][0]
    assert status["passphrase_adopted"] is not None
    text = call_cli(b, "sync", "status", passphrase=None).stdout
    assert "old one no longer unlocks it" in text
    # and the device that changed it keeps syncing with it
    assert call_cli(a, "--json", "sync", "notes", passphrase="quince orchard lantern").json["passphrase_adopted"] is False


def test_an_older_join_record_put_back_or_a_swapped_wrap_is_not_taken(tmp_path: Path) -> None:
    import json

    a, b, folder = _two_devices(tmp_path)
    _passwd(a, tmp_path, PASS, "second passphrase here")
    second = (folder / "key").read_bytes()
    _passwd(a, tmp_path, "second passphrase here", "third passphrase here")
    third = (folder / "key").read_bytes()

    # the newest seal over an older wrap: b must not take the second passphrase's wrap
    swapped = {**json.loads(third), **{k: json.loads(second)[k] for k in ("kdf", "salt", "wrapped")}}
    (folder / "key").write_bytes(json.dumps(swapped).encode())
    out = call_cli(b, "--json", "sync", "notes", passphrase=PASS)
    assert out.code == 0 and out.json["passphrase_adopted"] is False, out.stderr
    assert _error(b, "second passphrase here") == "wrong_passphrase" and _error(b, PASS) is None
    c = tmp_path / "c"
    assert call_cli(c, "sync", "join", str(folder), passphrase="third passphrase here").code != 0

    (folder / "key").write_bytes(third)
    assert call_cli(b, "--json", "sync", "notes", passphrase=PASS).json["passphrase_adopted"] is True
    (folder / "key").write_bytes(second)  # the target shows an older record (its seal is genuine)
    replayed = call_cli(b, "--json", "sync", "notes", passphrase="third passphrase here")
    assert replayed.code == 0 and replayed.json["passphrase_adopted"] is False, replayed.stderr
    assert _error(b, "third passphrase here") is None and _error(b, "second passphrase here") == "wrong_passphrase"


def test_sync_add_on_a_device_with_the_old_passphrase_takes_the_new_one_instead_of_overwriting_it(
        tmp_path: Path) -> None:
    a, b, folder = _two_devices(tmp_path)
    _passwd(a, tmp_path, PASS, "newer passphrase set on a")
    added = call_cli(b, "sync", "add", "notes", str(folder), passphrase=PASS)
    assert added.code == 0 and "changed on another device" in added.stdout, added.stderr
    c = tmp_path / "c"
    assert call_cli(c, "sync", "join", str(folder), passphrase="newer passphrase set on a").code == 0
    assert _error(b, "newer passphrase set on a") is None
