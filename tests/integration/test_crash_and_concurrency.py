"""kill -9 mid-ingest and two writers at once: nothing lost, nothing half-written (R-SEC-2, R-VAULT-3)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from memories_tui.engine import Engine
from memories_tui.vault.records import Record
from tests.helpers.cli import CHEAP_CLI, run_cli

PASS = "correct horse"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIES_")}
    env.update(MEMORIES_HOME=str(home), MEMORIES_PASSPHRASE=PASS)
    return env


def _all_records_decrypt(home: Path, vault: str) -> list[Record]:
    """Reopen the vault in a fresh engine: manifest verified, every latest revision decrypted."""
    engine = Engine.open(home)
    try:
        engine.unlock(vault, PASS)
        return engine.list_records(vault)
    finally:
        engine.close()


def test_kill_9_mid_ingest_leaves_all_or_nothing(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    vault = run_cli(home, "vault", "create", "notes", "--json").json["vault_id"]
    files = []
    for i in range(150):
        path = tmp_path / f"note{i:03}.md"
        path.write_text(f"# Note {i}\n\n" + ("段落內容 paragraph text. " * 800), encoding="utf-8")
        files.append(str(path))
    wal = home / "vaults" / f"{vault}.mvault-wal"
    killed_mid_write = 0
    for threshold in (64 * 1024, 512 * 1024, 1024 * 1024):
        proc = subprocess.Popen([sys.executable, str(CHEAP_CLI), "rag", "ingest", vault, *files],
                                env=_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # kill once the write transaction has spilled pages into the WAL, before it can commit
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if wal.exists() and wal.stat().st_size > threshold:
                break
            time.sleep(0.002)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed_mid_write += 1
        proc.wait()
        records = _all_records_decrypt(home, vault)
        titles = {r.title for r in records}
        # the batch is one transaction: every file fully present, or none of them
        assert titles in (set(), {f"Note {i}" for i in range(150)}), len(titles)
        for record in records:
            assert record.body.endswith("段落內容 paragraph text. ") and record.body.count("paragraph") == 800
    assert killed_mid_write >= 1
    # a final uninterrupted run completes and reports the right statuses
    done = run_cli(home, "rag", "ingest", vault, *files, "--json")
    assert done.code == 0
    statuses = {r["status"] for r in done.json["results"]}
    assert statuses <= {"created", "unchanged"}
    assert len(_all_records_decrypt(home, vault)) == 150


WRITER = """
import sys
from memories_tui.engine import Engine
from memories_tui.vault import crypto
crypto._TEST_KDF_OVERRIDE = crypto.KdfParams(8, 1, 1)  # the vault was made with cheap test params
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
                              env=_env(home), stderr=subprocess.PIPE) for name in ("A", "B")]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    records = _all_records_decrypt(home, vault)
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
