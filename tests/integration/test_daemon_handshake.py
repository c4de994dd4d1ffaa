"""The version handshake with a real daemon: a client of another build (faked through
MEMORIES_TEST_BUILD, which a daemon it starts inherits) is told to run `memories daemon restart`
while the daemon holds an unlocked vault, and restarts a daemon that holds none transparently;
`memories daemon restart` stops whatever build runs and starts this one."""

from __future__ import annotations

from pathlib import Path

import pytest

from memories_tui import __version__
from memories_tui.daemon import connect
from memories_tui.frontend.daemon_socket import API_FINGERPRINT
from tests.helpers.cli import run_cli
from tests.helpers.daemon import daemon, holder_pid, unlock

OTHER = {"MEMORIES_TEST_BUILD": "9.9.9"}


@pytest.fixture
def home(homes) -> Path:
    return homes.make()


def hello(home: Path) -> dict:
    client = connect(home)
    assert client is not None
    return client.call("hello")


def test_a_client_of_another_build_is_told_to_restart_while_a_vault_is_unlocked(home: Path) -> None:
    assert unlock(home, "notes").code == 0
    pid = holder_pid(home)
    other = run_cli(home, "--json", "memory", "list", "notes", passphrase=None, env=OTHER)
    assert other.code != 0, other.stdout
    error = other.json["error"]
    assert error["code"] == "daemon_version_mismatch", error
    assert error["message"] == f"The running daemon is {__version__}, this is 9.9.9: run `memories daemon restart`."
    other_api = {"MEMORIES_TEST_BUILD": f"{__version__}:0123456789abcdef"}
    same_version = run_cli(home, "--json", "daemon", "status", passphrase=None, env=other_api)
    assert same_version.json["error"]["code"] == "daemon_version_mismatch"
    assert "another build" in same_version.json["error"]["message"]
    for verb in (("memory", "list", "notes"), ("memory", "add", "notes", "--title", "Rye", "--text", "Not written.")):
        served_line = run_cli(home, "--json", *verb, passphrase=None, env=other_api)  # a command line the daemon runs
        assert served_line.json["error"]["code"] == "daemon_version_mismatch", served_line.stdout
    assert run_cli(home, "--json", "memory", "list", "notes", passphrase=None).json["records"] == []  # nothing added
    assert holder_pid(home) == pid  # the unlocked vault is not dropped behind the user's back
    assert run_cli(home, "--json", "daemon", "status", passphrase=None).json["vaults"][0]["name"] == "notes"


def test_a_daemon_holding_no_unlocked_vault_restarts_for_the_newer_client(home: Path) -> None:
    with daemon(home) as old_pid:
        served = run_cli(home, "--json", "daemon", "status", passphrase=None, env=OTHER)
        assert served.code == 0, served.stdout + served.stderr
        assert served.json["running"] is True and served.json["pid"] != old_pid
        assert hello(home)["version"] == "9.9.9"
        listed = run_cli(home, "--json", "memory", "list", "notes", env=OTHER)  # served as before: in-process
        assert listed.code == 0, listed.stdout
        assert holder_pid(home) == served.json["pid"]


def test_daemon_restart_locks_and_starts_this_build(home: Path) -> None:
    assert unlock(home, "notes", env=OTHER).code == 0  # a daemon of "another version" holds the vault
    old_pid = holder_pid(home)
    told = run_cli(home, "--json", "memory", "list", "notes", passphrase=None)
    assert told.json["error"]["message"] == f"The running daemon is 9.9.9, this is {__version__}: run `memories " \
                                            "daemon restart`."
    restarted = run_cli(home, "daemon", "restart", passphrase=None)
    assert restarted.code == 0, restarted.stderr
    assert "Locked now: notes; unlock them again with `memories unlock VAULT_ID`." in restarted.stdout
    assert holder_pid(home) != old_pid
    assert hello(home)["version"] == __version__
    assert hello(home)["api"] == API_FINGERPRINT, "the served API changed: set frontend/daemon_socket.API_FINGERPRINT to this"
    status = run_cli(home, "--json", "daemon", "status", passphrase=None)
    assert status.json["vaults"] == []
    again = run_cli(home, "--json", "daemon", "restart", passphrase=None)
    assert again.json["restarted"] is True and again.json["locked"] == []
    helped = run_cli(home, "daemon", "restart", "--help", passphrase=None)
    assert "upgrade" in helped.stdout and "memories unlock VAULT_ID" in helped.stdout


def test_the_clients_fingerprint_is_what_this_build_serves(tmp_path: Path) -> None:
    """The constant the client sends without importing the engine, against the value a daemon of
    this tree computes from what it serves (no daemon started: the failure names the new value)."""
    from memories_tui.daemon.lifecycle import SocketHost
    from memories_tui.engine import Engine

    engine = Engine.open(tmp_path / "home")
    try:
        served = SocketHost(engine, "daemon").service.api
    finally:
        engine.close()
    assert served == API_FINGERPRINT, f"the served API changed: set frontend/daemon_socket.API_FINGERPRINT = {served!r}"
