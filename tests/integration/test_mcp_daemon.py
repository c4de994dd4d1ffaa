"""`memories mcp` through the resident engine, driven by the official `mcp` client over stdio.

The server process is started with no passphrase anywhere: the daemon holds the keys, the
index and the grant. Locked → `vault_locked` saying how to unlock; `memories unlock` → the
next call answers (no restart of the AI client); lock, revoke or expiry from another process
end access at the next call; a lock during a call drops the late answer; the generation
service's API key is the daemon's, never the AI client's.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from memories_tui.daemon import connect as connect_daemon
from tests.helpers.cli import run_cli
from tests.helpers.daemon import Clock, daemon, stop, unlock, wait_until
from tests.helpers.model_server import COMPAT_CHAT, ModelServer

SERVER = Path(__file__).resolve().parents[1] / "helpers" / "mcp_server.py"
TEXT = "Feed the sourdough starter twice a day with rye flour. 酸種麵包的酵頭每天餵兩次。"


@pytest.fixture
def home(homes) -> Path:
    return homes.make(note=("Sourdough", TEXT))


@asynccontextmanager
async def mcp_client(home: Path, *args: str, env: dict[str, str] | None = None):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIES_")}
    environ.update(PYTHONIOENCODING="utf-8", **(env or {}))  # no passphrase of any kind
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "mcp", "--home", str(home), *args],
                                   env=environ)
    with open(home.parent / f"mcp-stderr-{time.monotonic_ns()}.log", "w+", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
            yield client


async def retrieve(client, query: str = "sourdough"):
    return await client.call_tool("memory_retrieve", {"vault_id": "notes", "query": query})


def error_of(result) -> str:
    assert result.is_error is True, result.structured_content
    return result.content[0].text


def chunks_of(result) -> list[dict]:
    assert result.is_error is False, result.content[0].text
    return result.structured_content["chunks"]


async def test_locked_then_unlocked_then_locked_without_restarting_the_client(home: Path) -> None:
    with daemon(home):
        async with mcp_client(home, "--vault", "notes") as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert tools == {"memory_retrieve", "memory_search", "memory_read", "memory_ask"}
            locked = error_of(await retrieve(client))
            assert "[vault_locked]" in locked and "memories unlock notes" in locked
            assert unlock(home, "notes").code == 0
            found = chunks_of(await retrieve(client))
            assert found and found[0]["text"] == TEXT
            read = await client.call_tool("memory_read", {"vault_id": "notes", "id": found[0]["id"]})
            assert read.structured_content["text"] == TEXT
            assert run_cli(home, "lock", "--all", passphrase=None).code == 0
            assert "[vault_locked]" in error_of(await retrieve(client))


async def test_no_daemon_at_start_then_unlock_starts_one_and_the_server_finds_it(home: Path) -> None:
    async with mcp_client(home, "--vault", "notes") as client:
        assert "memories unlock notes" in error_of(await retrieve(client))
        assert unlock(home, "notes").code == 0  # starts the daemon
        assert chunks_of(await retrieve(client))


async def test_grants_are_held_in_the_daemon_revoke_and_expiry_end_them(home: Path, tmp_path: Path) -> None:
    clock = Clock(tmp_path / "clock")
    (home / "config.toml").write_text("[daemon]\nidle_lock_minutes = 0\n")  # only the grant's expiry here
    assert unlock(home, "notes", env=clock.env).code == 0
    async with mcp_client(home, "--vault", "notes") as client:
        assert chunks_of(await retrieve(client))
        assert run_cli(home, "mcp", "revoke", "notes", passphrase=None).code == 0
        assert "[grant_revoked]" in error_of(await retrieve(client))
    clock.catch_up()
    async with mcp_client(home, "--vault", "notes", "--expires", "1h") as client:  # a fresh grant
        assert chunks_of(await retrieve(client))
        denied = error_of(await client.call_tool("memory_retrieve", {"vault_id": "other", "query": "x"}))
        assert "[grant_denied]" in denied
        grants = connect_daemon(home).call("status")["grants"]
        vault_id = run_cli(home, "--json", "vault", "list").json["vaults"][0]["vault_id"]
        assert [g["vaults"] for g in grants if not g["expired"]] == [[vault_id]]
        assert max(g["expires_at"] or 0 for g in grants) == pytest.approx(clock.now + 3600, abs=5)
        clock.advance(2 * 3600)
        assert "[grant_expired]" in error_of(await retrieve(client))


async def test_a_lock_during_a_call_drops_the_late_answer(home: Path) -> None:
    with ModelServer() as srv:
        received, release = srv.hold_chat()
        (home / "config.toml").write_text(srv.generation_toml(api_key_env="GEN_KEY"))
        assert unlock(home, "notes", env={"GEN_KEY": "key-of-the-daemon"}).code == 0
        async with mcp_client(home, "--vault", "notes", env={"GEN_KEY": "key-of-the-ai-client"}) as client:
            outcome: list[str] = []

            def lock_when_asked() -> None:
                received.wait(120)
                outcome.append(str(run_cli(home, "lock", "--all", passphrase=None).code))
                release.set()

            locker = threading.Thread(target=lock_when_asked)
            locker.start()
            answer = await client.call_tool("memory_ask", {"vault_id": "notes", "question": "How often to feed?"})
            locker.join()
            assert outcome == ["0"]
            text = error_of(answer)  # the lock cut the waiting request and says why
            assert "[vault_locked]" in text and "was locked during the call" in text
            assert "twice a day" not in json.dumps(answer.model_dump(mode="json"), ensure_ascii=False)
        auth = [r.headers.get("authorization") for r in srv.requests_for(COMPAT_CHAT)]
        assert auth == ["Bearer key-of-the-daemon"]  # the daemon's key, never the client's


async def test_killing_the_daemon_mid_session_gives_a_clear_error_then_recovers(home: Path) -> None:
    import signal

    assert unlock(home, "notes").code == 0
    async with mcp_client(home, "--vault", "notes") as client:
        assert chunks_of(await retrieve(client))
        os.kill(connect_daemon(home).call("hello")["pid"], signal.SIGKILL)
        wait_until(lambda: connect_daemon(home) is None, what="the daemon to be gone")
        assert "[vault_locked]" in error_of(await retrieve(client))
        assert unlock(home, "notes").code == 0  # a new daemon: the session is opened again
        assert chunks_of(await retrieve(client))


async def test_the_egress_log_names_the_ai_client_the_daemon_served(home: Path) -> None:
    """The model request is made in the daemon, but the entry names the AI client that asked."""
    with ModelServer() as srv:
        (home / "config.toml").write_text(
            f'[rag.generation]\nprotocol = "compatible"\nurl = "{srv.compat_chat_url}"\nmodel = "m"\n')
        assert unlock(home, "notes").code == 0
        async with mcp_client(home, "--vault", "notes") as client:
            answer = await client.call_tool("memory_ask", {"vault_id": "notes", "question": "How often to feed?"})
            assert answer.is_error is False, answer.content[0].text
        assert len(srv.requests_for(COMPAT_CHAT)) == 1
    stop(home)
    entries = run_cli(home, "--json", "rag", "egress", "notes").json["entries"]
    assert [e["purpose"] for e in entries] == ["generation"]
    assert entries[0]["client"].startswith("mcp:"), entries
