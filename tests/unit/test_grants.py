"""MCP grants: durations, granted vaults only, expiry, revocation from another process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from memories_tui.access.grants import GrantedVault, GrantError, Grants
from memories_tui.errors import UsageError
from memories_tui.frontend.durations import parse_duration
from memories_tui.frontend.grant_records import revoke, revoked_at, running_servers

NOTES = GrantedVault("a1b2c3d4e5f60718", "notes")
WORK = GrantedVault("0f1e2d3c4b5a6978", "work")


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("text", "seconds"), [("30m", 1800), ("8h", 28800), ("7d", 604800), ("45s", 45),
                                               ("2w", 1209600), ("1h30m", 5400), (" 8H ", 28800)])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "8", "h", "8x", "-1h", "1.5h", "0m", "0h0m", "400d", "8h foo"])
def test_parse_duration_refuses_with_a_clear_message(text):
    with pytest.raises(UsageError) as caught:
        parse_duration(text)
    assert "duration" in caught.value.message


def test_only_granted_vaults_by_id_or_name(tmp_path):
    grants = Grants(tmp_path, [NOTES, WORK])
    assert grants.check("notes") == NOTES.vault_id
    assert grants.check(WORK.vault_id) == WORK.vault_id
    with pytest.raises(GrantError) as caught:
        grants.check("private-diary")
    assert caught.value.code == "grant_denied"
    assert "not granted" in caught.value.message and "notes" in caught.value.message


def test_expiry_ends_the_grant(tmp_path):
    clock = Clock()
    grants = Grants(tmp_path, [NOTES], expires_in=parse_duration("30m"), clock=clock)
    clock.now += 29 * 60
    assert grants.check("notes") == NOTES.vault_id
    clock.now += 60
    with pytest.raises(GrantError) as caught:
        grants.check("notes")
    assert caught.value.code == "grant_expired" and "expired" in caught.value.message


def test_revocation_from_another_process_ends_only_that_vault(tmp_path):
    grants = Grants(tmp_path, [NOTES, WORK])
    code = ("import sys; from pathlib import Path; from memories_tui.frontend.grant_records import revoke; "
            "revoke(Path(sys.argv[1]), sys.argv[2])")
    subprocess.run([sys.executable, "-c", code, str(tmp_path), NOTES.vault_id], check=True)
    with pytest.raises(GrantError) as caught:
        grants.check("notes")
    assert caught.value.code == "grant_revoked"
    assert grants.check("work") == WORK.vault_id
    assert (tmp_path / "mcp").stat().st_mode & 0o777 == 0o700


def test_revocation_before_start_does_not_touch_a_later_server(tmp_path):
    clock = Clock()
    revoke(tmp_path, NOTES.vault_id, now=clock.now - 5)
    assert Grants(tmp_path, [NOTES], clock=clock).check("notes") == NOTES.vault_id
    assert revoked_at(tmp_path, NOTES.vault_id) == clock.now - 5


def test_a_revocation_at_exactly_the_start_ends_the_grant(tmp_path):
    """Same second as the start (a revoke and a server start in one clock tick): revoked, since
    the server may have been started before the revoke in that tick."""
    clock = Clock()
    grants = Grants(tmp_path, [NOTES], clock=clock)
    revoke(tmp_path, NOTES.vault_id, now=grants.started_at)
    with pytest.raises(GrantError) as caught:
        grants.check("notes")
    assert caught.value.code == "grant_revoked"


def test_revoke_refuses_a_path_as_vault_id(tmp_path):
    with pytest.raises(UsageError):
        revoke(tmp_path, "../../etc/passwd")


def test_work_finishing_after_revocation_returns_nothing(tmp_path):
    grants = Grants(tmp_path, [NOTES])
    started, release = threading.Event(), threading.Event()

    def slow_search(vault_id: str) -> str:
        started.set()
        release.wait(5)
        return "result that must not be delivered"

    outcome: list[object] = []
    worker = threading.Thread(target=lambda: _capture(outcome, grants.run, "notes", slow_search))
    worker.start()
    assert started.wait(5)
    revoke(tmp_path, NOTES.vault_id)
    release.set()
    worker.join(5)
    assert len(outcome) == 1 and isinstance(outcome[0], GrantError)
    assert outcome[0].code == "grant_revoked"


def test_work_finishing_after_expiry_returns_nothing(tmp_path):
    clock = Clock()
    grants = Grants(tmp_path, [NOTES], expires_in=60, clock=clock)

    def slow(vault_id: str) -> str:
        clock.now += 61  # the grant runs out while the work is in flight
        return "late"

    with pytest.raises(GrantError) as caught:
        grants.run("notes", slow)
    assert caught.value.code == "grant_expired"


def test_work_inside_the_grant_is_returned(tmp_path):
    grants = Grants(tmp_path, [NOTES])
    assert grants.run("notes", lambda vault_id: f"ok {vault_id}") == f"ok {NOTES.vault_id}"


def test_running_servers_lists_live_grants(tmp_path):
    grants = Grants(tmp_path, [NOTES, WORK])
    path = grants.register()
    assert path.is_file()
    [record] = running_servers(tmp_path)
    assert record.pid == os.getpid() and set(record.vaults) == {NOTES.vault_id, WORK.vault_id}
    revoke(tmp_path, NOTES.vault_id)
    assert running_servers(tmp_path)[0].vaults == [WORK.vault_id]
    assert running_servers(tmp_path, NOTES.vault_id) == []
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    grants.register(pid=dead.pid)
    assert [r.pid for r in running_servers(tmp_path)] == [os.getpid()]
    grants.unregister()
    assert running_servers(tmp_path) == []


def _capture(outcome: list[object], fn, *args) -> None:
    try:
        outcome.append(fn(*args))
    except GrantError as exc:
        outcome.append(exc)
