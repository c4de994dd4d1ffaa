"""What clients together may hold of the resident engine: request bytes in flight across all
connections are capped (a request past the cap is refused `daemon_busy`, the daemon keeps
serving), and a connection that sends nothing, or drips its request a byte at a time, is
closed. The limits are lowered through MEMORIES_TEST_DAEMON_LIMITS so the test neither waits
half a minute nor sends gigabytes."""

from __future__ import annotations

import asyncio
import json
import select
import socket
import time
from pathlib import Path

import pytest

from memories_tui.daemon import connect
from tests.helpers.cli import run_cli
from tests.helpers.daemon import answer_json, connect_unix, daemon, post, raw_request, stop, unlock, wait_until
from tests.integration.test_mcp_daemon import TEXT, mcp_client

GUARD = 20.0  # well under the real limits (30 s idle, 60 s per request): only a lowered limit closes in time


@pytest.fixture
def home(homes) -> Path:
    return homes.make()


def padded(size: int) -> bytes:
    body = b'{"pad": "' + b"x" * (size - 11) + b'"}'
    assert len(body) == size
    return body


def open_socket(home: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(GUARD)
    connect_unix(sock, home / "daemon" / "daemon.sock")
    return sock


def closed_by_daemon(sock: socket.socket) -> bool:
    """Has the daemon ended this connection (end of stream, or a reset)?"""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(65536, socket.MSG_PEEK) == b""
    except OSError:
        return True


def test_request_bytes_in_flight_across_connections_are_capped(home: Path) -> None:
    size = 600_000
    with daemon(home, env={"MEMORIES_TEST_DAEMON_LIMITS": "inflight=1000000"}):
        body = padded(size)

        def start_slow() -> socket.socket:
            sock = open_socket(home)
            sock.sendall(post("hello", b"", length=size) + body[:10])  # its bytes are reserved while it arrives
            return sock

        slow = start_slow()
        seen: list[str] = []  # what the second request got meanwhile, for the failure message

        def second_is_busy() -> bool:
            nonlocal slow
            started = time.monotonic()
            status, answer = answer_json(raw_request(home, post("hello", body)))
            assert isinstance(answer, dict)
            seen.append(f"{status} {answer.get('error', {}).get('code', 'result')} in {time.monotonic() - started:.1f} s")
            if status == 503 and answer["error"]["code"] == "daemon_busy":
                return True
            if select.select([slow], [], [], 0)[0]:  # the daemon read the second one's headers first and
                slow.close()  # refused the slow one (seen in a loaded CI run): start it again
                slow = start_slow()
                seen.append("the slow one refused, started again")
            return False

        try:
            wait_until(second_is_busy, GUARD, "a second large request to be refused while the first arrives")
        except AssertionError as error:
            raise AssertionError(f"{error}; it got: {', '.join(seen[:3])} … {', '.join(seen[-3:])}") from None
        slow.sendall(body[10:])
        chunks = []
        while chunk := slow.recv(65536):
            chunks.append(chunk)
        slow.close()
        status, answer = answer_json(b"".join(chunks))
        assert status == 200 and "result" in answer  # the first one was served
        status, answer = answer_json(raw_request(home, post("hello", body)))
        assert status == 200 and "result" in answer  # its bytes were given back
        assert connect(home) is not None


def test_idle_and_dripping_connections_are_closed(home: Path) -> None:
    with daemon(home, env={"MEMORIES_TEST_DAEMON_LIMITS": "idle=0.5,request=2"}):
        idle = open_socket(home)
        dripping = open_socket(home)
        dripping.sendall(b"POST /v1/hello HTTP/1.0\r\n")
        deadline = time.monotonic() + GUARD
        idle_closed = drip_closed = False
        while not (idle_closed and drip_closed) and time.monotonic() < deadline:
            idle_closed = idle_closed or closed_by_daemon(idle)
            if not drip_closed:
                try:
                    dripping.send(b"X")  # a header that never ends, a byte at a time (well within the idle limit)
                except OSError:
                    drip_closed = True
                drip_closed = drip_closed or closed_by_daemon(dripping)
            time.sleep(0.05)
        idle.close()
        dripping.close()
        assert idle_closed, "a connection that sent nothing stayed open"
        assert drip_closed, "a connection dripping its request stayed open"
        assert json.loads(json.dumps(connect(home).call("status")))["vaults"] == []  # and it keeps serving


async def test_a_relayed_mcp_session_idles_as_long_as_its_ai_client(homes) -> None:
    """The idle and request limits are for requests; an AI client's session is one long stream
    that may sit quiet for hours between tool calls, and must not be cut and reopened."""
    home = homes.make(note=("Sourdough", TEXT))
    assert unlock(home, "notes", env={"MEMORIES_TEST_DAEMON_LIMITS": "idle=0.3,request=0.6"}).code == 0
    try:
        async with mcp_client(home, "--vault", "notes") as client:
            search = {"vault_id": "notes", "query": "sourdough"}
            assert (await client.call_tool("memory_search", search)).is_error is False
            await asyncio.sleep(2.0)  # several times both lowered limits
            later = await client.call_tool("memory_search", search)
            assert later.is_error is False, later.content[0].text
            clients = run_cli(home, "--json", "daemon", "status", passphrase=None).json["clients"]
        relays = [c for c in clients if c["last_method"] == "mcp_relay"]
        assert [(c["calls"], c["running"]) for c in relays] == [(1, "mcp_relay")], clients  # one session, never reopened
    finally:
        stop(home)
