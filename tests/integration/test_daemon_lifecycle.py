"""The resident engine as a real process on a real socket: start, one per home, unlock once, lock,
idle and `--for` expiry on a clock the test moves, stop, SIGTERM, kill -9, and requests it must
refuse without falling over."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from memories_tui import cli
from memories_tui.daemon import connect
from tests.helpers.cli import run_cli
from tests.helpers.daemon import (
    Clock,
    answer_json,
    connect_unix,
    daemon,
    holder_pid,
    lock_held,
    post,
    raw_request,
    stop,
    unlock,
    wait_until,
)
from tests.helpers.vaults import PASS


@pytest.fixture
def home(homes) -> Path:
    return homes.make()


def status(home: Path) -> dict:
    """`daemon status --json`, asked in-process (one CLI subprocess per check would dominate the run)."""
    client = connect(home)
    return {"running": False} if client is None else {"running": True, **client.call("status")}


def unlocked_names(home: Path) -> list[str]:
    return [v["name"] for v in status(home).get("vaults", [])]


def test_unlock_starts_the_daemon_once_and_lock_locks(home: Path) -> None:
    assert run_cli(home, "--json", "daemon", "status", passphrase=None).json == {"running": False}
    first = unlock(home, "notes", "--for", "8h")
    assert first.code == 0, first.stderr
    assert first.json["name"] == "notes" and first.json["already_unlocked"] is False
    assert lock_held(home)
    folder = home / "daemon"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "daemon.sock").stat().st_mode) == 0o600
    assert stat.S_IMODE((folder / "daemon.log").stat().st_mode) == 0o600
    again = run_cli(home, "--json", "unlock", "notes", passphrase=None)  # held: no passphrase asked
    assert again.code == 0, again.stderr
    assert again.json["already_unlocked"] is True
    shown = run_cli(home, "daemon", "status", passphrase=None)
    assert shown.code == 0 and "notes" in shown.stdout and "(idle)" in shown.stdout
    locked = run_cli(home, "--json", "lock", "notes", passphrase=None)
    assert locked.code == 0 and len(locked.json["locked"]) == 1
    assert unlocked_names(home) == []
    assert run_cli(home, "--json", "unlock", "notes", passphrase=None).json["error"]["code"] == "usage_error"


def test_wrong_passphrase_is_refused_by_the_daemon_and_nothing_stays_unlocked(home: Path) -> None:
    wrong = run_cli(home, "--json", "unlock", "notes", passphrase="not it")
    assert wrong.code == 1
    assert wrong.json["error"]["code"] == "wrong_passphrase"
    assert unlocked_names(home) == []


def test_passphrase_never_reaches_the_daemons_argv_environment_or_log(home: Path, tmp_path: Path) -> None:
    """Nor does any passphrase source: the file's path or the command that prints it."""
    secret_file = tmp_path / "passphrase.txt"
    secret_file.write_text(PASS + "\n")
    secret_file.chmod(0o600)
    sources = {"MEMORIES_PASSPHRASE_FILE": str(secret_file), "MEMORIES_PASSPHRASE_COMMAND": "printf unused"}
    assert unlock(home, "notes", env=sources).code == 0
    pid = holder_pid(home)
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    environ = Path(f"/proc/{pid}/environ").read_bytes()
    log = (home / "daemon" / "daemon.log").read_text()
    for where in (cmdline, environ, log.encode()):
        assert PASS.encode() not in where
    assert b"MEMORIES_PASSPHRASE" not in environ
    assert str(secret_file).encode() not in environ and b"printf unused" not in environ
    assert "unlock" in log and "Traceback" not in log


def test_a_second_daemon_is_refused_and_names_the_first(home: Path) -> None:
    with daemon(home) as pid:
        detached = run_cli(home, "--json", "daemon", "--detach", passphrase=None)
        assert detached.code == 1
        assert detached.json["error"]["code"] == "daemon_running"
        assert f"pid {pid}" in detached.json["error"]["message"]
        foreground = run_cli(home, "daemon", passphrase=None)
        assert foreground.code == 1 and f"pid {pid}" in foreground.stderr
        assert "Traceback" not in foreground.stderr
        assert holder_pid(home) == pid


def test_a_stale_socket_after_kill_9_is_detected_and_replaced(home: Path) -> None:
    assert unlock(home, "notes").code == 0
    pid = holder_pid(home)
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not lock_held(home), what="the killed daemon's lock to drop")
    assert (home / "daemon" / "daemon.sock").exists()  # left behind by kill -9
    assert status(home) == {"running": False}  # nobody accepts on it: no daemon
    listed = run_cli(home, "--json", "memory", "list", "notes")  # works in-process meanwhile
    assert listed.code == 0 and listed.json == {"records": []}
    again = unlock(home, "notes")
    assert again.code == 0, again.stderr
    assert holder_pid(home) != pid and unlocked_names(home) == ["notes"]


def test_sigterm_locks_every_vault_and_exits_cleanly(home: Path) -> None:
    assert unlock(home, "notes").code == 0
    vault_id = status(home)["vaults"][0]["vault_id"]
    os.kill(holder_pid(home), signal.SIGTERM)
    wait_until(lambda: not lock_held(home), what="the daemon to stop")
    log = (home / "daemon" / "daemon.log").read_text()
    assert f"lock {vault_id} (SIGTERM)" in log and "stopped (SIGTERM)" in log
    assert not (home / "daemon" / "daemon.sock").exists()


def test_daemon_stop_locks_and_stops(home: Path) -> None:
    assert unlock(home, "notes").code == 0
    stopped = run_cli(home, "--json", "daemon", "stop", passphrase=None)
    assert stopped.code == 0 and stopped.json["stopped"] is True
    assert not lock_held(home)
    assert "lock " in (home / "daemon" / "daemon.log").read_text()
    assert run_cli(home, "--json", "daemon", "stop", passphrase=None).json == {"stopped": False}


def test_for_expiry_and_idle_lock_follow_the_clock_the_test_moves(home: Path, tmp_path: Path) -> None:
    (home / "config.toml").write_text("[daemon]\nidle_lock_minutes = 60\n")
    clock = Clock(tmp_path / "clock")
    assert unlock(home, "notes", "--for", "30m", env=clock.env).code == 0
    clock.advance(29 * 60)
    row = status(home)["vaults"][0]
    assert row["name"] == "notes" and 59 <= row["seconds_left"] <= 61
    clock.advance(2 * 60)  # 31 minutes: --for has run out
    assert unlocked_names(home) == []
    assert "(expired)" in (home / "daemon" / "daemon.log").read_text()

    assert unlock(home, "notes", env=clock.env).code == 0  # no --for: only the idle timer
    clock.advance(59 * 60)
    assert unlocked_names(home) == ["notes"]  # status is not use, but 59 < 60 minutes
    clock.advance(2 * 60)
    assert unlocked_names(home) == []
    assert "(idle)" in (home / "daemon" / "daemon.log").read_text()


def test_a_due_backup_is_taken_before_the_daemon_locks_and_a_failed_one_does_not_stop_the_lock(home: Path) -> None:
    (home / "config.toml").write_text("[backup]\nevery_hours = 1\n")
    assert unlock(home, "notes").code == 0
    vault_id = status(home)["vaults"][0]["vault_id"]
    assert run_cli(home, "lock", "notes", passphrase=None).code == 0
    assert len(list((home / "backups").glob("*.mvault"))) == 1  # taken while the keys were there
    log = (home / "daemon" / "daemon.log").read_text()
    assert f"backup of {vault_id} before lock" in log

    (home / "in-the-way").write_text("a file where the backup folder should be")
    (home / "config.toml").write_text('[backup]\nevery_hours = 1\ndir = "in-the-way"\n')
    stop(home)  # the next daemon reads the new config
    assert unlock(home, "notes").code == 0
    assert run_cli(home, "lock", "notes", passphrase=None).code == 0
    assert unlocked_names(home) == []  # locked all the same
    assert re.search(rf"backup before lock of {vault_id} failed: [a-z_]+", (home / "daemon" / "daemon.log").read_text())


def test_a_rolled_back_vault_is_refused_by_the_daemon_until_accepted_on_purpose(home: Path, tmp_path: Path) -> None:
    vault_file = next((home / "vaults").glob("*.mvault"))
    assert run_cli(home, "memory", "add", "notes", "--title", "kept", "--text", "in the old copy").code == 0
    old_copy = tmp_path / "old-copy.mvault"
    shutil.copyfile(vault_file, old_copy)
    assert run_cli(home, "memory", "add", "notes", "--title", "newer", "--text", "not in the copy").code == 0
    for extra in ("-wal", "-shm"):
        Path(f"{vault_file}{extra}").unlink(missing_ok=True)
    shutil.copyfile(old_copy, vault_file)
    refused = unlock(home, "notes")
    assert refused.code == 1 and refused.json["error"]["code"] == "vault_rolled_back"
    assert unlocked_names(home) == []
    accepted = unlock(home, "notes", "--accept-rollback")
    assert accepted.code == 0, accepted.stdout + accepted.stderr
    listed = run_cli(home, "--json", "memory", "list", "notes", passphrase=None)  # through the daemon
    assert [r["title"] for r in listed.json["records"]] == ["kept"]


def test_bad_requests_get_clear_errors_and_the_daemon_keeps_serving(home: Path) -> None:
    with daemon(home):
        cases = [
            (post("status", b"{}", length=64 * 1024 * 1024 + 1), 413, "daemon_request_too_large"),
            (post("status", b"{not json"), 400, "daemon_bad_request"),
            (post("status", b"[1, 2]"), 400, "daemon_bad_request"),
            (post("status", b"\xff\xfe"), 400, "daemon_bad_request"),
            (post("status", b"{}", version=2), 400, "daemon_version"),
            (post("no_such_method", b"{}"), 404, "daemon_unknown_method"),
            (post("../../etc", b"{}"), 404, "daemon_unknown_method"),
            (b"POST /v1/status HTTP/1.0\r\n\r\n", 411, "daemon_bad_request"),
            (b"this is not http\r\n\r\n", 400, "daemon_bad_request"),
        ]
        for request, want_status, want_code in cases:
            got_status, body = answer_json(raw_request(home, request))
            assert (got_status, body["error"]["code"]) == (want_status, want_code), request[:60]
            assert body["error"]["message"]
        # well-formed HTTP, arguments of the wrong shape: an error line, not a crash
        got_status, body = answer_json(raw_request(home, post("unlock", json.dumps({"vault": 42}).encode())))
        assert got_status == 200 and body["error"]["code"] == "daemon_bad_request"
        got_status, body = answer_json(raw_request(home, post("unlock", b'{"vault": "nope"}')))
        assert body["error"]["code"] == "not_found"
        cut = raw_request(home, b"POST /v1/status HTTP/1.0\r\nContent-Length: 10\r\n\r\n{", hang_up=True)
        assert answer_json(cut)[1]["error"]["code"] == "daemon_bad_request"  # a body cut short
        assert status(home)["running"] is True
    log = (home / "daemon" / "daemon.log").read_text()
    assert "Traceback" not in log and "nope" not in log


def test_a_long_home_path_still_gets_a_socket(tmp_path: Path) -> None:
    home = tmp_path / ("deep-" * 20) / "home"
    assert run_cli(home, "--json", "vault", "create", "notes").code == 0
    try:
        assert len(str(home / "daemon" / "daemon.sock")) > 108
        assert unlock(home, "notes").code == 0
        assert unlocked_names(home) == ["notes"]
    finally:
        stop(home)


@pytest.mark.parametrize("mode", [0o755, 0o750, 0o770, 0o705], ids=lambda mode: f"{mode:o}")
def test_a_daemon_folder_others_can_enter_is_refused(home: Path, mode: int) -> None:
    """Group access is refused like everyone's: a group member could reach the socket."""
    (home / "daemon").mkdir(mode=0o700)
    os.chmod(home / "daemon", mode)
    result = run_cli(home, "--json", "daemon", "--detach", passphrase=None)
    assert result.code == 1
    assert result.json["error"]["code"] == "home_invalid" and "chmod 700" in result.json["error"]["message"]
    assert f"mode {mode:o}" in result.json["error"]["message"] and not lock_held(home)


def test_a_daemon_folder_another_user_owns_is_refused(home: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to give the folder to another uid (CI runs as root)")
    (home / "daemon").mkdir(mode=0o700)
    os.chmod(home / "daemon", 0o700)
    os.chown(home / "daemon", 12345, 12345)
    result = run_cli(home, "--json", "unlock", "notes")
    assert result.code == 1
    error = result.json["error"]
    assert error["code"] == "home_invalid" and "belongs to another user (uid 12345)" in error["message"]
    assert not lock_held(home) and not (home / "daemon" / "daemon.sock").exists()


@pytest.mark.skipif(sys.platform != "linux", reason="fork + setuid to another user is tested on Linux")
def test_a_connection_from_another_uid_is_refused() -> None:
    """Defence in depth: even with the folder and socket opened up to everyone, the peer
    credentials the kernel reports refuse another user. Needs root to become `nobody`."""
    if os.getuid() != 0:
        pytest.skip("needs root to setuid to nobody (CI runs as root)")
    base = Path(tempfile.mkdtemp(prefix="mem-peer-", dir="/tmp"))
    home = base / "home"
    try:
        assert run_cli(home, "--json", "vault", "create", "notes").code == 0
        with daemon(home):
            for folder in (base, home, home / "daemon"):
                os.chmod(folder, 0o711)
            os.chmod(home / "daemon" / "daemon.sock", 0o666)
            read_end, write_end = os.pipe()
            child = os.fork()
            if child == 0:  # pragma: no cover - runs in the forked child
                try:
                    os.setgid(65534)
                    os.setuid(65534)
                    import socket

                    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                        sock.settimeout(30)
                        connect_unix(sock, home / "daemon" / "daemon.sock")
                        sock.sendall(post("status", b"{}"))
                        answer = b""
                        while chunk := sock.recv(65536):
                            answer += chunk
                    os.write(write_end, answer)
                finally:
                    os._exit(0)
            os.close(write_end)
            answer = b""
            while chunk := os.read(read_end, 65536):
                answer += chunk
            os.close(read_end)
            os.waitpid(child, 0)
            got_status, body = answer_json(answer)
            assert got_status == 403
            assert body["error"]["code"] == "daemon_peer_refused"
            assert "uid 65534" in body["error"]["message"]
            assert status(home)["running"] is True
    finally:
        import shutil

        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.skipif(sys.platform != "linux", reason="fork + setuid to another user is tested on Linux")
def test_a_socket_another_user_serves_gets_no_passphrase() -> None:
    """The other direction: a socket in the home served by another user (here `nobody`) is
    refused by the client before anything is sent, so `memories unlock` never hands it the
    passphrase. Needs root to become `nobody`."""
    if os.getuid() != 0:
        pytest.skip("needs root to setuid to nobody (CI runs as root)")
    import socket

    base = Path(tempfile.mkdtemp(prefix="mem-impostor-", dir="/tmp"))
    home = base / "home"
    try:
        assert run_cli(home, "--json", "vault", "create", "notes").code == 0
        (home / "daemon").mkdir()
        os.chown(home / "daemon", 65534, 65534)
        for folder in (base, home):
            os.chmod(folder, 0o711)
        ready_r, ready_w = os.pipe()
        got_r, got_w = os.pipe()
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the forked child
            try:
                os.setgid(65534)
                os.setuid(65534)
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
                    server.bind(str(home / "daemon" / "daemon.sock"))
                    server.listen(4)
                    os.write(ready_w, b"1")
                    server.settimeout(60)  # the first connection comes at once; then wait a little for more
                    received = b""
                    try:
                        for _ in range(3):  # a client that went on would connect again to send its request
                            conn, _ = server.accept()
                            server.settimeout(10)
                            with conn:
                                conn.settimeout(10)
                                while chunk := conn.recv(65536):
                                    received += chunk
                    except OSError:
                        pass
                    os.write(got_w, received or b"-")
            finally:
                os._exit(0)
        os.close(ready_w)
        os.close(got_w)
        assert os.read(ready_r, 1) == b"1"
        refused = run_cli(home, "--json", "unlock", "notes")
        assert refused.code == 1, refused.stdout + refused.stderr
        assert refused.json["error"]["code"] == "daemon_peer_refused"
        assert "uid 65534" in refused.json["error"]["message"]
        os.waitpid(child, 0)
        received = b""
        while chunk := os.read(got_r, 65536):
            received += chunk
        assert received == b"-"  # the impostor was connected to, and was sent nothing
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_without_unix_sockets_the_daemon_refuses_clearly_and_verbs_stay_in_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """What Windows users get: the platform check is the only thing replaced here."""
    import memories_tui.cli.daemon_verbs as verbs
    import memories_tui.daemon.client as client

    monkeypatch.setattr(verbs, "unix_sockets_supported", lambda: False)
    monkeypatch.setattr(client, "unix_sockets_supported", lambda: False)
    for argv in (["daemon", "--detach"], ["unlock", "notes"], ["daemon", "status"]):
        assert cli.main(["--home", str(tmp_path / "home"), "--json", *argv]) == 1
        error = json.loads(capsys.readouterr().out)["error"]
        assert error["code"] == "daemon_unavailable"
        assert "Windows" in error["message"] and "per process" in error["message"]
    assert client.connect(tmp_path / "home") is None
