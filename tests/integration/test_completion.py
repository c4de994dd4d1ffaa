"""`memories completion bash` in a real bash: the printed script is sourced, its completion
function is called the way bash calls it on TAB (COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT)
and COMPREPLY is read back. The function runs the real `memories` of this environment."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memories_tui.cli import build_parser
from tests.helpers.cli import run_cli

BIN = Path(sys.executable).parent

DRIVER = r"""
source <(memories completion bash) || exit 3
spec=$(complete -p memories) || exit 4
func=${spec##*-F }; func=${func%% *}
COMP_WORDS=("$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
COMP_TYPE=9
COMPREPLY=()
"$func" memories "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
"""


@pytest.fixture(scope="module")
def bash() -> str:
    found = shutil.which("bash")
    assert found, "bash is part of the Debian base; the completion test needs it"
    return found


def complete(bash: str, *words: str, env: dict[str, str] | None = None) -> list[str]:
    """What bash offers for the command line `words` (the last word is the one being completed)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORIES_", "_ARGCOMPLETE", "COMP_"))}
    environ["PATH"] = f"{BIN}{os.pathsep}{environ.get('PATH', '')}"
    environ.update(env or {})
    done = subprocess.run([bash, "--norc", "--noprofile", "-c", DRIVER, "driver", "memories", *words],
                          capture_output=True, text=True, env=environ, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return sorted(line.strip() for line in done.stdout.splitlines() if line.strip())


def test_verbs_and_subverbs_complete(bash: str) -> None:
    assert complete(bash, "va") == ["vault"]
    assert complete(bash, "rag", "se") == ["search"]
    assert {"create", "list", "passwd", "policy"} <= set(complete(bash, "vault", ""))


def test_every_verb_of_the_parser_completes(bash: str) -> None:
    """Generated from the live parser: a verb anyone adds is offered without touching completion."""
    parser = build_parser()
    (verbs,) = [a.choices for a in parser._actions if a.dest == "==SUPPRESS==" and getattr(a, "choices", None)]
    assert set(complete(bash, "")) == set(verbs)
    assert {"--version", "--home", "--json", "--help"} <= set(complete(bash, "--"))


def test_options_and_their_choices_complete(bash: str) -> None:
    assert complete(bash, "rag", "search", "--mo") == ["--mode"]
    assert complete(bash, "rag", "search", "notes", "q", "--mode", "hy") == ["hybrid"]
    assert complete(bash, "completion", "") == ["bash", "fish", "zsh"]
    assert {"--home", "--json", "--allow-weak-passphrase"} <= set(complete(bash, "vault", "create", "--"))


def test_vault_names_complete_from_the_home(bash: str, tmp_path: Path) -> None:
    home, other = tmp_path / "home", tmp_path / "other"
    for where, name in ((home, "notes"), (home, "work"), (home, "twin"), (other, "twin")):
        assert run_cli(where, "vault", "create", name).code == 0
    (copied,) = (other / "vaults").glob("*.mvault")
    shutil.copy(copied, home / "vaults" / copied.name)  # a vault brought over from another home
    ids = {v["vault_id"] for v in run_cli(home, "--json", "vault", "list").json["vaults"] if v["name"] == "twin"}
    assert len(ids) == 2
    assert complete(bash, "rag", "search", "--home", str(home), "n") == ["notes"]
    assert complete(bash, "memory", "list", "w", env={"MEMORIES_HOME": str(home)}) == ["work"]
    assert complete(bash, "mcp", "--home", str(home), "--vault", "wo") == ["work"]  # an option's VAULT_ID too
    # a shared name would be ambiguous: those vaults are offered by VAULT_ID
    offered = complete(bash, "vault", "passwd", "--home", str(home), "")
    assert {"notes", "work", *ids} <= set(offered) and "twin" not in offered
    # no home, no vaults: nothing offered, no error
    assert complete(bash, "memory", "list", "--home", str(tmp_path / "none"), "n") == []


def test_the_completion_verb_prints_each_shell_and_refuses_others(tmp_path: Path) -> None:
    for shell, marker in (("bash", "complete "), ("zsh", "#compdef memories"), ("fish", "complete ")):
        done = run_cli(tmp_path, "completion", shell, passphrase=None)
        assert done.code == 0 and marker in done.stdout, done.stderr
        as_json = run_cli(tmp_path, "--json", "completion", shell, passphrase=None)
        assert as_json.json == {"shell": shell, "script": done.stdout}
    missing = run_cli(tmp_path, "completion", passphrase=None)
    assert missing.code == 2 and "shell" in missing.stderr and "Traceback" not in missing.stderr
    wrong = run_cli(tmp_path, "--json", "completion", "ksh", passphrase=None)
    assert wrong.code == 2 and json.loads(wrong.stdout)["error"]["code"] == "usage_error"
    assert not (tmp_path / "vaults").exists()  # printing a script touches no home
