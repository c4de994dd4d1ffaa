"""A whole model request has a deadline, and cancel ends it mid-read.

The servers trickle one byte every 50 ms, in the body or in the headers, so no single read
ever times out; a full reply would take hours. The deadline is 1 s: small against the
trickle. The only wall-clock bound is the hang guard (60 s) that fails the test when a call
does not end at all; nothing asserts how long anything took.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from memories_tui.config import HttpSettings, RemoteService
from memories_tui.errors import CancelledError, NetworkError
from memories_tui.models.remote import CallContext
from memories_tui.models.remote_embed import RemoteEmbedder
from memories_tui.models.remote_generate import Generator
from tests.helpers.cli import call_cli, run_cli
from tests.helpers.misbehaving import Sent, trickle
from tests.helpers.model_server import COMPAT_CHAT, COMPAT_EMBED, ModelServer
from tests.helpers.threads import in_a_thread
from tests.helpers.vaults import PASS

HANG_GUARD = 60
MCP_SERVER = Path(__file__).resolve().parents[1] / "helpers" / "mcp_server.py"
TRICKLE = 0.05
# Per read 30 s (never reached: a byte comes every 50 ms); the whole request 1 s.
HTTP = HttpSettings(retries=2, backoff_ms=1, connect_timeout_seconds=5, timeout_seconds=30,
                    request_timeout_seconds=1)


def _outcome(call) -> BaseException | None:  # noqa: ANN001
    """Run `call` in a thread; its exception (or None). Fails if it is still running at the guard."""
    worker, result = in_a_thread(call)
    worker.join(HANG_GUARD)
    assert not worker.is_alive(), "the request was still running at the hang guard"
    return result[0]


@pytest.mark.parametrize("in_headers", [False, True], ids=["body", "headers"])
def test_trickling_generation_ends_at_the_request_deadline(srv, in_headers):
    record, stop = Sent(), threading.Event()
    srv.custom[COMPAT_CHAT] = trickle(record, stop, interval=TRICKLE, in_headers=in_headers)
    gen = Generator(RemoteService(protocol="compatible", url=srv.compat_chat_url, model="m"), HTTP)
    try:
        error = _outcome(lambda: gen.generate("system", "user", CallContext()))
    finally:
        stop.set()
    assert isinstance(error, NetworkError) and error.code == "network_timeout"
    assert "request_timeout_seconds" in error.message
    assert len(srv.requests_for(COMPAT_CHAT)) <= 1  # a deadline is not retried (0: cut before the server read it)


def test_trickling_embedding_ends_at_the_request_deadline(srv):
    record, stop = Sent(), threading.Event()
    srv.custom[COMPAT_EMBED] = trickle(record, stop, interval=TRICKLE, in_headers=True)
    embedder = RemoteEmbedder(RemoteService(protocol="compatible", url=srv.compat_embed_url, model="m",
                                            dimensions=8), HTTP)
    try:
        error = _outcome(lambda: embedder.embed_query("hello"))
    finally:
        stop.set()
    assert isinstance(error, NetworkError) and error.code == "network_timeout"


def test_a_caller_deadline_shorter_than_the_setting_wins(srv):
    record, stop = Sent(), threading.Event()
    srv.custom[COMPAT_CHAT] = trickle(record, stop, interval=TRICKLE, in_headers=True)
    slow = HttpSettings(retries=0, timeout_seconds=30, request_timeout_seconds=86_400)
    gen = Generator(RemoteService(protocol="compatible", url=srv.compat_chat_url, model="m"), slow)
    try:
        error = _outcome(lambda: gen.generate("s", "u", CallContext(deadline=time.monotonic() + 0.5)))
    finally:
        stop.set()
    assert isinstance(error, NetworkError) and error.code == "network_timeout"


@pytest.mark.parametrize("in_headers", [False, True], ids=["body", "headers"])
def test_cancel_ends_a_request_in_the_middle_of_a_read(srv, in_headers):
    """Cancel comes once the reply has started (the server says so); with a deadline of a
    day, only cancel can end the call."""
    record, stop = Sent(), threading.Event()
    srv.custom[COMPAT_CHAT] = trickle(record, stop, interval=TRICKLE, in_headers=in_headers)
    patient = HttpSettings(retries=2, timeout_seconds=30, request_timeout_seconds=86_400)
    gen = Generator(RemoteService(protocol="compatible", url=srv.compat_chat_url, model="m"), patient)
    cancel = threading.Event()

    def cancel_when_started() -> None:
        record.started.wait(HANG_GUARD)
        cancel.set()

    threading.Thread(target=cancel_when_started, daemon=True).start()
    try:
        error = _outcome(lambda: gen.generate("s", "u", CallContext(cancel=cancel)))
    finally:
        stop.set()
    assert isinstance(error, CancelledError), error
    assert len(srv.requests_for(COMPAT_CHAT)) == 1  # the server had started its reply: one request, not retried


# --------------------------------------------------------------------------- end to end


def _home_with_trickling_generation(tmp_path, srv: ModelServer):  # noqa: ANN202
    home = tmp_path / "home"
    home.mkdir()
    assert call_cli(home, "vault", "create", "notes").code == 0
    assert call_cli(home, "memory", "add", "notes", "--title", "Bread",
                   "--text", "Bake the sourdough at 250 degrees for forty minutes.").code == 0
    (home / "config.toml").write_text(
        srv.generation_toml() + '\n[rag.http]\nretries = 0\ntimeout_seconds = 30\nrequest_timeout_seconds = 1\n', encoding="utf-8")
    return home


def test_rag_ask_ends_at_the_configured_deadline(srv, tmp_path):
    record, stop = Sent(), threading.Event()
    srv.custom[COMPAT_CHAT] = trickle(record, stop, interval=TRICKLE, in_headers=False)
    home = _home_with_trickling_generation(tmp_path, srv)
    try:
        r = run_cli(home, "--json", "rag", "ask", "notes", "How hot is the sourdough baked?", timeout=HANG_GUARD)
    finally:
        stop.set()
    assert r.code != 0 and r.json["error"]["code"] == "network_timeout", r.stdout + r.stderr
    assert "request_timeout_seconds" in r.json["error"]["message"]
    assert len(srv.requests_for(COMPAT_CHAT)) <= 1  # not retried


def _mcp_params(home: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIES_")}
    env.update(MEMORIES_PASSPHRASE=PASS, PYTHONIOENCODING="utf-8")
    return StdioServerParameters(command=sys.executable,
                                 args=[str(MCP_SERVER), "mcp", "--home", str(home), "--vault", "notes"], env=env)


ASK = {"vault_id": "notes", "question": "How hot is the sourdough baked?"}


async def test_mcp_memory_ask_ends_at_the_configured_deadline(srv, tmp_path):
    record, stop = Sent(), threading.Event()
    srv.custom[COMPAT_CHAT] = trickle(record, stop, interval=TRICKLE, in_headers=True)
    home = _home_with_trickling_generation(tmp_path, srv)
    try:
        with open(tmp_path / "stderr.log", "w+", encoding="utf-8") as errlog:
            async with Client(stdio_client(_mcp_params(home), errlog=errlog),
                              read_timeout_seconds=HANG_GUARD) as client:
                result = await client.call_tool("memory_ask", ASK)
    finally:
        stop.set()
    assert result.is_error is True
    assert "network_timeout" in result.content[0].text and "request_timeout_seconds" in result.content[0].text


async def test_mcp_revoke_ends_a_memory_ask_waiting_on_a_trickle(srv, tmp_path):
    """Revoked from another terminal while the service trickles its headers (deadline: a day)."""
    record, stop = Sent(), threading.Event()
    srv.custom[COMPAT_CHAT] = trickle(record, stop, interval=TRICKLE, in_headers=True)
    home = _home_with_trickling_generation(tmp_path, srv)
    config = home / "config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("request_timeout_seconds = 1",
                                                                 "request_timeout_seconds = 86400"), encoding="utf-8")
    try:
        with open(tmp_path / "stderr.log", "w+", encoding="utf-8") as errlog:
            async with Client(stdio_client(_mcp_params(home), errlog=errlog),
                              read_timeout_seconds=HANG_GUARD) as client:
                ask = asyncio.create_task(client.call_tool("memory_ask", ASK))
                assert await asyncio.to_thread(record.started.wait, HANG_GUARD)
                revoked = await asyncio.to_thread(run_cli, home, "mcp", "revoke", "notes", "--json",
                                                  passphrase=None)
                assert revoked.code == 0, revoked.stderr
                result = await ask
    finally:
        stop.set()
    assert result.is_error is True and "grant_revoked" in result.content[0].text
