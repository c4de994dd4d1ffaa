"""A daemon that stops answering does not hang its clients; one that works long keeps them.

A SIGSTOPped daemon still has its socket accepted by the kernel, so only a silence limit on the
client side ends the wait: the CLI and an MCP server's call each give up with a clear one-line
error (no traceback) and the daemon serves again once it resumes. A call that is long but alive
(a generated answer the model holds back) outlasts several silence limits, carried by the
daemon's heartbeats. Real daemon subprocesses on a real socket; the held answer is released
only once a second call on the same socket has seen heartbeats for longer than the CLI's limit.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from memories_tui.errors import MemoriesError
from tests.helpers.cli import CHEAP_CLI, cli_env, run_cli
from tests.helpers.daemon import connect_unix, daemon, stop, unlock
from tests.helpers.model_server import ModelServer

SILENCE = {"MEMORIES_DAEMON_TIMEOUT": "1"}


def make_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    assert run_cli(home, "vault", "create", "notes").code == 0
    assert run_cli(home, "memory", "add", "notes", "--title", "Bread", "--text", "Knead the dough twice.").code == 0
    return home


def test_a_stopped_daemon_gives_every_client_a_clear_error_not_a_hang(tmp_path: Path, monkeypatch) -> None:
    home = make_home(tmp_path)
    with daemon(home) as pid:
        assert unlock(home, "notes").code == 0
        vault_id = run_cli(home, "--json", "rag", "status", "notes", passphrase=None).json["vault_id"]
        os.kill(pid, signal.SIGSTOP)
        try:
            as_json = run_cli(home, "--json", "rag", "search", "notes", "dough", passphrase=None, env=SILENCE)
            text = run_cli(home, "memory", "list", "notes", passphrase=None, env=SILENCE)
            monkeypatch.setenv("MEMORIES_DAEMON_TIMEOUT", "1")
            from memories_tui.access.grants import GrantedVault
            from memories_tui.mcp.daemon_tools import DaemonTools

            tools = DaemonTools(home, [GrantedVault(vault_id, "notes")], expires_in=None)
            with pytest.raises(MemoriesError) as mcp_call:
                tools.search(vault_id, "dough")
        finally:
            os.kill(pid, signal.SIGCONT)
        assert as_json.code == 1 and as_json.json["error"]["code"] == "daemon_not_answering"
        assert f"daemon (pid {pid}) has not answered" in as_json.json["error"]["message"]
        assert f"kill -CONT {pid}" in as_json.json["error"]["message"] and "--no-daemon" in as_json.json["error"]["message"]
        assert text.code == 1 and text.stdout == ""
        assert len(text.stderr.strip().splitlines()) == 1 and "has not answered" in text.stderr
        assert "Traceback" not in text.stderr + as_json.stderr
        assert mcp_call.value.code == "daemon_not_answering"
        again = run_cli(home, "--json", "rag", "search", "notes", "dough", passphrase=None, env=SILENCE)
        assert again.code == 0 and again.json["results"][0]["title"] == "Bread"  # resumed: served as before
        tools.close()


def heartbeats(home: Path, method: str, args: dict[str, object], limit: float, count: int) -> socket.socket:
    """A raw call naming `limit` as its silence limit, read until `count` heartbeat lines came."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(120)
    connect_unix(sock, home / "daemon" / "daemon.sock")
    body = json.dumps(args).encode()
    sock.sendall(f"POST /v1/{method} HTTP/1.0\r\nContent-Length: {len(body)}\r\nX-Memories-Silence-Limit: "
                 f"{limit}\r\n\r\n".encode() + body)
    reader = sock.makefile("rb")
    seen = 0
    while seen < count:
        line = reader.readline()
        assert line, "the daemon closed the call"
        seen += line.strip() == b'{"alive":true}'
    return sock


def test_a_long_call_is_not_cut_while_the_daemon_is_alive(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    with ModelServer() as srv:
        asked, release = srv.hold_chat()
        (home / "config.toml").write_text(srv.generation_toml())  # before the daemon reads it
        try:
            assert unlock(home, "notes").code == 0  # starts the daemon
            cli = subprocess.Popen([sys.executable, str(CHEAP_CLI), "--json", "rag", "ask", "notes", "How is bread made?"],
                                   env=cli_env(home, None, **SILENCE), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            assert asked.wait(120), "the daemon never asked the model"
            # heartbeats every 1 s on this call: 4 of them is over 3 s, three times the CLI's limit
            raw = heartbeats(home, "vault.ask", {"vault_id": "notes", "question": "Bread?"}, limit=4, count=4)
            assert cli.poll() is None  # still waiting, carried by its own heartbeats
            release.set()
            out, err = cli.communicate(timeout=120)
            raw.close()
        finally:
            release.set()
            stop(home)
    assert cli.returncode == 0, err
    assert json.loads(out)["status"] in ("answered", "extractive")
