"""An upgrade under a running daemon: a served module changed on disk while it runs.

The daemon and its clients run from a copy of the package (so the test can change a file
without touching the repository): after the change, a client is told to restart the daemon
(it holds an unlocked vault), never an internal error; once restarted, or when it holds no
unlocked vault (then the client restarts it itself), calls are served by the new files.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import PASS, Result, cli_env
from tests.helpers.daemon import holder_pid, lock_held, stop, wait_until
from tests.helpers.paths import REPO_ROOT
from tests.helpers.vaults import home_with_a_note

LAUNCHER = """import sys
sys.path[:0] = [{src!r}, {repo!r}]  # the copied package first, then the repository's tests
from tests.helpers.vaults import use_cheap_kdf
use_cheap_kdf()
from memories_tui.daemon import spawn
assert spawn.__file__.startswith({src!r}), spawn.__file__
spawn._TEST_DAEMON_COMMAND = [sys.executable, __file__]
from memories_tui.cli import main
sys.exit(main())
"""


@pytest.fixture
def installed(tmp_path: Path):
    """(home, launcher, the copied package folder)."""
    src = tmp_path / "site"
    shutil.copytree(REPO_ROOT / "memories_tui", src / "memories_tui", ignore=shutil.ignore_patterns("__pycache__"))
    launcher = tmp_path / "memories.py"
    launcher.write_text(LAUNCHER.format(src=str(src), repo=str(REPO_ROOT)), encoding="utf-8")
    home = home_with_a_note(tmp_path / "home", "Sourdough", "Feed the sourdough starter twice a day.")
    yield home, launcher, src / "memories_tui"
    stop(home)


def run(home: Path, launcher: Path, *args: str, passphrase: str | None = None) -> Result:
    done = subprocess.run([sys.executable, str(launcher), *args], capture_output=True, timeout=120, check=False,
                          env=cli_env(home, passphrase))
    return Result(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))


def upgrade(package: Path, module: str) -> None:
    """What `pip install -U` does to one file: a new file with other contents in its place."""
    path = package / module
    new = path.with_suffix(".new")
    new.write_text(path.read_text(encoding="utf-8") + "\n# upgraded\n", encoding="utf-8")
    new.replace(path)


def test_a_served_module_changed_on_disk_gets_the_restart_sentence_then_works(installed) -> None:
    home, launcher, package = installed
    assert run(home, launcher, "--json", "unlock", "notes", passphrase=PASS).code == 0
    assert run(home, launcher, "--json", "rag", "search", "notes", "sourdough").json["results"]
    pid = holder_pid(home)
    upgrade(package, "retrieval/search.py")
    refused: list[Result] = []

    def told() -> bool:
        refused.append(run(home, launcher, "--json", "rag", "search", "notes", "sourdough"))
        return refused[-1].code != 0

    wait_until(told, what="the daemon to notice the change")
    error = refused[-1].json["error"]
    assert error["code"] == "daemon_version_mismatch" and "memories daemon restart" in error["message"]
    assert "internal_error" not in refused[-1].stdout + refused[-1].stderr
    assert holder_pid(home) == pid  # it holds an unlocked vault: not restarted behind the user's back
    assert run(home, launcher, "daemon", "restart").code == 0
    assert holder_pid(home) != pid
    assert run(home, launcher, "--json", "unlock", "notes", passphrase=PASS).code == 0
    assert run(home, launcher, "--json", "rag", "search", "notes", "sourdough").json["results"]


def test_a_daemon_holding_nothing_unlocked_is_restarted_by_the_next_client(installed) -> None:
    home, launcher, package = installed
    assert run(home, launcher, "--json", "daemon", "--detach").code == 0
    pid = holder_pid(home)
    upgrade(package, "daemon/status.py")

    def restarted() -> bool:
        answer = run(home, launcher, "--json", "daemon", "status")
        assert answer.code == 0, answer.stdout + answer.stderr
        return lock_held(home) and holder_pid(home) != pid

    wait_until(restarted, what="a client to restart the daemon")
    assert run(home, launcher, "--json", "daemon", "status").json["pid"] == holder_pid(home)
