"""Two real daemons on two homes keep one vault in step through a folder in the background: on
a clock the test moves (`MEMORIES_TEST_CLOCK`), a note written on one reaches the other's
search, nothing syncs while a vault is locked, unlocking catches up, a failing target is the
last error `sync status` shows, and `memories sync VAULT` runs in the daemon without a passphrase."""

from __future__ import annotations

import time
from pathlib import Path

from tests.helpers.cli import call_cli
from tests.helpers.daemon import Clock, daemon, unlock, wait_until

CONFIG = "[daemon]\nidle_lock_minutes = 0\n[sync]\nevery_minutes = 15\n"


def _found(home: Path, words: str) -> list[str]:
    out = call_cli(home, "--json", "memory", "search", "notes", words, passphrase=None)
    return [r["title"] for r in out.json.get("results", [])] if out.code == 0 else []


def _heads(folder: Path) -> dict[str, bytes]:
    """Every device's head as the target holds it: a device has pushed once its head changed
    (its bundles come first, each under a temporary name until it is complete, the head last)."""
    return {p.parent.name: p.read_bytes() for p in folder.glob("d/*/head")}


def _status(home: Path) -> dict:
    return call_cli(home, "--json", "sync", "status", passphrase=None).json["targets"][0]


def test_background_sync_of_two_daemons(tmp_path: Path) -> None:
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    assert call_cli(a, "vault", "create", "notes").code == 0
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    assert call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    for home in (a, b):
        (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    clock = Clock(tmp_path / "clock")
    clock.catch_up()
    with daemon(a, env=clock.env), daemon(b, env=clock.env):
        for home in (a, b):
            assert unlock(home, "notes", env=clock.env).code == 0
        wait_until(lambda: _status(b)["last_sync"] is not None and _status(a)["last_sync"] is not None,
                   what="the sync at unlock")
        served = call_cli(a, "--json", "sync", "notes", passphrase=None)  # the daemon runs it: no passphrase
        assert served.code == 0 and served.json["vault_id"] == _status(a)["vault_id"], served.stderr
        pushed = _heads(folder)
        added = call_cli(a, "--json", "memory", "add", "notes", "--title", "Quince jam",
                         "--text", "Simmer the quinces with lemon peel.", passphrase=None)
        assert added.code == 0, added.stderr
        # A pushes seconds after the change (no clock move needed); B pulls at its next scheduled sync.
        wait_until(lambda: _heads(folder) != pushed, what="A's push after the change")
        def reached_b() -> bool:
            clock.advance(15 * 60)
            return _found(b, "quinces lemon") == ["Quince jam"]

        wait_until(reached_b, what="the note in B's search")

        assert call_cli(b, "--json", "lock", "notes", passphrase=None).code == 0
        before, pushed = _status(b)["last_sync"], _heads(folder)
        assert call_cli(a, "--json", "memory", "add", "notes", "--title", "Medlar tart",
                        "--text", "Bletted medlars with cream.", passphrase=None).code == 0
        wait_until(lambda: _heads(folder) != pushed, what="A's push of the second note")
        clock.advance(15 * 60)  # B's schedule comes due while it is locked
        time.sleep(3)  # the scheduler looks every second
        assert _status(b)["last_sync"] == before and _status(b)["last_error"] is None  # nothing ran, nothing failed
        assert unlock(b, "notes", env=clock.env).code == 0  # unlocking catches up at once, before its schedule
        wait_until(lambda: _found(b, "bletted medlars") == ["Medlar tart"], what="the catch-up at unlock")

        folder.rename(tmp_path / "Gone")  # the target vanishes: the error is kept, the daemon carries on
        clock.advance(15 * 60)
        wait_until(lambda: _status(a)["last_error"] is not None, what="the failed sync's error")

        def failures() -> int:
            log = (a / "daemon" / "daemon.log").read_text(encoding="utf-8")
            return sum("background sync of" in line and " failed: " in line for line in log.splitlines())

        failed = failures()
        assert failed >= 1
        # An edit beside a target that is away waits for the retry: it does not start a failing sync itself.
        assert call_cli(a, "--json", "memory", "add", "notes", "--title", "Sloe gin",
                        "--text", "Prick the sloes after the first frost.", passphrase=None).code == 0
        time.sleep(6)  # the change settles in 2 s and the scheduler looks every second
        assert failures() == failed
        clock.advance(60)  # the first retry comes a minute after the failure, edit or not
        wait_until(lambda: failures() > failed, what="the retry after the failure")
        log = (a / "daemon" / "daemon.log").read_text(encoding="utf-8")
        assert "Medlar" not in log and "Quince" not in log and "Sloe" not in log and str(folder) not in log


def test_an_edit_made_while_a_background_sync_runs_is_pushed_right_after_it(tmp_path: Path) -> None:
    """The sync at unlock is held after it read the vault; a note added then is not in that
    sync, and goes out seconds after it (the clock never moves, so not by the schedule)."""
    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    assert call_cli(a, "vault", "create", "notes").code == 0
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    assert call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    (a / "config.toml").write_text(CONFIG, encoding="utf-8")
    clock = Clock(tmp_path / "clock")
    clock.catch_up()
    held = tmp_path / "held"
    env = {**clock.env, "MEMORIES_TEST_HOLD_AT": f"sync-after-read:{held}"}
    with daemon(a, env=env):
        pushed = _heads(folder)
        assert unlock(a, "notes", env=env).code == 0
        wait_until(held.exists, what="the sync at unlock to read the vault")
        added = call_cli(a, "--json", "memory", "add", "notes", "--title", "Sloe gin",
                         "--text", "Prick the sloes and cover them with gin.", passphrase=None)
        assert added.code == 0, added.stderr
        held.unlink()  # the held sync commits and ends without the note
        wait_until(lambda: _heads(folder) != pushed, what="A's push of the note added during its sync")
    assert call_cli(b, "sync", "notes").code == 0
    found = call_cli(b, "--json", "memory", "search", "notes", "sloes gin")  # no daemon on B: the passphrase
    assert [r["title"] for r in found.json["results"]] == ["Sloe gin"], found.stderr


def test_a_lock_while_a_background_sync_runs_is_not_the_targets_last_error(tmp_path: Path) -> None:
    """The user locks the vault while its sync at unlock is held after reading it: the sync stops
    (the key is gone), and `sync status` does not show the lock as a failure of the target."""
    a, folder = tmp_path / "a", tmp_path / "Sync"
    folder.mkdir()
    assert call_cli(a, "vault", "create", "notes").code == 0
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0
    assert call_cli(a, "sync", "notes").code == 0
    (a / "config.toml").write_text(CONFIG, encoding="utf-8")
    held = tmp_path / "held"
    env = {"MEMORIES_TEST_HOLD_AT": f"sync-after-read:{held}"}
    with daemon(a, env=env):
        assert unlock(a, "notes", env=env).code == 0
        wait_until(held.exists, what="the sync at unlock to read the vault")
        assert call_cli(a, "--json", "lock", "notes", passphrase=None).code == 0
        held.unlink()
        wait_until(lambda: "sync: background sync of" in (a / "daemon" / "daemon.log").read_text(encoding="utf-8"),
                   what="the held sync to end")
        assert _status(a)["last_error"] is None
