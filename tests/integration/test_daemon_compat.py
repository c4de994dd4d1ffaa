"""A client and a daemon of different versions: a daemon left running across an upgrade can
answer in a shape this version does not know. The client must say so and how to restart it
(`daemon_incompatible`), never fail with an internal error. The daemon here is a real socket
server that speaks the protocol's envelope with older result shapes."""

from __future__ import annotations

import json
import os
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.vaults import home_with_a_note


class OlderDaemon(BaseHTTPRequestHandler):
    """Every vault is "unlocked"; every other answer is a result this version cannot read. Like
    a daemon from before the version handshake, it names no version in its answers."""

    protocol_version = "HTTP/1.0"
    seen: list[str] = []  # the methods asked, in order

    def do_POST(self) -> None:  # noqa: N802
        self.seen.append(self.path.rsplit("/", 1)[-1])
        args = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
        if self.path.endswith("/vault_state"):
            result: object = {"unlocked": True, "vault_id": args.get("vault"), "name": args.get("vault")}
        else:
            result = {"pid": "one", "uptime": "long", "vaults": "notes"}  # renamed and retyped fields
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.end_headers()
        self.wfile.write(json.dumps({"result": result}).encode() + b"\n")

    def log_message(self, *args: object) -> None:
        pass


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


@contextmanager
def older_daemon(home: Path) -> Iterator[None]:
    folder = home / "daemon"
    folder.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        server = _Server(f"/proc/self/fd/{fd}/daemon.sock", OlderDaemon)
    finally:
        os.close(fd)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("verb", [("daemon", "status"), ("daemon", "stop"), ("rag", "search", "notes", "starter")])
def test_an_answer_of_another_shape_says_to_restart_the_daemon(tmp_path: Path, verb: tuple[str, ...]) -> None:
    home = home_with_a_note(tmp_path / "home", "Sourdough", "Feed the starter twice a day.")
    with older_daemon(home):
        result = run_cli(home, "--json", *verb, passphrase=None)
    assert result.code != 0, result.stdout
    error = result.json["error"]
    assert error["code"] == "daemon_incompatible", error
    assert "memories daemon restart" in error["message"]


def test_a_daemon_from_before_the_handshake_is_told_apart_before_it_is_given_work(tmp_path: Path) -> None:
    home = home_with_a_note(tmp_path / "home", "Sourdough", "Feed the starter twice a day.")
    OlderDaemon.seen.clear()
    with older_daemon(home):
        result = run_cli(home, "--json", "memory", "add", "notes", "--title", "Rye", "--text", "x", passphrase=None)
    error = result.json["error"]
    assert error["code"] == "daemon_incompatible", error
    assert error["message"].startswith("The running daemon is older than this version"), error
    # the add never reached it (the quick way's `cli_run` came first: a method such a daemon has not)
    assert [m for m in OlderDaemon.seen if m != "cli_run"] == ["vault_state"]
