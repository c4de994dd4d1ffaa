"""`memories mcp` answers every malformed line and never echoes a huge id.

Raw stdio against the real server process: a client that sends something that is not a
JSON-RPC message must get a JSON-RPC error (not silence until its own timeout), and the
session must go on working afterwards. The official SDK client then checks the server is
still a normal MCP server after the same abuse.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.helpers.cli import cli_env

SERVER = Path(__file__).resolve().parents[1] / "helpers" / "mcp_server.py"
HANG_GUARD = 60
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "1"}}}


@pytest.fixture(scope="module")
def home(module_homes) -> Path:
    return module_homes.make(note=("Lantern", "Lanterns float at dusk."))


class RawServer:
    """The server on raw pipes; every stdout line lands in a queue read with a hang guard."""

    def __init__(self, home: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, str(SERVER), "mcp", "--vault", "notes"], env=cli_env(home),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def answer(self) -> tuple[bytes, dict]:
        raw = self.lines.get(timeout=HANG_GUARD)  # queue.Empty here means the server never answered
        return raw, json.loads(raw)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(HANG_GUARD)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def raw(home):
    server = RawServer(home)
    server.send(json.dumps(INITIALIZE).encode())
    assert server.answer()[1]["id"] == 1
    server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    yield server
    server.close()


BAD_LINES = [
    (b"garbage", -32700, None),
    (b"[1,2,3]", -32600, None),
    (b"[]", -32600, None),
    (b'"just a string"', -32600, None),
    (b'{"jsonrpc": "2.0", "id": 7}', -32600, 7),                       # no method
    (b'{"jsonrpc": "2.0", "id": "r8", "method": 5}', -32600, "r8"),
    (b'{"jsonrpc": "1.0", "id": 9, "method": "ping"}', -32600, 9),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', -32600, None),  # the SDK took it for a notification
    (b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}', -32600, None),
    (b'{"jsonrpc": "2.0", "id": 10, "method": "ping"\xff}', -32700, None),  # not UTF-8
    (b'{"jsonrpc": "2.0", "id": 11, "method": "pi\xffng"}', -32700, None),
    (b'{"jsonrpc": "2.0", "method": 3}', -32600, None),                  # a malformed notification
]


def test_every_malformed_line_gets_a_json_rpc_error_and_the_session_goes_on(raw):
    for line, code, request_id in BAD_LINES:
        raw.send(line)
        _, reply = raw.answer()
        assert reply["error"]["code"] == code and reply["id"] == request_id, (line, reply)
    raw.send(b'{"jsonrpc": "2.0", "id": 99, "method": "ping"}')
    assert raw.answer()[1] == {"jsonrpc": "2.0", "id": 99, "result": {}}


def test_a_huge_id_is_not_echoed_and_a_huge_line_is_refused(raw):
    raw.send(json.dumps({"jsonrpc": "2.0", "id": "x" * 10_000_000, "method": "ping"}).encode())
    frame, reply = raw.answer()
    assert reply["id"] is None and reply["error"]["code"] == -32600 and len(frame) < 1000
    raw.send(json.dumps({"jsonrpc": "2.0", "id": "y" * 100_000, "method": "ping"}).encode())  # under the line cap
    frame, reply = raw.answer()
    assert reply["id"] is None and "at most 128 characters" in reply["error"]["message"] and len(frame) < 1000
    raw.send(b" " * (5 * 1024 * 1024) + b'{"jsonrpc": "2.0", "id": 5, "method": "ping"}')
    _, reply = raw.answer()
    assert reply["error"]["code"] == -32600 and "limited to 4 MiB" in reply["error"]["message"]
    raw.send(b'{"jsonrpc": "2.0", "id": "ok", "method": "ping"}')
    assert raw.answer()[1] == {"jsonrpc": "2.0", "id": "ok", "result": {}}


async def test_the_sdk_client_still_works_with_the_guarded_transport(home, tmp_path):
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "mcp", "--vault", "notes"],
                                   env=cli_env(home))
    with open(tmp_path / "stderr.log", "w+", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=HANG_GUARD) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert {"memory_retrieve", "memory_search", "memory_read"} <= tools
            result = await client.call_tool("memory_search", {"vault_id": "notes", "query": "lantern"})
            assert result.is_error is False and result.structured_content["records"][0]["title"] == "Lantern"
