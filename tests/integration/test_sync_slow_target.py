"""A target that stops answering, or answers a byte at a time, cannot hold a sync: ctrl+c ends
it at once ("Sync cancelled; nothing was changed here."), a lock ends a sync running in the
engine at once, and a read that goes on past bounds.MAX_WAIT_SECONDS is a clear
`sync_target_unreachable` error. A real WebDAV server (WsgiDAV on 127.0.0.1) is held back on cue
(tests/helpers/dav.py, /slow/); the vault is left as it was each time, and the next sync with the
server answering again brings the change."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from memories_tui.errors import ErrorCode, MemoriesError
from memories_tui.sync import bounds
from tests.helpers.cli import CHEAP_CLI, call_cli, cli_env
from tests.helpers.sync import Device, first_device, joined_device
from tests.helpers.threads import in_a_thread

WAIT = 30  # seconds a held-back sync may take to stop at most: the client's own read timeout is 60 s


@pytest.fixture(scope="module")
def dav():
    from tests.helpers.dav import dav_server

    with dav_server() as server:
        yield server


@pytest.fixture
def slow(dav, monkeypatch, tmp_path, request):
    """(the collection's URL, a function that holds the server's GETs back: "stall", "drip" or "" to let go)."""
    from tests.helpers.dav import PASSWORD, USER

    monkeypatch.setenv("MEMORIES_WEBDAV_USERNAME", USER)
    monkeypatch.setenv("MEMORIES_WEBDAV_PASSWORD", PASSWORD)
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    name = request.node.name.replace("[", "-").replace("]", "")
    (dav.slow_flag.parent / "slow-share" / name).mkdir()
    waiting = dav.slow_flag.parent / "waiting"

    def hold(mode: str) -> None:
        waiting.unlink(missing_ok=True)
        if mode:
            dav.slow_flag.write_text(mode)
        else:
            dav.slow_flag.unlink(missing_ok=True)

    yield f"{dav.slow_url}/{name}", hold, waiting
    hold("")


def _when_held(waiting) -> None:  # noqa: ANN001 - a Path
    deadline = time.monotonic() + 60
    while not waiting.exists():
        assert time.monotonic() < deadline, "the sync never asked the server for an object"
        time.sleep(0.02)


def _b_behind_a(url: str, tmp_path) -> tuple[Device, Device]:  # noqa: ANN001
    """Devices a and b of one vault; a pushed a second note b has not pulled yet."""
    a = first_device(tmp_path / "a", url)
    a.add("first note", "made on a")
    a.sync()
    b = joined_device(tmp_path / "b", url)
    a.add("second note", "made on a while b was away")
    a.sync()
    return a, b


def test_a_lock_ends_a_sync_whose_server_stopped_answering_at_once(slow, tmp_path, cheap_kdf):
    url, hold, waiting = slow
    a, b = _b_behind_a(url, tmp_path)
    hold("stall")
    thread, outcome = in_a_thread(b.sync)
    _when_held(waiting)
    started = time.monotonic()
    b.engine.lock(b.vault_id)
    thread.join(WAIT)
    assert outcome, "the sync still waits for the server after the vault was locked"
    assert isinstance(outcome[0], MemoriesError) and outcome[0].code == ErrorCode.VAULT_LOCKED, outcome
    assert time.monotonic() - started < WAIT
    hold("")
    from tests.helpers.sync import SYNC_PASS

    b.engine.unlock(b.vault_id, SYNC_PASS)
    assert sorted(t for _k, t, _b in b.records().values()) == ["first note"]  # nothing changed by the stopped one
    b.sync()
    assert sorted(t for _k, t, _b in b.records().values()) == ["first note", "second note"]
    a.close()
    b.close()


def test_a_server_that_trickles_an_object_is_given_up_on_with_a_clear_error(slow, tmp_path, cheap_kdf, monkeypatch):
    url, hold, waiting = slow
    a, b = _b_behind_a(url, tmp_path)
    monkeypatch.setattr(bounds, "MAX_WAIT_SECONDS", 2.0)  # 15 minutes in use: a byte every 0.2 s passes every read timeout
    hold("drip")
    thread, outcome = in_a_thread(b.sync)
    thread.join(WAIT)
    assert outcome, "the sync is still reading the trickle"
    error = outcome[0]
    assert isinstance(error, MemoriesError) and error.code == ErrorCode.SYNC_TARGET_UNREACHABLE, outcome
    assert "Nothing was changed here" in error.message and url in error.message
    assert sorted(t for _k, t, _b in b.records().values()) == ["first note"]
    hold("")
    b.sync()
    assert sorted(t for _k, t, _b in b.records().values()) == ["first note", "second note"]
    a.close()
    b.close()


def test_a_join_whose_server_trickles_the_join_record_is_given_up_on_and_makes_no_vault(slow, tmp_path, cheap_kdf,
                                                                                         monkeypatch):
    from memories_tui.engine import Engine
    from tests.helpers.sync import SYNC_PASS

    url, hold, waiting = slow
    first_device(tmp_path / "a", url).close()
    monkeypatch.setattr(bounds, "MAX_WAIT_SECONDS", 2.0)
    hold("drip")
    b = Engine.open(tmp_path / "b")
    thread, outcome = in_a_thread(lambda: b.sync_join(url, SYNC_PASS))
    thread.join(WAIT)
    assert outcome, "the join is still reading the trickle"
    error = outcome[0]
    assert isinstance(error, MemoriesError) and error.code == ErrorCode.SYNC_TARGET_UNREACHABLE, outcome
    assert "key" in error.message and url in error.message
    assert b.list_vaults() == []
    hold("")
    assert b.sync_join(url, SYNC_PASS).vault_id
    b.close()


def _cli_home_synced(url: str, tmp_path):  # noqa: ANN001, ANN202
    """Home a, through the CLI: vault notes with one note, synced with `url`. (a, the env for the CLI)"""
    from tests.helpers.dav import PASSWORD, USER

    env = {"MEMORIES_WEBDAV_USERNAME": USER, "MEMORIES_WEBDAV_PASSWORD": PASSWORD}
    a = tmp_path / "a"
    call_cli(a, "vault", "create", "notes")
    call_cli(a, "memory", "add", "notes", "--title", "one", "--text", "first")
    assert call_cli(a, "sync", "add", "notes", url, env=env).code == 0
    assert call_cli(a, "sync", "notes", env=env).code == 0
    return a, env


def test_ctrl_c_ends_a_cli_sync_whose_server_stopped_answering_at_once(slow, tmp_path, cheap_kdf):
    url, hold, waiting = slow
    a, env = _cli_home_synced(url, tmp_path)
    b = tmp_path / "b"
    assert call_cli(b, "sync", "join", url, env=env).code == 0
    call_cli(a, "memory", "add", "notes", "--title", "two", "--text", "second")
    assert call_cli(a, "sync", "notes", env=env).code == 0
    hold("stall")
    child = subprocess.Popen([sys.executable, str(CHEAP_CLI), "sync", "notes"], env=cli_env(b, **env),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _when_held(waiting)
        started = time.monotonic()
        child.send_signal(signal.SIGINT)  # what ctrl+c sends
        out, err = child.communicate(timeout=WAIT)
    finally:
        child.kill()
    assert time.monotonic() - started < WAIT
    text = err.decode()
    assert child.returncode != 0 and "Sync cancelled; nothing was changed here." in text, text
    assert "Traceback" not in text and out == b""
    hold("")
    titles = call_cli(b, "--json", "memory", "list", "notes").json
    assert sorted(r["title"] for r in titles["records"]) == ["one"]
    assert call_cli(b, "sync", "notes", env=env).code == 0
    titles = call_cli(b, "--json", "memory", "list", "notes").json
    assert sorted(r["title"] for r in titles["records"]) == ["one", "two"]


def test_a_second_ctrl_c_leaves_a_cli_sync_whose_upload_hangs_and_nothing_is_lost(slow, tmp_path, cheap_kdf):
    """The first ctrl+c after the commit lets the upload finish (what was committed is sent next
    time anyway); a server that holds the upload back would keep it waiting for the client's
    timeouts, minutes. A second ctrl+c leaves at once, as kill -9 would, and says what is kept."""
    url, hold, waiting = slow
    a, env = _cli_home_synced(url, tmp_path)
    call_cli(a, "memory", "add", "notes", "--title", "two", "--text", "second")
    hold("stall-put")
    child = subprocess.Popen([sys.executable, str(CHEAP_CLI), "sync", "notes"], env=cli_env(a, **env),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _when_held(waiting)
        child.send_signal(signal.SIGINT)
        with pytest.raises(subprocess.TimeoutExpired):
            child.communicate(timeout=2)  # the first one lets the upload go on
        started = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=WAIT)
    finally:
        child.kill()
    assert time.monotonic() - started < WAIT
    text = err.decode()
    assert child.returncode != 0 and "ctrl+c again to stop at once" in text, text
    assert "Sync stopped without waiting for the sync target. Nothing is lost" in text, text
    assert "Traceback" not in text and out == b""
    hold("")
    assert call_cli(a, "sync", "notes", env=env).code == 0
    b = tmp_path / "b"
    assert call_cli(b, "sync", "join", url, env=env).code == 0
    titles = call_cli(b, "--json", "memory", "list", "notes").json
    assert sorted(r["title"] for r in titles["records"]) == ["one", "two"]


def test_a_lock_does_not_wait_for_an_upload_the_server_holds_back(slow, tmp_path, cheap_kdf):
    url, hold, waiting = slow
    a = first_device(tmp_path / "a", url)
    a.add("first note", "made on a")
    a.sync()
    a.add("second note", "made on a")
    hold("stall-put")
    thread, outcome = in_a_thread(a.sync)
    _when_held(waiting)
    started = time.monotonic()
    a.engine.lock(a.vault_id)
    assert time.monotonic() - started < WAIT
    hold("")
    thread.join(WAIT)
    from tests.helpers.sync import SYNC_PASS

    a.engine.unlock(a.vault_id, SYNC_PASS)
    a.sync()
    b = joined_device(tmp_path / "b", url)
    assert sorted(t for _k, t, _b in b.records().values()) == ["first note", "second note"]
    a.close()
    b.close()


def test_stopping_the_daemon_ends_its_background_sync_waiting_on_the_server(slow, tmp_path, cheap_kdf):
    """The daemon's background sync at unlock waits on a server that stopped answering; `daemon
    stop` cancels it at once instead of waiting out the scheduler's grace period (then locking),
    and says so in the daemon's log, not as the target's last error."""
    from tests.helpers.daemon import daemon, stop, unlock

    url, hold, waiting = slow
    a, env = _cli_home_synced(url, tmp_path)
    (a / "config.toml").write_text("[daemon]\nidle_lock_minutes = 0\n[sync]\nevery_minutes = 15\n", encoding="utf-8")
    hold("stall")
    with daemon(a, env=env):
        assert unlock(a, "notes", env=env).code == 0
        _when_held(waiting)
        stop(a)
    log = (a / "daemon" / "daemon.log").read_text(encoding="utf-8")
    assert "background sync of" in log and "stopped with the engine" in log, log[-2000:]
    hold("")
    status = call_cli(a, "--json", "sync", "status", passphrase=None).json["targets"][0]
    assert status["last_error"] is None
    assert call_cli(a, "sync", "notes", env=env).code == 0


def test_a_lock_ends_sync_devices_waiting_on_the_server(slow, tmp_path, cheap_kdf):
    """`sync devices` (as the daemon serves it) reads every device's head: a lock ends it at once."""
    url, hold, waiting = slow
    a, b = _b_behind_a(url, tmp_path)
    hold("stall")
    thread, outcome = in_a_thread(lambda: b.engine.sync_devices(b.vault_id))
    _when_held(waiting)
    b.engine.lock(b.vault_id)
    thread.join(WAIT)
    assert outcome, "sync devices still waits for the server after the vault was locked"
    assert isinstance(outcome[0], MemoriesError) and outcome[0].code == ErrorCode.VAULT_LOCKED, outcome
    hold("")
    a.close()
    b.close()
