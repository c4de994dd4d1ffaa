"""`memories daemon status` against a real daemon: who it is, what it holds and for how long,
which processes use it and what the AI clients were granted; and its log, which has verbs,
timings and error codes but never a query, a note's text or a passphrase."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from memories_tui.daemon import DaemonClient
from tests.helpers.cli import run_cli
from tests.helpers.daemon import holder_pid, stop, unlock
from tests.helpers.vaults import PASS


@pytest.fixture
def home(homes) -> Path:
    return homes.make(vaults=("notes", "other"))


def test_status_names_the_daemon_its_vaults_clients_and_grants(home: Path) -> None:
    assert unlock(home, "notes", "--for", "10m").code == 0
    vault_id = run_cli(home, "--json", "vault", "list", passphrase=None).json["vaults"]
    vault_id = next(v["vault_id"] for v in vault_id if v["name"] == "notes")
    ai_client = DaemonClient(home, kind="mcp")  # this test process, as an MCP server would talk
    ai_client.call("mcp_open", {"vaults": [vault_id], "expires_in": 7200})

    shown = run_cli(home, "--json", "daemon", "status", passphrase=None)
    assert shown.code == 0, shown.stderr
    status = shown.json
    assert status["running"] is True and status["kind"] == "daemon" and status["pid"] == holder_pid(home)
    assert status["uptime_seconds"] >= 0 and status["requests_served"] >= 3
    assert status["rss_bytes"] > 10 * 2**20 and status["model_loaded"] is False
    [held] = status["vaults"]
    assert (held["name"], held["vault_id"]) == ("notes", vault_id)
    assert 500 <= held["seconds_left"] <= 600 and held["expires_at"] is not None
    # the unlock and list commands have exited and the asking one is left out: only this process is left
    [me] = status["clients"]
    assert (me["pid"], me["kind"], me["calls"], me["last_method"], me["running"]) == (
        os.getpid(), "mcp", 1, "mcp_open", None)
    [grant] = status["grants"]
    assert (grant["pid"], grant["vaults"], grant["names"]) == (os.getpid(), [vault_id], ["notes"])
    assert grant["expired"] is False and grant["revoked"] == []
    assert grant["expires_at"] == pytest.approx(grant["started_at"] + 7200)

    text = run_cli(home, "daemon", "status", passphrase=None).stdout
    assert f"pid {status['pid']}" in text and "MiB resident" in text and "no model loaded" in text
    assert re.search(r"notes\s+.*\(--for\)", text), text
    assert re.search(rf"{os.getpid()}\s+AI client \(MCP\)\s+1\s+mcp_open", text), text
    assert "active" in text

    assert run_cli(home, "mcp", "revoke", "notes", passphrase=None).code == 0
    revoked = run_cli(home, "--json", "daemon", "status", passphrase=None).json
    assert revoked["grants"][0]["revoked"] == [vault_id]
    assert "revoked" in run_cli(home, "daemon", "status", passphrase=None).stdout


def test_the_log_has_verbs_timings_and_codes_but_no_content(home: Path, tmp_path: Path) -> None:
    secret_title, secret_body, query = "Quokkafinch", "zanzibarite lullaby marmalade", "zanzibarite"
    assert unlock(home, "notes").code == 0
    added = run_cli(home, "--json", "memory", "add", "notes", "--title", secret_title, "--text", secret_body,
                    passphrase=None)
    assert added.code == 0, added.stderr
    for argv in (["rag", "search", "notes", query], ["memory", "search", "notes", query],
                 ["rag", "ask", "notes", f"What about {query}?"], ["memory", "read", "notes", "nosuchrecord"]):
        run_cli(home, "--json", *argv, passphrase=None)
    wrong = run_cli(home, "--json", "unlock", "other", passphrase="hunter2-not-it")
    assert wrong.json["error"]["code"] == "wrong_passphrase"
    stop(home)
    log = (home / "daemon" / "daemon.log").read_text(encoding="utf-8")
    for line in ("vault.add_record ok", "vault.search ok", "vault.memory_search ok", "vault.ask ok",
                 "vault.read_record not_found", "unlock wrong_passphrase"):
        assert re.search(re.escape(line) + r" \d+\.\d{3}s", log), (line, log)
    for secret in (secret_title, "zanzibarite", "lullaby", "marmalade", "nosuchrecord", PASS, "hunter2"):
        assert secret.casefold() not in log.casefold(), secret
    assert "Traceback" not in log
