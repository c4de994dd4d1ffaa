"""A daemon started from an earlier commit of this repository, answered by today's client.

The earlier code is the repository's own history, not an imitation: its package and test
helpers are taken out of git (`git archive`) and run as that commit's tests ran them (its
cheap-KDF launcher, which also starts its detached daemon). Two earlier builds: the commit
before client and daemon named their build (such a daemon says no version), and the commit
before the served API last changed (same version, another fingerprint). Whatever today's
client asks, it is served or told in one sentence to run `memories daemon restart`, never an
internal error, and nothing is written through a daemon of another build; a daemon holding no
unlocked vault is restarted for today's client; `memories daemon restart` replaces one that
does.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.helpers.cli import PASS, Result, cli_env, run_cli
from tests.helpers.daemon import holder_pid, lock_held, stop, unlock, wait_until
from tests.helpers.paths import REPO_ROOT, missing

HANDSHAKE = "memories_tui/daemon/handshake.py"
FINGERPRINT_FILES = (HANDSHAKE, "memories_tui/frontend/daemon_socket.py")  # where API_FINGERPRINT was, then is
FINGERPRINT = re.compile(r'^API_FINGERPRINT = "(\w+)"', re.MULTILINE)


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True, timeout=60, check=False)
    if done.returncode != 0:
        missing(f"git history of this repository is needed ({done.stderr.decode(errors='replace').strip()})")
    return done.stdout.decode().strip()


def _earlier(which: str) -> str:
    """The commit before the handshake was added, or before the served API last changed."""
    if which == "before the handshake":
        added = _git("log", "--diff-filter=A", "--format=%H", "--", HANDSHAKE).splitlines()
        if not added:
            missing(f"no commit in this clone's history adds {HANDSHAKE}")
        return _git("rev-parse", f"{added[-1]}^")
    for commit in _git("log", "-G", "^API_FINGERPRINT = ", "--format=%H", "--", *FINGERPRINT_FILES).splitlines():
        if _fingerprint(commit) != _fingerprint(f"{commit}^"):  # a move of the constant changes nothing
            return _git("rev-parse", f"{commit}^")
    missing(f"no commit in this clone's history changes the API fingerprint ({', '.join(FINGERPRINT_FILES)})")
    raise AssertionError("unreachable")


def _fingerprint(commit: str) -> str | None:
    for path in FINGERPRINT_FILES:
        shown = subprocess.run(["git", "-C", str(REPO_ROOT), "show", f"{commit}:{path}"], capture_output=True,
                               timeout=60, check=False)
        found = FINGERPRINT.search(shown.stdout.decode(errors="replace")) if shown.returncode == 0 else None
        if found:
            return found.group(1)
    return None


def _checkout(commit: str, folder: Path) -> Path:
    """The commit's package and test helpers under `folder`; its launcher's path."""
    archive = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", "--format=tar", commit, "memories_tui",
                              "tests/__init__.py", "tests/helpers"], capture_output=True, timeout=120, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(folder, filter="data")
    return folder / "tests" / "helpers" / "cheap_cli.py"


def run_earlier(launcher: Path, home: Path, *args: str) -> Result:
    done = subprocess.run([sys.executable, str(launcher), *args], capture_output=True, timeout=180, check=False,
                          env=cli_env(home, PASS), cwd=launcher.parents[2])
    return Result(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))


def _command_line(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


@pytest.fixture(params=["before the handshake", "before the API last changed"])
def earlier(request, tmp_path: Path):
    """(home made by the earlier build with a note, its launcher, the earlier commit)."""
    commit = _earlier(request.param)
    launcher = _checkout(commit, tmp_path / "earlier")
    home = tmp_path / "home"
    for args in (("vault", "create", "notes"),
                 ("memory", "add", "notes", "--title", "Sourdough", "--text", "Feed the starter twice a day.")):
        made = run_earlier(launcher, home, *args)
        assert made.code == 0, (commit, made.stdout, made.stderr)
    yield home, launcher, commit
    stop(home)


def _told_to_restart(result: Result) -> None:
    assert result.code != 0, result.stdout
    error = result.json["error"]
    assert error["code"] in ("daemon_version_mismatch", "daemon_incompatible"), error
    assert "memories daemon restart" in error["message"], error


def test_a_daemon_of_an_earlier_commit_holding_a_vault_is_named_and_restarted(earlier) -> None:
    home, launcher, commit = earlier
    assert run_earlier(launcher, home, "unlock", "notes").code == 0
    pid = holder_pid(home)
    assert str(launcher) in _command_line(pid), "the daemon runs the earlier commit's code"
    for verb in (("daemon", "status"), ("rag", "search", "notes", "starter"), ("memory", "list", "notes"),
                 ("memory", "add", "notes", "--title", "Rye", "--text", "Not written through it.")):
        answer = run_cli(home, "--json", *verb, passphrase=None)
        assert "internal_error" not in answer.stdout + answer.stderr, (commit, verb, answer.stdout)
        if answer.code != 0 or verb[0] != "daemon":  # status may be served; vault work never is
            _told_to_restart(answer)
    assert holder_pid(home) == pid  # it holds an unlocked vault: not restarted behind the user's back
    restarted = run_cli(home, "--json", "daemon", "restart", passphrase=None)
    assert restarted.code == 0, (commit, restarted.stdout, restarted.stderr)
    assert holder_pid(home) != pid and str(launcher) not in _command_line(holder_pid(home))
    assert unlock(home, "notes").code == 0
    listed = run_cli(home, "--json", "memory", "list", "notes", passphrase=None).json["records"]
    titles = [r["title"] for r in listed]
    assert titles == ["Sourdough"]  # the earlier build's note, and the add that was refused is not there


def test_a_daemon_of_an_earlier_commit_holding_nothing_is_replaced_for_todays_client(earlier, request) -> None:
    home, launcher, commit = earlier
    assert run_earlier(launcher, home, "daemon", "--detach").code == 0
    wait_until(lambda: lock_held(home), what="the earlier daemon to start")
    pid = holder_pid(home)
    assert str(launcher) in _command_line(pid)
    status = run_cli(home, "--json", "daemon", "status", passphrase=None)
    assert "internal_error" not in status.stdout + status.stderr, (commit, status.stdout)
    if status.code != 0:  # a daemon from before the handshake cannot say it holds nothing
        assert request.node.callspec.params["earlier"] == "before the handshake", status.stdout
        _told_to_restart(status)
        assert run_cli(home, "daemon", "restart", passphrase=None).code == 0
        status = run_cli(home, "--json", "daemon", "status", passphrase=None)
    assert status.code == 0, status.stdout + status.stderr
    assert status.json["pid"] == holder_pid(home) != pid
    assert str(launcher) not in _command_line(holder_pid(home))
