"""kill -9 mid-ingest and two writers at once: nothing lost, nothing half-written."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from memories_tui import testhooks
from memories_tui.engine import Engine
from tests.helpers.cli import CHEAP_CLI, cli_env, run_cli
from tests.helpers.vaults import CHILD_PRELUDE, PASS, records_of

N_FILES, REPEAT = 100, 800


def _wait_for_pause(proc: subprocess.Popen, ready: Path) -> None:
    """Block until the child reports it reached the pause point (or died trying)."""
    deadline = time.monotonic() + 300  # only a guard against a hang; never reached when healthy
    while not ready.exists():
        if proc.poll() is not None:
            raise AssertionError(f"ingest exited with {proc.returncode} before reaching the pause point")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("ingest never reached the pause point")
        time.sleep(0.01)


def test_kill_9_mid_ingest_leaves_all_or_nothing(tmp_path, cheap_kdf):
    """The ingest is stopped by a test hook (memories_tui.testhooks) after every record of the
    batch is written but before COMMIT, then killed: deterministic, no timing race."""
    home = tmp_path / "home"
    vault = run_cli(home, "vault", "create", "notes", "--json").json["vault_id"]
    files = []
    for i in range(N_FILES):
        path = tmp_path / f"note{i:03}.md"
        path.write_text(f"# Note {i}\n\n" + ("段落內容 paragraph text. " * REPEAT), encoding="utf-8")
        files.append(str(path))
    wal = home / "vaults" / f"{vault}.mvault-wal"
    ready = tmp_path / "paused"
    env = cli_env(home)
    env[testhooks.ENV] = f"vault-add-before-commit:{ready}"
    proc = subprocess.Popen([sys.executable, str(CHEAP_CLI), "rag", "ingest", vault, *files],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_pause(proc, ready)
        assert int(ready.read_text()) == proc.pid
        # ~2.3 MB is more than SQLite's page cache: uncommitted pages have spilled into the WAL
        assert wal.stat().st_size > 0
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    # the batch is one transaction and it never committed: none of it is visible
    assert records_of(home, vault) == []
    # an uninterrupted run then completes and reports the right statuses
    done = run_cli(home, "rag", "ingest", vault, *files, "--json")
    assert done.code == 0, done.stderr
    assert [r["status"] for r in done.json["results"]] == ["created"] * N_FILES
    records = records_of(home, vault)
    assert {r.title for r in records} == {f"Note {i}" for i in range(N_FILES)}
    for record in records:
        assert record.body.endswith("段落內容 paragraph text. ") and record.body.count("paragraph") == REPEAT


WRITER = CHILD_PRELUDE + """
from memories_tui import testhooks
from memories_tui.engine import Engine
eng = Engine.open(sys.argv[1])
eng.unlock(sys.argv[2], sys.argv[3])
shared = sys.argv[4]
for i in range(int(sys.argv[6])):
    eng.add_record(sys.argv[2], kind="memory", title=f"{sys.argv[5]}-{i}", body="x" * 200)
    eng.update_record(sys.argv[2], shared, body=f"{sys.argv[5]}-{i}")
eng.close()
"""


def test_two_processes_writing_at_once_lose_nothing(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    vault = run_cli(home, "vault", "create", "notes", "--json").json["vault_id"]
    shared = run_cli(home, "memory", "add", vault, "--title", "shared", "--text", "v0", "--json").json["id"]
    n = 40
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(home), vault, PASS, shared, name, str(n)],
                              env=cli_env(home), stderr=subprocess.PIPE) for name in ("A", "B")]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    records = records_of(home, vault)
    titles = {r.title for r in records}
    assert {f"{w}-{i}" for w in "AB" for i in range(n)} <= titles
    engine = Engine.open(home)
    engine.unlock(vault, PASS)
    try:
        assert engine.read_record(vault, shared).revision == 1 + 2 * n  # every update is its own revision
        assert engine.revisions(vault, shared) == list(range(1, 2 + 2 * n))
        bodies = [engine.read_record(vault, shared, r).body for r in range(2, 2 + 2 * n)]
        assert sorted(bodies) == sorted(f"{w}-{i}" for w in "AB" for i in range(n))
    finally:
        engine.close()
