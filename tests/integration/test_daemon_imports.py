"""A CLI call the resident engine serves loads the client, argparse and the printing of results
(the result types, and the folding that highlights a snippet), not the engine: no cryptography,
SQLite, numpy, onnxruntime, word segmenter, pydantic, vault store or index modules. That is most of what such a call costs (Python's start and imports),
so each verb runs as a real `python -m memories_tui` process beside a real daemon, and the
modules it loaded are read from its `sys.modules` at exit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import call_cli, cli_env
from tests.helpers.daemon import stop, unlock

# Third-party packages (top-level names) and our modules a served call must not import.
HEAVY_PACKAGES = {"numpy", "onnxruntime", "jieba", "Stemmer", "cryptography", "argon2", "zxcvbn",
                  "babel", "pydantic", "pydantic_core", "httpx", "rich", "sqlite3", "textual", "mcp", "tokenizers"}
HEAVY_OURS = ("memories_tui.engine.", "memories_tui.vault.store", "memories_tui.vault.crypto",
              "memories_tui.vault.keys", "memories_tui.vault.format", "memories_tui.index.",
              "memories_tui.retrieval.search", "memories_tui.models.", "memories_tui.text.query",
              "memories_tui.text.chunking", "memories_tui.frontend.passphrase", "memories_tui.daemon.service",
              "memories_tui.daemon.server")

# The child runs the CLI as `python -m memories_tui` does and writes what it imported to a file
# at exit, so its stdout and exit status stay the CLI's.
CHILD = """
import atexit, json, runpy, sys
record = sys.argv[1]
def report():
    with open(record, "w") as out:
        json.dump(sorted(sys.modules), out)
atexit.register(report)
sys.argv = ["memories", *sys.argv[2:]]
runpy.run_module("memories_tui", run_name="__main__", alter_sys=True)
"""


@pytest.fixture(scope="module")
def served_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("daemon-imports") / "home"
    home.mkdir()
    assert call_cli(home, "vault", "create", "notes").code == 0
    added = call_cli(home, "--json", "memory", "add", "notes", "--title", "Sourdough", "--text",
                     "Feed the starter twice a day. 酸種麵包 lantern festival")
    assert added.code == 0
    assert unlock(home, "notes").code == 0
    yield home, added.json["id"]
    stop(home)


def imported_by(home: Path, tmp_path: Path, *argv: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    record = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", CHILD, str(record), *argv], capture_output=True, text=True,
                          env=cli_env(home, passphrase=None, MEMORIES_QUICK_OFF="1"),  # no passphrase anywhere;
                          timeout=120, check=False)  # the client that asks the daemon per call (the quick way:
    return done, json.loads(record.read_text())  # test_cli_quick_call.py)


LIGHT_OURS = ("memories_tui.engine.api",)  # the table of operations the client is made from: stdlib only


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if (m.split(".")[0] in HEAVY_PACKAGES or m.startswith(HEAVY_OURS))
            and m not in LIGHT_OURS]


VERBS = [
    ("rag", "search", "notes", "sourdough lantern"),
    ("--json", "rag", "search", "notes", "酸種", "--mode", "bm25", "--limit", "3"),
    ("memory", "search", "notes", "starter"),
    ("memory", "list", "notes"),
    ("memory", "read", "notes", "{id}"),
    ("memory", "add", "notes", "--title", "Later", "--text", "a note added through the daemon"),
    ("--json", "memory", "update", "notes", "{id}", "--title", "Sourdough starter"),
    ("rag", "ask", "notes", "How often is the starter fed?"),
    ("vault", "policy", "notes"),
]


@pytest.mark.parametrize("argv", VERBS, ids=lambda a: " ".join(a)[:40])
def test_a_verb_the_daemon_serves_loads_no_engine_modules(served_home, tmp_path, argv) -> None:
    home, record_id = served_home
    done, modules = imported_by(home, tmp_path, *(a.format(id=record_id) for a in argv))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "memories_tui.daemon.remote_engine" in modules  # it was served by the daemon, not in-process
    assert heavy(modules) == []


def test_the_same_verb_in_process_loads_the_engine(served_home, tmp_path) -> None:
    """The check above can see the engine: run in-process, the same search loads it."""
    home, _ = served_home
    record = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", CHILD, str(record), "--no-daemon", "rag", "search", "notes", "x"],
                          capture_output=True, text=True, env=cli_env(home, passphrase="wrong"), timeout=120,
                          check=False)
    assert done.returncode != 0  # the wrong passphrase: it tried to unlock here
    assert "memories_tui.engine.facade" in heavy(json.loads(record.read_text()))
