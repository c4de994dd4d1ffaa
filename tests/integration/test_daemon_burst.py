"""Many calls at once on one resident engine, and a daemon that lets nobody in.

An AI client sends its tool calls concurrently, and scripts run commands in parallel: a burst
of a hundred or more calls at the same moment must all be served (the kernel queues the
connections; a full queue is tried again within the call's time), and a daemon that runs
but cannot be reached is said to be so, never reported as a locked vault (which would send
the user to unlock what is already unlocked, or the CLI to ask for a passphrase).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import threading
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from memories_tui.daemon import client as daemon_client
from memories_tui.daemon import connect
from memories_tui.daemon import connection as daemon_connection
from memories_tui.daemon.remote_engine import RemoteEngine
from memories_tui.errors import MemoriesError
from tests.helpers.daemon import connect_unix, holder_pid, stop, unlock
from tests.integration.test_mcp_daemon import TEXT, error_of, mcp_client

BURST = 120


@pytest.fixture
def home(homes) -> Path:
    return homes.make(note=("Sourdough", TEXT))


def test_a_burst_of_threads_through_the_cli_client_is_served(home: Path) -> None:
    assert unlock(home, "notes").code == 0
    start = threading.Barrier(BURST)

    def one_search(_: int) -> list[str]:
        start.wait(120)
        client = connect(home)
        assert client is not None  # None would make the CLI ask for a passphrase
        engine = RemoteEngine(client, home)
        return [hit.title for hit in engine.search(str(client.call("vault_state", {"vault": "notes"})["vault_id"]),
                                                   "sourdough").results]

    with ThreadPoolExecutor(BURST) as pool:
        answers = list(pool.map(one_search, range(BURST)))
    assert answers == [["Sourdough"]] * BURST


# Both ways `memories mcp` reaches the daemon. A daemon running when the AI client starts hosts
# the whole session (the relay). Started before any daemon, the MCP server runs in the client's
# own process and, once `memories unlock` has started one, sends each tool call to it as a
# request of its own (the per-call way).
MCP_WAYS = pytest.mark.parametrize("way", ["relayed", "per-call"], ids=["relayed", "served-per-call"])


@asynccontextmanager
async def mcp_session(home: Path, way: str, env: dict[str, str] | None = None) -> AsyncIterator[Any]:
    if way == "relayed":
        assert unlock(home, "notes").code == 0
    async with mcp_client(home, "--vault", "notes", env=env) as client:
        if way == "per-call":
            assert unlock(home, "notes").code == 0
        yield client


@MCP_WAYS
async def test_a_burst_of_mcp_tool_calls_is_served(home: Path, way: str) -> None:
    async with mcp_session(home, way) as client:
        results = await asyncio.gather(*(client.call_tool("memory_search", {"vault_id": "notes", "query": "sourdough"})
                                         for _ in range(BURST)))
    problems = [r.content[0].text for r in results if r.is_error]
    assert problems == []
    assert all(r.structured_content["records"][0]["title"] == "Sourdough" for r in results)


def fill_queue(path: Path) -> list[socket.socket]:
    """Connections that wait in the listen queue until it is full (the daemon is stopped)."""
    queued: list[socket.socket] = []
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            connect_unix(sock, path)
        except BlockingIOError:
            sock.close()
            return queued
        queued.append(sock)


def test_a_full_queue_is_tried_again_until_the_daemon_lets_the_call_in(home: Path, monkeypatch) -> None:
    assert unlock(home, "notes").code == 0
    pid = holder_pid(home)
    retried = threading.Event()
    real_sleep = time.sleep

    def watched_sleep(seconds: float) -> None:  # only observes that the client waits and tries again
        retried.set()
        real_sleep(seconds)

    monkeypatch.setattr(daemon_client.time, "sleep", watched_sleep)
    os.kill(pid, signal.SIGSTOP)
    queued: list[socket.socket] = []
    outcome: list[object] = []
    try:
        queued = fill_queue(home / "daemon" / "daemon.sock")

        def call() -> None:
            try:
                client = connect(home)
                outcome.append(client.call("vault_state", {"vault": "notes"}) if client else None)
            except MemoriesError as exc:
                outcome.append(exc.code)

        caller = threading.Thread(target=call)
        caller.start()
        deadline = time.monotonic() + 60
        while not retried.is_set() and caller.is_alive() and time.monotonic() < deadline:
            real_sleep(0.01)
    finally:
        os.kill(pid, signal.SIGCONT)  # it accepts the queue, and the waiting call gets in
    caller.join(120)
    for sock in queued:
        sock.close()
    assert retried.is_set(), outcome
    assert len(outcome) == 1 and isinstance(outcome[0], dict) and outcome[0]["unlocked"] is True, outcome


class ShutDaemon:
    """A socket that listens at the home's daemon address and never accepts (a daemon stopped
    with its queue full): every further connect is refused with EAGAIN."""

    def __init__(self, home: Path) -> None:
        (home / "daemon").mkdir(mode=0o700, exist_ok=True)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        path = home / "daemon" / "daemon.sock"
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            self.server.bind(f"/proc/self/fd/{fd}/{path.name}" if len(str(path)) > 100 else str(path))
        finally:
            os.close(fd)
        self.server.listen(0)
        self.queued = fill_queue(path)

    def close(self) -> None:
        for sock in [*self.queued, self.server]:
            sock.close()


def test_a_daemon_that_lets_nobody_in_is_not_answering_not_absent(home: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMORIES_DAEMON_TIMEOUT", "1")
    shut = ShutDaemon(home)
    try:
        with pytest.raises(MemoriesError) as caught:
            connect(home)  # None here made the CLI ask for a passphrase and try to start a second daemon
        assert caught.value.code == "daemon_not_answering"
        assert "memories daemon stop" in caught.value.message
    finally:
        shut.close()
    assert connect(home) is None  # and a socket nobody listens on is no daemon at all


@MCP_WAYS
async def test_an_unreachable_daemon_is_not_reported_as_a_locked_vault(home: Path, way: str) -> None:
    async with mcp_session(home, way, env={"MEMORIES_DAEMON_TIMEOUT": "1"}) as client:
        first = await client.call_tool("memory_search", {"vault_id": "notes", "query": "sourdough"})
        assert first.is_error is False
        stop(home)  # the daemon goes (the relayed session says so once); then something else listens
        # at its address and lets nobody in (the per-call server meets it on the call's own connection)
        if way == "relayed":
            gone = error_of(await client.call_tool("memory_search", {"vault_id": "notes", "query": "sourdough"}))
            assert "[daemon_gone]" in gone or "[daemon_not_answering]" in gone, gone
        shut = ShutDaemon(home)
        try:
            text = error_of(await client.call_tool("memory_search", {"vault_id": "notes", "query": "sourdough"}))
        finally:
            shut.close()
    assert "[vault_locked]" not in text and "[daemon_not_answering]" in text, text


@pytest.mark.parametrize("holder_lives", [True, False])
def test_a_refused_connect_is_tried_again_only_while_the_daemons_process_lives(
        home: Path, monkeypatch, holder_lives: bool) -> None:
    """A daemon between binding its socket and listening refuses connections for a moment; a
    socket left by a daemon that was killed refuses them for good, and nobody should wait."""
    folder = home / "daemon"
    folder.mkdir(mode=0o700, exist_ok=True)
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)
    (folder / "daemon.lock").write_text(json.dumps({"pid": os.getpid() if holder_lives else dead}))
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    fd = os.open(folder, os.O_RDONLY)
    try:
        server.bind(f"/proc/self/fd/{fd}/daemon.sock")  # bound, not listening yet: connects are refused
    finally:
        os.close(fd)
    retried = threading.Event()
    real_sleep = time.sleep

    def watched_sleep(seconds: float) -> None:
        retried.set()
        real_sleep(seconds)

    monkeypatch.setattr(daemon_client.time, "sleep", watched_sleep)
    monkeypatch.setattr(daemon_connection, "REFUSED_RETRY_SECONDS", 5.0)  # room for a loaded machine, not a speed claim
    found: list[object] = []
    caller = threading.Thread(target=lambda: found.append(connect(home)))
    caller.start()
    deadline = time.monotonic() + 60
    while not retried.is_set() and caller.is_alive() and time.monotonic() < deadline:
        real_sleep(0.005)
    server.listen(8)  # now it listens: a caller still trying gets in
    caller.join(60)
    server.close()
    assert retried.is_set() is holder_lives
    assert (found[0] is not None) is holder_lives, found
