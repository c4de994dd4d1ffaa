"""A served verb's command line run by the daemon (cli/quick_call.py, cli/served_run.py) prints
exactly what the ordinary way prints through the same daemon: stdout, stderr and exit status,
text and --json, errors included, in English and Chinese; what is not for that way (a vault the
daemon does not hold, a bad option, help) is passed back and runs the ordinary way. Each command
runs as a real process both ways against one real daemon; the daemon's log says which way it went.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import CHEAP_CLI, Result, cli_env, run_cli
from tests.helpers.daemon import stop, unlock

QUICK_OFF = {"MEMORIES_QUICK_OFF": "1"}
MISSING = "0123456789abcdef"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    home = tmp_path_factory.mktemp("quick-call") / "home"
    assert run_cli(home, "vault", "create", "notes").code == 0
    assert run_cli(home, "vault", "create", "other").code == 0
    added = run_cli(home, "--json", "memory", "add", "notes", "--title", "Sourdough", "--tag", "bread", "--text",
                    "Feed the starter twice a day. 酸種麵包 lantern festival.\nSecond line.")
    assert added.code == 0, added.stderr
    for n in range(3):
        assert run_cli(home, "memory", "add", "notes", "--title", f"Rye {n}", "--text", f"Rye bread number {n} "
                       "with caraway, by the river.").code == 0
    assert unlock(home, "notes").code == 0
    yield home, added.json["id"]
    stop(home)


def served_count(home: Path) -> int:
    return (home / "daemon" / "daemon.log").read_text().count("cli_run served")


def both_ways(home: Path, argv: list[str], env: dict[str, str] | None = None,
              cwd: Path | None = None) -> tuple[Result, Result, int]:
    """The command through the daemon's rendering, then the ordinary way; and how many of the
    two the daemon rendered."""
    before = served_count(home)
    quick = _run(home, argv, env or {}, cwd)
    ordinary = _run(home, argv, {**(env or {}), **QUICK_OFF}, cwd)
    return quick, ordinary, served_count(home) - before


def _run(home: Path, argv: list[str], env: dict[str, str], cwd: Path | None) -> Result:
    done = subprocess.run([sys.executable, str(CHEAP_CLI), *argv], capture_output=True, env=cli_env(home, None, **env),
                          cwd=cwd, stdin=subprocess.DEVNULL, timeout=120, check=False)
    return Result(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))


SAME = [
    ["rag", "search", "notes", "sourdough lantern"],
    ["--json", "rag", "search", "notes", "酸種", "--mode", "bm25", "--limit", "3"],
    ["rag", "search", "notes", "rye", "--match-mode", "all", "--limit", "2", "--json"],
    ["rag", "search", "notes", "nothing-matches-this"],
    ["rag", "search", "notes", "rye", "--limit", "0"],
    ["--json", "rag", "search", "notes", "rye", "--limit", "0"],
    ["rag", "search", "notes", "--", "-starter"],
    ["rag", "search", "notes", "rye", "--mode", "hybrid"],  # no model: a note on stderr, then the BM25 hits
    ["--json", "rag", "search", "notes", "rye", "--mode", "vector"],
    ["memory", "search", "notes", "starter"],
    ["memory", "search", "--json", "notes", "river"],
    ["memory", "list", "notes"],
    ["--json", "memory", "list", "notes", "--kind", "memory"],
    ["memory", "read", "notes", "{id}"],
    ["--json", "memory", "read", "notes", "{id}"],
    ["memory", "read", "notes", MISSING],
    ["--json", "memory", "read", "notes", MISSING],
    ["memory", "read", "notes", "{id}", "--revision", "9"],
    ["rag", "ask", "notes", "How often is the starter fed?"],
    ["--json", "rag", "ask", "notes", "How often is the starter fed?", "--limit", "2"],
    ["rag", "ask", "notes", "What about rye?", "--limit", "0"],
    ["memory", "delete", "notes", MISSING],
    ["rag", "status", "notes"],
    ["--json", "rag", "status", "notes"],
    ["--json", "memory", "update", "notes", MISSING, "--title", "x"],
]


@pytest.mark.parametrize("argv", SAME, ids=lambda a: " ".join(a)[:48])
def test_the_daemon_renders_what_the_ordinary_way_prints(served, argv) -> None:
    home, record_id = served
    quick, ordinary, rendered = both_ways(home, [a.format(id=record_id) for a in argv])
    assert rendered == 1  # the first went the quick way, the second did not
    assert (quick.code, quick.stdout, quick.stderr) == (ordinary.code, ordinary.stdout, ordinary.stderr)
    assert "Traceback" not in quick.stderr


@pytest.mark.parametrize("env", [{"LANG": "zh_TW.UTF-8"}, {"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}])
@pytest.mark.parametrize("argv", [["rag", "search", "notes", "nothing-matches-this"],
                                  ["rag", "search", "notes", "rye", "--limit", "0"],
                                  ["memory", "read", "notes", MISSING], ["memory", "list", "notes"],
                                  ["--lang", "en", "memory", "read", "notes", MISSING],
                                  ["rag", "ask", "notes", "How often is the starter fed?"]],
                         ids=lambda a: " ".join(a)[:40])
def test_in_the_callers_language(served, env, argv) -> None:
    home, _ = served
    quick, ordinary, rendered = both_ways(home, argv, env)
    assert rendered == 1
    assert (quick.code, quick.stdout, quick.stderr) == (ordinary.code, ordinary.stdout, ordinary.stderr)


def test_the_language_of_the_config_and_a_home_given_relative(served, tmp_path) -> None:
    home, _ = served
    config = tmp_path / "zh.toml"
    config.write_text('[ui]\nlanguage = "zh-Hans"\n')
    elsewhere = home.parent / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    argv = ["--home", str(Path("..") / home.name), "--config", str(config), "memory", "read", "notes", MISSING]
    quick, ordinary, rendered = both_ways(home, argv, cwd=elsewhere)
    assert rendered == 1
    assert re.search("[\u4e00-\u9fff]", quick.stderr), quick.stderr  # the config's language, not the locale's
    assert (quick.code, quick.stdout, quick.stderr) == (ordinary.code, ordinary.stdout, ordinary.stderr)


def _same_but_ids(a: str, b: str) -> bool:
    def plain(text: str) -> str:
        return re.sub(r"\b[0-9a-f]{16}\b", "ID", re.sub(r"revision\"?:? \d+|→ revision \d+", "revision N", text))

    return plain(a) == plain(b)


@pytest.mark.parametrize("argv", [
    ["memory", "add", "notes", "--title", "Later", "--text", "a note added through the daemon"],
    ["--json", "memory", "add", "notes", "--kind", "card", "--title", "T", "--text", "x", "--tag", "a"],
    ["memory", "update", "notes", "{id}", "--title", "Sourdough starter"],
    ["--json", "memory", "update", "notes", "{id}", "--text", "Feed it daily."],
], ids=lambda a: " ".join(a)[:40])
def test_changes_print_the_same_but_for_the_new_ids_and_revisions(served, argv) -> None:
    home, record_id = served
    quick, ordinary, rendered = both_ways(home, [a.format(id=record_id) for a in argv])
    assert rendered == 1
    assert quick.code == ordinary.code == 0, quick.stderr
    assert quick.stderr == ordinary.stderr
    assert _same_but_ids(quick.stdout, ordinary.stdout), (quick.stdout, ordinary.stdout)


def test_a_delete_prints_the_same(served) -> None:
    home, _ = served
    ids = [run_cli(home, "--json", "memory", "add", "notes", "--title", "Gone", "--text", "soon", passphrase=None)
           .json["id"] for _ in range(2)]
    before = served_count(home)
    quick = _run(home, ["memory", "delete", "notes", ids[0]], {}, None)
    ordinary = _run(home, ["memory", "delete", "notes", ids[1]], QUICK_OFF, None)
    assert served_count(home) - before == 1
    assert (quick.code, quick.stderr) == (ordinary.code, ordinary.stderr) == (0, "")
    assert quick.stdout.replace(ids[0], "ID") == ordinary.stdout.replace(ids[1], "ID")
    listed = json.loads(_run(home, ["--json", "memory", "list", "notes"], {}, None).stdout)
    assert not {r["id"] for r in listed["records"]} & set(ids)


PASSED_BACK = [
    ["rag", "search", "notes", "rye", "--mode", "nope"],  # the parser's refusal
    ["rag", "search", "notes"],  # no query
    ["--json", "rag", "search", "notes", "rye", "--limt", "3"],
    ["rag", "search", "--help"],
    ["memory", "add", "notes", "--title", "From a file", "--file", "missing.txt"],  # the caller's file
    ["memory", "add", "notes", "--title", "From a file", "--fil", "missing.txt"],
    ["rag", "search", "--no-daemon", "notes", "rye"],
    ["rag", "search", "other", "rye"],  # a vault the daemon does not hold: asks for a passphrase
    ["rag", "search", "missing-vault", "rye"],
    ["vault", "list"],
    ["rag", "search", "notes", "rye", "--debug"],
]


@pytest.mark.parametrize("argv", PASSED_BACK, ids=lambda a: " ".join(a)[:40])
def test_what_is_not_for_the_daemon_runs_the_ordinary_way(served, argv) -> None:
    home, _ = served
    quick, ordinary, rendered = both_ways(home, argv)
    assert rendered == 0
    assert (quick.code, quick.stdout, quick.stderr) == (ordinary.code, ordinary.stdout, ordinary.stderr)
    assert "Traceback" not in quick.stderr


def test_a_served_command_imports_neither_the_parser_nor_the_engine(served, tmp_path) -> None:
    """The client's side of the quick way: a real `python -m memories_tui` whose modules are read at exit."""
    home, _ = served
    record = tmp_path / "modules.json"
    child = ("import atexit, json, runpy, sys\n"
             "record = sys.argv[1]\n"
             "atexit.register(lambda: json.dump(sorted(sys.modules), open(record, 'w')))\n"
             "sys.argv = ['memories', *sys.argv[2:]]\n"
             "runpy.run_module('memories_tui', run_name='__main__', alter_sys=True)\n")
    before = served_count(home)
    done = subprocess.run([sys.executable, "-c", child, str(record), "--json", "rag", "search", "notes", "rye"],
                          capture_output=True, text=True, env=cli_env(home, None), timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"]
    assert served_count(home) == before + 1
    modules = json.loads(record.read_text())
    ours = [m for m in modules if m.startswith("memories_tui")]
    assert set(ours) <= {"memories_tui", "memories_tui.__main__", "memories_tui.cli", "memories_tui.cli.quick",
                         "memories_tui.cli.quick_call", "memories_tui.frontend", "memories_tui.frontend.daemon_socket",
                         "memories_tui.testhooks"}, ours
    heavy = {"argparse", "sqlite3", "numpy", "cryptography", "argon2", "http", "gettext", "typing"}
    assert not heavy & {m.split(".")[0] for m in modules}


def test_a_client_of_another_build_is_passed_back_and_told_as_ever(served) -> None:
    home, _ = served
    quick, ordinary, rendered = both_ways(home, ["rag", "search", "notes", "rye"], {"MEMORIES_TEST_BUILD": "9.9.9"})
    assert rendered == 0
    assert (quick.code, quick.stdout, quick.stderr) == (ordinary.code, ordinary.stdout, ordinary.stderr)
    assert quick.code != 0 and "9.9.9" in quick.stderr  # the version sentence of the ordinary way


@pytest.mark.parametrize("env", [{}, {"NO_COLOR": "1"}])
def test_colours_on_a_terminal_are_the_same(served, env) -> None:
    """Under a pseudo-terminal the ordinary way prints bold labels; so does the daemon for it."""
    import os
    import pty

    home, _ = served

    def on_terminal(extra: dict[str, str]) -> bytes:
        main, child = pty.openpty()
        done = subprocess.run([sys.executable, str(CHEAP_CLI), "rag", "search", "notes", "rye"], stdout=child,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=cli_env(home, None, **extra),
                              timeout=120, check=False)
        os.close(child)
        out = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(main)
        assert done.returncode == 0, done.stderr
        return out

    before = served_count(home)
    quick, ordinary = on_terminal(env), on_terminal({**env, **QUICK_OFF})
    assert served_count(home) - before == 1
    assert quick == ordinary
    assert (b"\x1b[1m" in quick) == (not env)


@pytest.mark.parametrize("way", ["quick", "ordinary"])
def test_ctrl_c_cancels_the_work_in_the_daemon(tmp_path: Path, way: str) -> None:
    """Either way a served verb reaches the daemon, ctrl+c in the CLI ends the work there."""
    import signal

    from tests.helpers.daemon import wait_until
    from tests.helpers.model_server import COMPAT_CHAT, ModelServer

    home = tmp_path / "home"
    assert run_cli(home, "vault", "create", "notes").code == 0
    assert run_cli(home, "memory", "add", "notes", "--title", "Bread", "--text", "Knead the dough.").code == 0
    with ModelServer() as srv:
        asked, release = srv.hold_chat()
        (home / "config.toml").write_text(srv.generation_toml())
        try:
            assert unlock(home, "notes").code == 0
            cli = subprocess.Popen([sys.executable, str(CHEAP_CLI), "rag", "ask", "notes", "How to make bread?"],
                                   env=cli_env(home, None, **(QUICK_OFF if way == "ordinary" else {})),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            assert asked.wait(120), "the daemon never asked the model"
            assert "cli_run" not in (home / "daemon" / "daemon.log").read_text()  # still running
            cli.send_signal(signal.SIGINT)
            out, err = cli.communicate(timeout=120)
            assert cli.returncode == 130 and err.decode() == "memories: error: Interrupted.\n" and out == b""
            release.set()
            log = home / "daemon" / "daemon.log"
            wait_until(lambda: "vault.ask cancelled" in log.read_text(), what="the daemon to drop the ask")
            if way == "quick":
                wait_until(lambda: "cli_run served" in log.read_text(), what="the daemon to end the command")
            else:
                assert "cli_run" not in log.read_text()
            assert len(srv.requests_for(COMPAT_CHAT)) == 1  # no retry, no second call after the hang-up
        finally:
            release.set()
            stop(home)


def test_a_stopped_daemon_gets_the_ordinary_sentence(tmp_path: Path) -> None:
    """Stopped (SIGSTOP), the daemon takes the request and says nothing: the quick way says what
    the ordinary way's first question meets, with the same pid and limit."""
    import os
    import signal

    from tests.helpers.daemon import daemon

    home = tmp_path / "home"
    assert run_cli(home, "vault", "create", "notes").code == 0
    with daemon(home) as pid:
        assert unlock(home, "notes").code == 0
        os.kill(pid, signal.SIGSTOP)
        try:
            for argv in (["--json", "rag", "search", "notes", "dough"], ["memory", "list", "notes"]):
                quick, ordinary, _rendered = both_ways(home, argv, {"MEMORIES_DAEMON_TIMEOUT": "1"})
                assert (quick.code, quick.stdout, quick.stderr) == (ordinary.code, ordinary.stdout, ordinary.stderr)
                assert quick.code == 1 and f"(pid {pid}) has not answered" in quick.stdout + quick.stderr
        finally:
            os.kill(pid, signal.SIGCONT)


@pytest.mark.parametrize("body", [b"{}", b'{"argv": "rag search", "cwd": "/", "home": "/", "env": {}, "version": "x"}',
                                  b'{"argv": [], "cwd": "relative", "home": "/", "env": {}, "version": "x"}'])
def test_a_request_of_the_wrong_shape_is_refused(served, body) -> None:
    from tests.helpers.daemon import answer_json, post, raw_request

    home, _ = served
    status, answer = answer_json(raw_request(home, post("cli_run", body)))
    assert status == 200 and answer["error"]["code"] == "daemon_bad_request", answer


def test_nothing_is_rendered_for_a_home_the_daemon_does_not_serve(served, tmp_path) -> None:
    """A request naming another home (a link to this one's socket, say) is passed back."""
    from memories_tui import __version__
    from tests.helpers.daemon import answer_json, post, raw_request

    home, _ = served
    request = {"argv": ["memory", "list", "notes"], "cwd": "/", "home": str(home), "env": {}, "version": __version__,
               "color": False, "stderr_tty": False}
    status, answer = answer_json(raw_request(home, post("cli_run", json.dumps(request).encode())))
    assert status == 200 and answer["result"]["status"] == 0  # its own home: rendered
    request["home"] = str(tmp_path)
    status, answer = answer_json(raw_request(home, post("cli_run", json.dumps(request).encode())))
    assert status == 200 and answer == {"result": {"pass": True}}
