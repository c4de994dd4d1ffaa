"""Where the CLI's output cannot go (stdout closed, a full disk behind it) and where options
may be written: a clear sentence on stderr and a clear exit status, never a traceback; global
options before the verb work, a verb's option there is told where it goes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import CHEAP_CLI, cli_env, run_cli
from tests.helpers.vaults import PASS

EX_IOERR = 74


@pytest.fixture(scope="module")
def home(module_homes) -> Path:
    return module_homes.make(note=("Kyoto", "The JR pass covers local lines."))


def _run(home: Path, *args: str, stdout: object, stderr: object = subprocess.PIPE,
         close_stdout: bool = False) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, str(CHEAP_CLI), *args], stdin=subprocess.DEVNULL, stdout=stdout,
                          stderr=stderr, env=cli_env(home), timeout=120, check=False,
                          preexec_fn=(lambda: os.close(1)) if close_stdout else None)


@pytest.mark.parametrize("argv", [("--json", "memory", "list", "notes"), ("memory", "list", "notes"),
                                  ("--json", "vault", "list")])
def test_closed_stdout_is_refused_before_anything_runs(home: Path, argv: tuple[str, ...]) -> None:
    done = _run(home, *argv, stdout=None, close_stdout=True)
    err = done.stderr.decode()
    assert done.returncode == EX_IOERR, err
    assert "Traceback" not in err and "Standard output is closed" in err and "nothing was done" in err


@pytest.mark.parametrize("argv", [("--json", "vault", "list"), ("vault", "list"), ("--json", "memory", "list", "notes"),
                                  ("--json", "memory", "read", "notes", "0000000000000000")])
def test_a_full_disk_behind_stdout_is_one_sentence_on_stderr(home: Path, argv: tuple[str, ...]) -> None:
    with open("/dev/full", "wb") as full:
        done = _run(home, *argv, stdout=full)
    err = done.stderr.decode()
    assert done.returncode == EX_IOERR, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert "Could not write to standard output" in err and "No space left on device" in err
    assert "Unexpected" not in err and "internal_error" not in err
    if "read" in argv:  # the command's own failure is still said
        assert "0000000000000000" in err


def test_full_stdout_and_closed_stderr_still_end_quietly_with_the_status(home: Path) -> None:
    with open("/dev/full", "wb") as full:
        done = _run(home, "--json", "vault", "list", stdout=full, stderr=subprocess.DEVNULL)
    assert done.returncode == EX_IOERR


def test_global_options_work_before_the_verb(home: Path, tmp_path: Path) -> None:
    secret = tmp_path / "pass"
    secret.write_text(PASS)
    before = run_cli(home, "--no-daemon", "--passphrase-file", str(secret), "--json", "rag", "search", "notes", "JR",
                     "--mode", "bm25", passphrase=None)
    assert before.code == 0 and before.json["results"], before.stdout + before.stderr
    after = run_cli(home, "--json", "rag", "search", "notes", "JR", "--mode", "bm25", "--no-daemon",
                    "--passphrase-file", str(secret), passphrase=None)
    assert after.json["results"] == before.json["results"]
    wrong = tmp_path / "wrong"
    wrong.write_text("not the passphrase")
    refused = run_cli(home, "--passphrase-file", str(wrong), "--json", "rag", "search", "notes", "JR",
                      passphrase=None)
    assert refused.json["error"]["code"] == "wrong_passphrase"  # the file given before the verb is used


def test_a_verb_option_before_the_verb_is_told_where_it_goes(home: Path) -> None:
    r = run_cli(home, "--mode", "bm25", "rag", "search", "notes", "JR")
    assert r.code == 2 and "memories: error: --mode belongs to a command" in r.stderr, r.stderr
    assert "--passphrase-file" in r.stderr  # the options that may go first are listed
    after_a_value = run_cli(home, "--home", str(home), "--mode", "bm25", "rag", "search", "notes", "JR")
    assert "--mode belongs to a command" in after_a_value.stderr, after_a_value.stderr


@pytest.mark.parametrize("argv", [("nosuchverb",), ("rag", "search"), ("vault",)])
def test_usage_errors_say_memories_once(home: Path, argv: tuple[str, ...]) -> None:
    r = run_cli(home, *argv)
    assert r.code == 2
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("memories: error: ") and "memories: error: memories" not in line, line
    assert line.count("memories:") == 1
