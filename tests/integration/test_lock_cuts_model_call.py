"""A lock ends a model request that is waiting, as cancel does, instead of letting it run to
`[rag.http] request_timeout_seconds` (here a day).

The generation service trickles its headers one byte every 50 ms, so no read ever times out
and only the lock can end the call. The only wall-clock bound is the hang guard (60 s) that
fails the test when the call does not end at all; nothing asserts how long anything took.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

from memories_tui.engine import Engine
from memories_tui.errors import CancelledError
from tests.helpers.cli import CHEAP_CLI, call_cli, cli_env, run_cli
from tests.helpers.daemon import stop, unlock
from tests.helpers.misbehaving import Sent, trickle
from tests.helpers.model_server import COMPAT_CHAT, ModelServer
from tests.helpers.vaults import PASS

HANG_GUARD = 60
TRICKLE = 0.05
QUESTION = "How hot is the sourdough baked?"


def _home(tmp_path, srv: ModelServer):  # noqa: ANN202
    home = tmp_path / "home"
    home.mkdir()
    assert call_cli(home, "vault", "create", "notes").code == 0
    assert call_cli(home, "memory", "add", "notes", "--title", "Bread",
                    "--text", "Bake the sourdough at 250 degrees for forty minutes.").code == 0
    (home / "config.toml").write_text(
        srv.generation_toml() + "\n[rag.http]\nretries = 0\ntimeout_seconds = 30\nrequest_timeout_seconds = 86400\n",
        encoding="utf-8")
    return home


def test_a_lock_in_the_engine_ends_an_ask_waiting_on_the_model(srv, tmp_path, cheap_kdf) -> None:
    """In-process (the TUI's ctrl+l or idle lock): the waiting request is cut at the lock."""
    record, release = Sent(), threading.Event()
    srv.custom[COMPAT_CHAT] = trickle(record, release, interval=TRICKLE, in_headers=True)
    engine = Engine.open(_home(tmp_path, srv))
    vault_id = engine.unlock("notes", PASS).vault_id
    outcome: list[BaseException | None] = []

    def ask() -> None:
        try:
            engine.ask(vault_id, QUESTION)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    worker = threading.Thread(target=ask, daemon=True)
    try:
        worker.start()
        assert record.started.wait(HANG_GUARD), "the model was never asked"
        engine.lock()
        worker.join(HANG_GUARD)
        assert not worker.is_alive(), "the request was still running at the hang guard"
    finally:
        release.set()
    assert isinstance(outcome[0], CancelledError), outcome
    assert "locked" in str(outcome[0])
    assert record.ended.wait(HANG_GUARD)  # the service saw the connection go


def test_memories_lock_ends_a_rag_ask_the_daemon_runs(srv, tmp_path) -> None:
    record, release = Sent(), threading.Event()
    srv.custom[COMPAT_CHAT] = trickle(record, release, interval=TRICKLE, in_headers=True)
    home = _home(tmp_path, srv)
    try:
        assert unlock(home, "notes").code == 0
        asking = subprocess.Popen([sys.executable, str(CHEAP_CLI), "--json", "rag", "ask", "notes", QUESTION],
                                  env=cli_env(home, None), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert record.started.wait(HANG_GUARD), "the daemon never asked the model"
            assert run_cli(home, "lock", "notes", passphrase=None).code == 0
            out, err = asking.communicate(timeout=HANG_GUARD)
        finally:
            asking.kill()
    finally:
        release.set()
        stop(home)

    error = json.loads(out)["error"]
    assert asking.returncode != 0 and error["code"] == "vault_locked", out + err
    assert "was locked during the call" in error["message"] and "memories unlock notes" in error["message"]
    assert b"Traceback" not in err
    assert len(srv.requests_for(COMPAT_CHAT)) == 1  # nothing sent again after the lock
