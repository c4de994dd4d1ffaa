"""Faults through the resident engine, with real processes: unlock → no passphrase → lock → the
next call needs one; the daemon killed mid-ingest (nothing written, a clear error, the next
run completes). ctrl+c in the CLI cancelling the daemon's work is tested both ways a served
verb goes, in test_cli_quick_call.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from memories_tui import testhooks
from tests.helpers.cli import CHEAP_CLI, cli_env, run_cli
from tests.helpers.daemon import daemon, lock_held, stop, unlock, wait_until
from tests.helpers.vaults import records_of


def test_unlock_once_then_no_passphrase_then_lock_needs_it_again(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_cli(home, "vault", "create", "notes").code == 0
    assert run_cli(home, "memory", "add", "notes", "--title", "Kyoto", "--text", "京都旅行 trip").code == 0
    try:
        assert unlock(home, "notes", "--for", "1h").code == 0
        found = run_cli(home, "--json", "rag", "search", "notes", "京都", passphrase=None)
        assert found.code == 0, found.stderr
        assert found.json["results"][0]["title"] == "Kyoto"
        assert run_cli(home, "lock", "notes", passphrase=None).code == 0
        refused = run_cli(home, "--json", "rag", "search", "notes", "京都", passphrase=None)
        assert refused.code == 2 and "No passphrase given" in refused.json["error"]["message"]
        again = run_cli(home, "--json", "rag", "search", "notes", "京都")  # in this process, with the passphrase
        assert again.code == 0 and again.json["results"][0]["title"] == "Kyoto"
    finally:
        stop(home)


def test_daemon_killed_mid_ingest_loses_nothing_and_says_so(tmp_path: Path) -> None:
    """The daemon (not the CLI) stops at the test hook once the batch is written but not
    committed, and is killed there: the CLI gets a clear error, the vault shows none of the
    batch, and the same command completes against the next daemon."""
    home = tmp_path / "home"
    vault = run_cli(home, "--json", "vault", "create", "notes").json["vault_id"]
    files = []
    for i in range(20):
        path = tmp_path / f"note{i:02}.md"
        path.write_text(f"# Note {i}\n\n" + "段落內容 paragraph text. " * 200, encoding="utf-8")
        files.append(path.name)
    ready = tmp_path / "paused"
    with daemon(home, env={testhooks.ENV: f"vault-add-before-commit:{ready}"}) as pid:
        assert unlock(home, "notes").code == 0
        cli = subprocess.Popen([sys.executable, str(CHEAP_CLI), "--json", "rag", "ingest", "notes", *files],
                               cwd=tmp_path, env=cli_env(home, None), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_until(lambda: ready.exists() or cli.poll() is not None, 300, "the daemon to pause before commit")
        assert int(ready.read_text()) == pid  # the daemon did the writing, not the CLI
        os.kill(pid, signal.SIGKILL)
        out, err = cli.communicate(timeout=120)
    assert cli.returncode == 1 and b"Traceback" not in err
    assert b'"code": "daemon_gone"' in out and b"nothing it had not finished was written" in out
    wait_until(lambda: not lock_held(home), what="the killed daemon's lock to drop")
    assert records_of(home, vault) == []  # the batch never committed: none of it is there
    try:
        assert unlock(home, "notes").code == 0  # a new daemon
        done = subprocess.run([sys.executable, str(CHEAP_CLI), "--json", "rag", "ingest", "notes", *files],
                              cwd=tmp_path, env=cli_env(home, None), capture_output=True, check=False)
        assert done.returncode == 0, done.stderr
    finally:
        stop(home)
    assert {r.title for r in records_of(home, vault)} == {f"Note {i}" for i in range(20)}
