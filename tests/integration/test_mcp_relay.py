"""`memories mcp` relaying its stdio to an MCP session the daemon hosts.

With a daemon running, the process an AI client starts copies frames to the daemon, which
runs the MCP server itself: that process never imports the MCP SDK. Driven by the official
`mcp` client where a client is needed, and by raw JSON-RPC on the pipes where the test
needs the process itself (import record, SIGTERM, a kill mid-call).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from memories_tui.daemon import connect as connect_daemon
from tests.helpers.cli import run_cli
from tests.helpers.daemon import holder_pid, unlock, wait_until
from tests.helpers.model_server import ModelServer
from tests.helpers.vaults import create_vault

SERVER = Path(__file__).resolve().parents[1] / "helpers" / "mcp_server.py"
TEXT = "Feed the sourdough starter twice a day with rye flour. 酸種麵包的酵頭每天餵兩次。"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "relay-test", "version": "1"}}}


@pytest.fixture
def home(homes) -> Path:
    return homes.make(note=("Sourdough", TEXT))


def _env(**extra: str) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIES_")}
    environ.update(PYTHONIOENCODING="utf-8", **extra)  # no passphrase of any kind
    return environ


@asynccontextmanager
async def mcp_client(home: Path, *args: str, env: dict[str, str] | None = None):
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "mcp", "--home", str(home), *args],
                                   env=_env(**(env or {})))
    with open(home.parent / f"mcp-stderr-{time.monotonic_ns()}.log", "w+", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
            yield client


class RawRelay:
    """`python -m memories_tui mcp` as shipped, on raw pipes (stderr kept in a file)."""

    def __init__(self, home: Path, *python_flags: str) -> None:
        self.stderr_path = home.parent / f"relay-stderr-{time.monotonic_ns()}.log"
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen([sys.executable, *python_flags, "-m", "memories_tui", "mcp", "--home",
                                          str(home), "--vault", "notes"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=err, env=_env())

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self) -> dict:
        assert self.proc.stdout is not None
        return json.loads(self.proc.stdout.readline())

    def initialize(self) -> dict:
        self.send(INITIALIZE)
        answer = self.answer()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


def _imported(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_the_relay_never_imports_the_mcp_sdk_and_the_daemon_answers(home: Path) -> None:
    assert unlock(home, "notes").code == 0
    relay = RawRelay(home, "-X", "importtime")
    answer = relay.initialize()
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "memories"
    relay.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "memory_search", "arguments": {"vault_id": "notes", "query": "sourdough"}}})
    found = relay.answer()
    assert found["id"] == 2 and found["result"]["isError"] is False
    assert found["result"]["structuredContent"]["records"][0]["title"] == "Sourdough"
    relay.proc.stdin.close()  # type: ignore[union-attr]
    assert relay.proc.wait(60) == 0
    imported = _imported(relay.stderr)
    assert "memories_tui.mcp.relay" in imported  # the relay ran, and the import record is complete
    heavy = sorted(m for m in imported if m.split(".")[0] in ("mcp", "mcp_types", "pydantic", "anyio", "httpx"))
    assert heavy == []
    assert not any(m.startswith("memories_tui.engine.") or m == "memories_tui.cli.parser" for m in imported)


def test_without_a_daemon_the_server_runs_in_process_as_before(home: Path) -> None:
    relay = RawRelay(home, "-X", "importtime")  # no daemon, no passphrase: the in-process server
    answer = relay.initialize()
    assert answer["result"]["serverInfo"]["name"] == "memories"
    relay.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "memory_search", "arguments": {"vault_id": "notes", "query": "sourdough"}}})
    text = relay.answer()["result"]["content"][0]["text"]
    assert "[vault_locked]" in text and "memories unlock notes" in text
    relay.proc.stdin.close()  # type: ignore[union-attr]
    assert relay.proc.wait(60) == 0
    assert "mcp.server" in {m.split(".mcpserver")[0] for m in _imported(relay.stderr)}


async def test_two_relayed_sessions_keep_their_own_grants(home: Path) -> None:
    create_vault(home, "work")
    assert run_cli(home, "memory", "add", "work", "--title", "Roadmap", "--text", "Ship the sourdough app.").code == 0
    assert unlock(home, "notes").code == 0 and unlock(home, "work").code == 0
    async with mcp_client(home, "--vault", "notes") as notes, mcp_client(home, "--vault", "work") as work:
        for _ in range(2):  # interleaved on the one server the daemon built per set of vaults
            mine = await notes.call_tool("memory_search", {"vault_id": "notes", "query": "sourdough"})
            assert mine.is_error is False and mine.structured_content["records"][0]["title"] == "Sourdough"
            theirs = await work.call_tool("memory_search", {"vault_id": "notes", "query": "sourdough"})
            assert theirs.is_error is True and "[grant_denied]" in theirs.content[0].text
            own = await work.call_tool("memory_search", {"vault_id": "work", "query": "sourdough"})
            assert own.structured_content["records"][0]["title"] == "Roadmap"
        held = connect_daemon(home).call("status")["grants"]  # type: ignore[union-attr]
        assert sorted(len(g["vaults"]) for g in held) == [1, 1]


async def test_a_daemon_of_another_build_is_not_relayed_to_and_says_to_restart(home: Path) -> None:
    assert unlock(home, "notes").code == 0  # it holds a vault: not restarted behind the user's back
    async with mcp_client(home, "--vault", "notes", env={"MEMORIES_TEST_BUILD": "9.9.9"}) as client:
        result = await client.call_tool("memory_search", {"vault_id": "notes", "query": "sourdough"})
        assert result.is_error is True
        text = result.content[0].text
        assert "[daemon_version_mismatch]" in text and "memories daemon restart" in text
    assert connect_daemon(home).call("status")["grants"] == []  # type: ignore[union-attr]


def test_sigterm_ends_the_relay_promptly_and_removes_its_record(home: Path) -> None:
    assert unlock(home, "notes").code == 0
    relay = RawRelay(home)
    relay.initialize()
    wait_until(lambda: run_cli(home, "--json", "mcp", "status", passphrase=None).json["servers"] != [],
               what="the relay's record")
    relay.proc.send_signal(signal.SIGTERM)  # idle in a blocking read of stdin
    assert relay.proc.wait(30) == 0
    assert "Traceback" not in relay.stderr
    assert run_cli(home, "--json", "mcp", "status", passphrase=None).json["servers"] == []


def _held_ask(home: Path, srv: ModelServer) -> RawRelay:
    """A relay whose memory_ask waits in the daemon for the (held) answer service."""
    (home / "config.toml").write_text(srv.generation_toml(api_key_env="GEN_KEY"))
    assert unlock(home, "notes", env={"GEN_KEY": "key-of-the-daemon"}).code == 0
    relay = RawRelay(home)
    relay.initialize()
    relay.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "memory_ask", "arguments": {"vault_id": "notes", "question": "How often to feed?"}}})
    return relay


async def test_a_client_killed_mid_call_leaves_the_daemon_serving(home: Path) -> None:
    with ModelServer() as srv:
        asked, release = srv.hold_chat()
        relay = _held_ask(home, srv)
        assert asked.wait(120)
        relay.proc.kill()
        relay.proc.wait(60)
        release.set()  # the answer now goes nowhere
        wait_until(lambda: connect_daemon(home).call("status")["grants"] == [],  # type: ignore[union-attr]
                   what="the session to close")
        async with mcp_client(home, "--vault", "notes") as client:
            found = await client.call_tool("memory_retrieve", {"vault_id": "notes", "query": "sourdough"})
            assert found.is_error is False and found.structured_content["chunks"][0]["text"] == TEXT
    log = (home / "daemon" / "daemon.log").read_text(encoding="utf-8")
    assert "Traceback" not in log and "unexpected" not in log


def test_the_daemon_going_away_mid_call_is_answered_not_hung(home: Path) -> None:
    with ModelServer() as srv:
        asked, release = srv.hold_chat()
        relay = _held_ask(home, srv)
        assert asked.wait(120)
        os.kill(holder_pid(home), signal.SIGKILL)
        answer = relay.answer()  # the pending call, answered by the relay itself
        release.set()
        assert answer["id"] == 7 and answer["result"]["isError"] is True
        assert "[daemon_gone]" in answer["result"]["content"][0]["text"]
        relay.send({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                    "params": {"name": "memory_search", "arguments": {"vault_id": "notes", "query": "x"}}})
        locked = relay.answer()["result"]["content"][0]["text"]
        assert "[vault_locked]" in locked and "memories unlock notes" in locked
        relay.send({"jsonrpc": "2.0", "id": 9, "method": "resources/list"})
        assert relay.answer()["error"]["code"] == -32000
        relay.proc.stdin.close()  # type: ignore[union-attr]
        assert relay.proc.wait(60) == 0
        assert "Traceback" not in relay.stderr


def test_a_malformed_line_is_answered_through_the_relay(home: Path) -> None:
    assert unlock(home, "notes").code == 0
    relay = RawRelay(home)
    relay.initialize()
    assert relay.proc.stdin is not None
    relay.proc.stdin.write(b"garbage\n[1,2]\n")
    relay.proc.stdin.flush()
    assert relay.answer()["error"]["code"] == -32700
    assert relay.answer()["error"]["code"] == -32600
    relay.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert relay.answer()["id"] == 3
    relay.proc.stdin.close()
    assert relay.proc.wait(60) == 0



@pytest.mark.parametrize("way", ["relayed", "in-process"])
def test_requests_written_before_the_client_closes_its_side_are_still_answered(home: Path, way: str) -> None:
    """A client that writes its requests and closes its side at once (a shell pipe) reads every
    answer: the session ends after answering what it had read, never with a claim that the
    daemon stopped (relayed), nor with silence (in-process, where the SDK cancels what is open)."""
    if way == "relayed":
        assert unlock(home, "notes").code == 0
    relay = RawRelay(home)
    assert relay.proc.stdin is not None
    for message in (INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "memory_search", "arguments": {"vault_id": "notes", "query": "sourdough"}}}):
        relay.proc.stdin.write(json.dumps(message).encode() + b"\n")
    relay.proc.stdin.close()
    assert relay.answer()["id"] == 1
    found = relay.answer()
    assert relay.proc.wait(60) == 0
    assert found["id"] == 2, found
    if way == "relayed":
        assert found["result"]["isError"] is False, found
        assert found["result"]["structuredContent"]["records"][0]["title"] == "Sourdough"
        assert "mcp_relay ok" in (home / "daemon" / "daemon.log").read_text(encoding="utf-8")
    else:
        assert connect_daemon(home) is None  # no daemon: the server ran in this process
        assert "[vault_locked]" in found["result"]["content"][0]["text"]
