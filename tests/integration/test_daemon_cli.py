"""Every CLI verb through a real resident engine prints what it prints in-process.

The daemon is a real subprocess on a real socket; the CLI runs in this process through
`cli.main` (call_cli) so each pair of calls is cheap: first in-process (`--no-daemon`, with the
passphrase), then through the daemon (no passphrase anywhere: a prompt would fail), and the
two outputs — stdout, stderr, exit status, text and `--json` — must be equal byte for byte.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memories_tui import errors
from tests.helpers.cli import call_cli
from tests.helpers.daemon import unlock
from tests.helpers.homes import minilm_config
from tests.helpers.vaults import PASS

SAMPLES = Path(__file__).resolve().parents[2] / "memories_tui" / "samples"
PROGRESS = re.compile(r"^(Ingesting|Embedding|Searching): .*$\n?", re.M)


@pytest.fixture(scope="module")
def world(module_homes, minilm_dir):
    home = module_homes.make(config=minilm_config(minilm_dir))
    root = module_homes.folder
    assert call_cli(home, "rag", "ingest", "notes", *map(str, sorted(SAMPLES.glob("*.md")))).code == 0
    memory = call_cli(home, "--json", "memory", "add", "notes", "--title", "Sourdough",
                      "--text", "Feed the starter twice a day. 酸種麵包").json
    call_cli(home, "memory", "update", "notes", memory["id"], "--text", "Feed the starter twice a day with rye.")
    (root / "scan.bin").write_bytes(bytes(range(256)) * 4)
    asset = call_cli(home, "--json", "asset", "add", "notes", str(root / "scan.bin")).json
    assert call_cli(home, "rag", "index", "notes").code == 0  # no on-demand embedding later
    queries = root / "queries.jsonl"
    queries.write_text('{"id": "q1", "text": "sourdough"}\n{"id": "q2", "text": "京都"}\n{"id": "q3", "text": ""}\n')
    assert unlock(home, "notes").code == 0
    return {"home": home, "root": root, "memory": memory["id"], "asset": asset["id"], "queries": queries}


def both(home: Path, *args: str):
    alone = call_cli(home, "--no-daemon", *args)
    served = call_cli(home, *args, passphrase=None)
    return alone, served


READ_ONLY = [
    ("memory", "list", "notes"),
    ("memory", "list", "notes", "--kind", "card"),
    ("memory", "search", "notes", "Kyoto 京都"),
    ("memory", "search", "notes", "sourdough", "--match-mode", "all", "--limit", "3"),
    ("rag", "search", "notes", "hybrid search"),
    ("rag", "search", "notes", "bread starter", "--mode", "vector"),
    ("rag", "search", "notes", "混合搜尋 ranking", "--mode", "hybrid", "--limit", "4", "--cards-only"),
    ("rag", "search", "notes", "meeting", "--match-mode", "phrase", "--no-rerank"),
    ("rag", "ask", "notes", "What did the meeting decide?"),
    ("rag", "ask", "notes", "京都旅行去了哪裡？", "--mode", "hybrid"),
    ("vault", "policy", "notes"),
    ("memory", "read", "notes", "0000000000000000"),  # not found: same error
    ("rag", "search", "notes", "x", "--limit", "0"),  # usage error: same status 2
]


@pytest.mark.parametrize("argv", READ_ONLY, ids=lambda a: " ".join(a)[:40])
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_read_only_verbs_print_the_same_bytes(world, argv, as_json) -> None:
    args = (("--json",) if as_json else ()) + argv
    alone, served = both(world["home"], *args)
    assert (served.code, served.stdout, served.stderr) == (alone.code, alone.stdout, alone.stderr)


def log_lines(home: Path) -> list[str]:
    return (home / "daemon" / "daemon.log").read_text().splitlines()


def test_each_served_call_ran_in_the_daemon(world) -> None:
    """Not a hollow comparison: the served calls above had no passphrase, and the daemon logged them."""
    home = world["home"]
    before = len(log_lines(home))
    served = call_cli(home, "--json", "memory", "list", "notes", passphrase=None)
    assert served.code == 0
    # the command line run by the daemon (cli/quick_call.py), which asked itself as a client would
    assert [line.split()[3] for line in log_lines(home)[before:]] == ["vault_state", "vault.list_records", "cli_run",
                                                                      "cli_run"]
    alone = call_cli(home, "--no-daemon", "--json", "memory", "list", "notes", passphrase=None)
    assert alone.code == 2 and "No passphrase given" in alone.stdout


IDS = re.compile(r"\b[0-9a-f]{16}\b")
STAMPS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
SECONDS = re.compile(r'("seconds": |in )\d+\.\d+')


def normal(text: str) -> str:
    return SECONDS.sub(r"\1S", STAMPS.sub("T", IDS.sub("ID", PROGRESS.sub("", text))))


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_writing_verbs_print_the_same_and_write_the_same(world, monkeypatch, as_json) -> None:
    home, root = world["home"], world["root"]
    monkeypatch.chdir(root)  # file names below are relative: the daemon must look where we are
    flag = ("--json",) if as_json else ()
    page = f"page-{len(flag)}.md"  # one new file per parametrization (the world is shared)
    (root / page).write_text(f"# Page {len(flag)}\n\nA page about lanterns and rye bread.\n", encoding="utf-8")
    first = call_cli(home, "--no-daemon", *flag, "rag", "ingest", "notes", page)
    assert first.code == 0 and ("created" in first.stdout)
    alone, served = both(home, *flag, "rag", "ingest", "notes", page)  # the same file again: unchanged
    assert "unchanged" in served.stdout
    assert (served.code, served.stdout) == (alone.code, alone.stdout)  # same id, same path, byte for byte
    assert normal(served.stderr) == normal(alone.stderr)
    if not as_json:
        assert "Ingesting: 1/1 files" in served.stderr  # progress still shows, streamed from the daemon
    pairs = [
        both(home, *flag, "memory", "add", "notes", "--title", "T", "--text", "body 文字", "--tag", "x"),
        both(home, *flag, "asset", "add", "notes", page, "--title", "as asset"),
        both(home, *flag, "rag", "ingest", "notes", "missing.md"),
        both(home, *flag, "vault", "policy", "notes", "--device-only", "on"),
        both(home, *flag, "vault", "policy", "notes", "--device-only", "off"),
        both(home, *flag, "memory", "read", "notes", world["asset"]),
    ]
    assert call_cli(home, "--no-daemon", "rag", "index", "notes").code == 0  # new chunks embedded: both see 0 left
    pairs.append(both(home, *flag, "rag", "index", "notes"))
    for alone, served in pairs:
        assert served.code == alone.code
        assert normal(served.stdout) == normal(alone.stdout)
        assert normal(served.stderr) == normal(alone.stderr)
    alone, served = both(home, *flag, "memory", "update", "notes", world["memory"], "--title", "Sourdough",
                         "--tag", "y")
    revision = re.compile(r'(revision |"revision": )(\d+)')
    assert int(revision.search(served.stdout).group(2)) == int(revision.search(alone.stdout).group(2)) + 1
    assert revision.sub("", served.stdout) == revision.sub("", alone.stdout) and served.code == alone.code == 0
    added = json.loads(pairs[0][1].stdout)["id"] if as_json else IDS.search(pairs[0][1].stdout).group(0)
    read = call_cli(home, "--no-daemon", "--json", "memory", "read", "notes", added).json
    assert (read["title"], read["body"], read["tags"]) == ("T", "body 文字", ["x"])
    other = json.loads(pairs[0][0].stdout)["id"] if as_json else IDS.search(pairs[0][0].stdout).group(0)
    alone = call_cli(home, "--no-daemon", *flag, "memory", "delete", "notes", other)
    served = call_cli(home, *flag, "memory", "delete", "notes", added, passphrase=None)
    assert served.code == alone.code == 0 and normal(served.stdout) == normal(alone.stdout)
    gone = call_cli(home, "--json", "memory", "read", "notes", added, passphrase=None)
    assert gone.code == 1 and gone.json["error"]["code"] == "not_found"


def test_engine_errors_cross_the_socket_as_their_own_class(world, cheap_kdf) -> None:
    """A front end catches engine errors by class (the TUI offers the model screen on
    ModelNotInstalledError, the CLI exits 2 on UsageError): through the daemon each failure
    must be the very class, code, sentence and exit status the engine raises in-process."""
    from memories_tui.daemon import connect
    from memories_tui.daemon.remote_engine import RemoteEngine
    from memories_tui.engine import Engine

    home = world["home"]
    local = Engine.open(home)
    other = local.create_vault("elsewhere", PASS).vault_id  # held by neither engine: locked in both
    client = connect(home)
    assert client is not None
    remote = RemoteEngine(client, home)
    vault = remote.resolve_vault("notes").vault_id
    local.unlock(vault, PASS)
    failing = {
        "not_found": lambda e: e.read_record(vault, "0" * 16),
        "limit": lambda e: e.search(vault, "bread", limit=0),
        "kind": lambda e: e.add_record(vault, kind="nonsense", title="T"),  # type: ignore[arg-type]
        "revision": lambda e: e.read_record(vault, world["memory"], revision=99),
        "locked": lambda e: e.status(other),
    }
    try:
        for name, call in failing.items():
            caught = []
            for engine in (local, remote):
                with pytest.raises(errors.MemoriesError) as info:
                    call(engine)
                caught.append(info.value)
            alone, served = caught
            assert (type(served), served.code, served.exit_code) == (type(alone), alone.code, alone.exit_code), name
            if name != "locked":  # the daemon says how to unlock it there (`memories unlock`), by name
                assert served.message == alone.message, name
        assert {type(e) for e in caught} == {errors.LockedError}
    finally:
        local.close()
