"""The quick way's client (cli/quick_call.py): which command lines it sends, and the home it finds
without platformdirs (its import would be a quarter of a served call's start-up), which must be
the one platformdirs names."""

from __future__ import annotations

from pathlib import Path
from types import CodeType

import platformdirs
import pytest

from memories_tui.cli import quick_call


@pytest.mark.parametrize("xdg", [None, "", "   ", "DATA"])
def test_the_default_home_is_platformdirs(tmp_path, monkeypatch, xdg) -> None:
    monkeypatch.delenv("MEMORIES_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    if xdg is None:
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / xdg) if xdg.strip() else xdg)
    expected = Path(platformdirs.user_data_dir("memories", appauthor=False))
    expected.mkdir(parents=True)
    assert quick_call._home([]) == expected


def test_home_option_and_environment(tmp_path, monkeypatch) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.setenv("MEMORIES_HOME", str(tmp_path / "a"))
    monkeypatch.chdir(tmp_path)
    assert quick_call._home(["rag", "search"]) == tmp_path / "a"
    assert quick_call._home(["--home", "b", "rag", "search"]) == tmp_path / "b"
    assert quick_call._home(["--home=a", "rag", "--home", "b"]) == tmp_path / "b"  # the last, as argparse
    assert quick_call._home(["--home", "missing"]) is None  # nothing to ask: the ordinary way says so


@pytest.mark.parametrize(("argv", "asked"), [
    (["rag", "search", "v", "q"], True), (["--json", "memory", "add", "v", "--text", "t"], True),
    (["vault", "list"], False), (["rag", "search", "v", "q", "--help"], False),
    (["memory", "add", "v", "--file=x"], False), (["rag", "ask", "v", "--questions", "f"], False),
    (["search", "rag"], False), (["mcp", "--vault", "v"], False),
])
def test_which_command_lines_are_sent(monkeypatch, argv, asked) -> None:
    monkeypatch.delenv("MEMORIES_NO_DAEMON", raising=False)
    monkeypatch.delenv(quick_call.QUICK_OFF_ENV, raising=False)
    monkeypatch.delenv("_ARGCOMPLETE", raising=False)
    assert quick_call._servable(argv) is asked
    monkeypatch.setenv("MEMORIES_NO_DAEMON", "1")
    assert quick_call._servable(argv) is False


def test_the_daemon_runs_only_cli_verbs_of_the_engine_table() -> None:
    """What the client sends and what the daemon runs are the same verbs, each the CLI face of an
    operation the engine's table serves to the CLI."""
    from memories_tui.cli.served_run import SERVED
    from memories_tui.engine.api import by_name

    assert {h.__name__ for h in SERVED} == {f"cmd_{group}_{verb}" for group, verb in quick_call.COMMANDS}
    for handler, (operation, _rule) in SERVED.items():
        assert "cli" in by_name()[operation].fronts, handler.__name__
        assert operation in _names(handler.__code__), handler.__name__  # the handler calls it


def _names(code: CodeType) -> set[str]:
    """The names a function's code (and the functions inside it) uses."""
    return set(code.co_names).union(*(_names(c) for c in code.co_consts if isinstance(c, CodeType)))


def test_the_client_asks_for_the_method_the_daemon_adds() -> None:
    from memories_tui.cli import served_run

    assert quick_call.METHOD == served_run.METHOD
