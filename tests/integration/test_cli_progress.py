"""CLI progress and `rag model-install --from DIR` through the real CLI.

Progress goes to stderr only: a rich bar when stderr is a terminal (a real pseudo-terminal
here), plain lines when it is a pipe, nothing with --json; stdout holds only the results."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import CHEAP_CLI, run_cli
from tests.helpers.paths import GEMMA_SMALL_NAMES, require_gemma_small_files
from tests.helpers.vaults import PASS


@pytest.fixture
def vault(tmp_path: Path) -> tuple[Path, list[Path]]:
    home = tmp_path / "home"
    assert run_cli(home, "vault", "create", "notes").code == 0
    files = []
    for n in range(3):
        f = tmp_path / f"note{n}.md"
        f.write_text(f"# Note {n}\n\nBread and coffee, take {n}.\n", encoding="utf-8")
        files.append(f)
    return home, files


def test_ingest_progress_is_plain_lines_on_a_pipe_and_absent_with_json(vault) -> None:
    home, files = vault
    human = run_cli(home, "rag", "ingest", "notes", *map(str, files))
    assert human.code == 0, human.stderr
    assert "Ingesting: 3/3 files" in human.stderr
    assert "Ingesting" not in human.stdout and "created" in human.stdout
    assert "\x1b[" not in human.stderr  # no terminal codes into a pipe
    quiet = run_cli(home, "--json", "rag", "ingest", "notes", *map(str, files))
    assert quiet.code == 0 and "Ingesting" not in quiet.stderr
    assert [r["status"] for r in json.loads(quiet.stdout)["results"]] == ["unchanged"] * 3


def test_batch_search_progress_on_stderr_results_on_stdout(vault, tmp_path: Path) -> None:
    home, files = vault
    assert run_cli(home, "rag", "ingest", "notes", *map(str, files)).code == 0
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"id": f"q{n}", "text": "bread"}) + "\n" for n in range(4)),
                       encoding="utf-8")
    out = run_cli(home, "rag", "search", "notes", "--queries", str(queries))
    assert out.code == 0, out.stderr
    assert "Searching: 4/4 queries" in out.stderr
    assert "== q3: bread" in out.stdout and "Searching" not in out.stdout


def test_ingest_on_a_terminal_draws_a_rich_bar_on_stderr(vault) -> None:
    home, files = vault
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIES_")}
    env.update(MEMORIES_HOME=str(home), MEMORIES_PASSPHRASE=PASS, PYTHONIOENCODING="utf-8", TERM="xterm-256color",
               COLUMNS="100")
    done = subprocess.run([sys.executable, str(CHEAP_CLI), "rag", "ingest", "notes", *map(str, files)],
                          stdout=subprocess.PIPE, stderr=slave, env=env, timeout=120, check=False)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    stderr = b"".join(chunks).decode("utf-8", errors="replace")
    assert done.returncode == 0, stderr
    assert "Ingesting" in stderr and "3/3" in stderr and "━" in stderr  # the bar itself
    assert b"Ingesting" not in done.stdout and b"created" in done.stdout


def test_model_install_from_a_folder_checks_every_hash(tmp_path: Path) -> None:
    names = list(GEMMA_SMALL_NAMES)
    small = require_gemma_small_files()  # fails under CI, skips with a reason elsewhere
    source = tmp_path / "downloaded"
    (source / "onnx").mkdir(parents=True)
    for n in names:
        (source / n).write_bytes((small / n).read_bytes())
    (source / "onnx" / "model_q4.onnx").write_bytes(b"not the pinned graph")
    home = tmp_path / "home"
    out = run_cli(home, "--json", "rag", "model-install", "--from", str(source), passphrase=None)
    assert out.code != 0
    payload = json.loads(out.stdout)
    assert payload["error"]["code"] == "model_install_failed"
    by_path = {f["path"]: f for f in payload["files"]}
    assert all(by_path[n]["status"] == "copied" for n in names)
    assert "bytes" in by_path["onnx/model_q4.onnx"]["error"]  # wrong size: refused before copying
    assert "not found" in by_path["onnx/model_q4.onnx_data"]["error"]
    model_dir = home / "models" / "embeddinggemma"
    assert not (model_dir / "onnx" / "model_q4.onnx").exists()
    assert (model_dir / "tokenizer.json").read_bytes() == (small / "tokenizer.json").read_bytes()

    missing = run_cli(home, "rag", "model-install", "--from", str(tmp_path / "nowhere"), passphrase=None)
    assert missing.code != 0 and "is not a folder" in missing.stderr and "Traceback" not in missing.stderr
