"""Backup, restore, export and the egress log when the resident engine holds the vault.

A real daemon subprocess on its socket; the CLI runs in this process (call_cli). Each verb is
run in-process (`--no-daemon`, with the passphrase) and through the daemon (no passphrase
anywhere) from two folders with the same relative names: stdout, stderr and exit status must be
equal byte for byte (times and stamps aside), and what they wrote must be equal too. The
daemon's log shows the served calls ran there. Then what only the daemon does: a restore locks
the vault it replaces for every client, `memories lock` takes the `[backup] every_hours`
backup, and an MCP call served by the daemon names its client in the egress log.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from memories_tui.engine import Engine
from tests.helpers.cli import call_cli, run_cli
from tests.helpers.daemon import daemon, stop, unlock
from tests.helpers.homes import write_config
from tests.helpers.model_server import COMPAT_CHAT, ModelServer
from tests.helpers.vaults import PASS

NOTES = {"Lantern": "The lantern release ships in May; the lantern needs new batteries.",
         "酸種": "酸種麵包的酵頭每天餵兩次。Feed the starter twice a day."}
PROGRESS = re.compile(r"^(Backing up|Restoring|Exporting): .*$\n?", re.M)
STAMP = re.compile(r"\d{8}T\d{6}Z(-\d+)?|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
SECONDS = re.compile(r'("seconds": )\d+(\.\d+)?')


def normal(text: str) -> str:
    return SECONDS.sub(r"\1S", STAMP.sub("T", PROGRESS.sub("", text)))


def config(srv: ModelServer, extra: str = "") -> str:
    return f'[rag.generation]\nprotocol = "compatible"\nurl = "{srv.compat_chat_url}"\nmodel = "m"\n' + extra


def make_home(root: Path, text: str) -> Path:
    home = write_config(root / "home", text)
    assert call_cli(home, "vault", "create", "notes").code == 0
    for title, body in NOTES.items():
        assert call_cli(home, "memory", "add", "notes", "--kind", "card", "--title", title, "--text", body).code == 0
    assert call_cli(home, "memory", "add", "notes", "--kind", "private", "--title", "diary",
                    "--text", "PRIVATE-CANARY").code == 0
    return home


def served_methods(home: Path, since: int) -> list[str]:
    lines = (home / "daemon" / "daemon.log").read_text().splitlines()[since:]
    return [line.split()[3] for line in lines if len(line.split()) > 3]


def log_length(home: Path) -> int:
    return len((home / "daemon" / "daemon.log").read_text().splitlines())


@pytest.fixture(scope="module")
def srv():
    with ModelServer() as s:
        yield s


@pytest.fixture(scope="module")
def world(tmp_path_factory, srv):
    root = tmp_path_factory.mktemp("daemon-data")
    home = make_home(root, config(srv))
    started = run_cli(home, "--json", "daemon", "--detach", passphrase=None)
    assert started.code == 0, started.stderr
    assert unlock(home, "notes").code == 0
    yield home, root
    stop(home)


def pair(home: Path, root: Path, monkeypatch, name: str, *args: str):
    """The same command in-process from <root>/<name>/alone and through the daemon from
    <root>/<name>/served: relative names must mean the caller's folder in both."""
    places = root / name / "alone", root / name / "served"
    for place in places:
        place.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(places[0])
    alone = call_cli(home, "--no-daemon", *args)
    monkeypatch.chdir(places[1])
    served = call_cli(home, *args, passphrase=None)
    return alone, served, places


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_backup_export_and_egress_print_and_write_the_same(world, monkeypatch, as_json) -> None:
    home, root = world
    flag = ("--json",) if as_json else ()
    name = f"run{len(flag)}"
    before = log_length(home)
    results = [pair(home, root, monkeypatch, name, *flag, "vault", "backup", "notes", "bk", "--keep", "1")
               for _ in range(2)]  # the second rotates the first away: "removed bk/…" in both
    for alone, served, _ in results:
        assert served.code == alone.code == 0, served.stdout + served.stderr
        assert normal(served.stdout) == normal(alone.stdout) and normal(served.stderr) == normal(alone.stderr)
    _, served, places = results[1]
    assert "removed" in served.stdout or '"removed": ["bk/' in served.stdout
    for place in places:  # in the caller's folder, one each (rotated), verified in full without a passphrase
        assert len(list((place / "bk").glob("notes-*.mvault"))) == 1
    assert "every record decrypted" in served.stdout or '"verified": "full"' in served.stdout

    assert call_cli(home, "rag", "ask", "notes", "lantern", passphrase=None).code == 0
    for place in places:
        (place / "plain.txt").write_text("not a folder\n", encoding="utf-8")
    for args in (("rag", "egress", "notes"), ("rag", "egress", "notes", "--since", "1d"),
                 ("vault", "export", "notes", "out"), ("vault", "export", "notes", "out"),  # not empty now
                 ("vault", "export", "notes", "elsewhere", "--include-excluded", "--yes"),
                 ("vault", "backup", "notes", "plain.txt/inside")):  # a path under a file
        alone, served, places = pair(home, root, monkeypatch, name, *flag, *args)
        assert (served.code, normal(served.stdout), normal(served.stderr)) == (
            alone.code, normal(alone.stdout), normal(alone.stderr)), args
    assert served.code == 1 and "plain.txt/inside lies inside a file" in served.stdout + served.stderr
    assert tree(places[0] / "out") == tree(places[1] / "out") and "PRIVATE-CANARY" not in str(tree(places[1] / "out"))
    assert tree(places[0] / "elsewhere") == tree(places[1] / "elsewhere")
    assert any(b"PRIVATE-CANARY" in data for data in tree(places[1] / "elsewhere").values())
    egress = call_cli(home, "--json", "rag", "egress", "notes", passphrase=None).json
    assert egress["entries"] and egress["entries"][-1]["purpose"] == "generation"
    methods = served_methods(home, before)
    for method in ("vault.backup_vault", "vault.egress_log", "vault.export_vault"):
        assert method in methods  # not a hollow comparison: the daemon did the served half


def test_restore_through_the_daemon_locks_the_vault_it_replaces(tmp_path, srv, monkeypatch) -> None:
    home = make_home(tmp_path, config(srv))
    monkeypatch.chdir(tmp_path)
    with daemon(home):
        assert unlock(home, "notes").code == 0
        quick = call_cli(home, "vault", "backup", "notes", "bk", "--no-unlock", passphrase=None)
        assert quick.code == 0 and "every record decrypted" in quick.stdout  # the daemon's copy: checked in full
        assert "Backing up:" in quick.stderr and "revisions verified" in quick.stderr  # progress streamed back
        taken = call_cli(home, "--json", "vault", "backup", "notes", "bk", passphrase=None).json
        backup = Path(taken["path"])
        assert not backup.is_absolute() and (tmp_path / backup).is_file()
        assert call_cli(home, "memory", "add", "notes", "--title", "later", "--text", "x", passphrase=None).code == 0
        refused = [call_cli(home, *a, "--json", "vault", "restore", str(backup)) for a in (("--no-daemon",), ())]
        assert refused[0].stdout == refused[1].stdout and refused[1].json["error"]["code"] == "restore_would_replace"
        wrong = [call_cli(home, *a, "vault", "restore", str(backup), "--force", passphrase="wrong horse")
                 for a in (("--no-daemon",), ())]
        assert (wrong[1].code, wrong[1].stdout, wrong[1].stderr) == (wrong[0].code, wrong[0].stdout, wrong[0].stderr)
        assert wrong[1].code != 0
        state = call_cli(home, "--json", "memory", "list", "notes", passphrase=None)
        assert state.code == 0 and len(state.json["records"]) == 4  # still unlocked after the refusals
        before = log_length(home)
        done = call_cli(home, "--json", "vault", "restore", str(backup), "--force")
        assert done.code == 0, done.stdout + done.stderr
        assert done.json["replaced"] and done.json["revisions_lost"] == 1 and done.json["source"] == str(backup)
        assert "vault.restore_vault" in served_methods(home, before)
        locked = call_cli(home, "--json", "memory", "list", "notes", passphrase=None)
        assert locked.code != 0  # the daemon let go of the replaced file: no passphrase, no vault
        assert unlock(home, "notes").code == 0
        listed = call_cli(home, "--json", "memory", "list", "notes", passphrase=None).json["records"]
        assert sorted(r["title"] for r in listed) == sorted(["diary", "Lantern", "酸種"])  # "later" is gone


def test_a_restore_in_its_own_process_refuses_to_replace_a_vault_the_daemon_holds(tmp_path, srv, monkeypatch) -> None:
    """Replacing the file under a daemon that holds it unlocked would leave the daemon serving
    stale records and index: `--no-daemon` (or $MEMORIES_NO_DAEMON) is refused, nothing changes,
    and the sentence says how to proceed; once the vault is locked there, it restores here."""
    home = make_home(tmp_path, config(srv))
    monkeypatch.chdir(tmp_path)
    with daemon(home):
        assert unlock(home, "notes").code == 0
        backup = call_cli(home, "--json", "vault", "backup", "notes", "bk", passphrase=None).json["path"]
        assert call_cli(home, "memory", "add", "notes", "--title", "later", "--text", "x", passphrase=None).code == 0
        refused = [call_cli(home, "--no-daemon", "--json", "vault", "restore", backup, "--force"),
                   call_cli(home, "--json", "vault", "restore", backup, "--force", env={"MEMORIES_NO_DAEMON": "1"})]
        for attempt in refused:
            assert attempt.code == 2 and attempt.json["error"]["code"] == "vault_held_by_daemon"
            message = attempt.json["error"]["message"]
            assert "Nothing was changed" in message and "memories lock notes" in message and "--no-daemon" in message
        assert call_cli(home, "lock", "notes", passphrase=None).code == 0
        on_disk = call_cli(home, "--no-daemon", "--json", "memory", "list", "notes").json["records"]
        assert "later" in {r["title"] for r in on_disk}  # the file was not replaced
        done = call_cli(home, "--no-daemon", "--json", "vault", "restore", backup, "--force")
        assert done.code == 0 and done.json["replaced"], done.stdout + done.stderr  # locked there: safe here


def test_memories_lock_takes_the_scheduled_backup_first(tmp_path, srv, cheap_kdf) -> None:
    scheduled = tmp_path / "scheduled"
    home = make_home(tmp_path, config(srv, f'[backup]\nevery_hours = 1\ndir = "{scheduled}"\n'))
    with daemon(home):
        assert unlock(home, "notes").code == 0
        assert not scheduled.exists()
        assert run_cli(home, "lock", "notes", passphrase=None).code == 0
        files = list(scheduled.glob("notes-*.mvault"))
        assert len(files) == 1
        engine = Engine.open(home)  # the copy opens with the passphrase and holds every record
        try:
            restored = engine.restore_vault(files[0], PASS, as_name="copy")
        finally:
            engine.close()
        assert restored.records == 3
        assert unlock(home, "notes").code == 0
        assert run_cli(home, "lock", "--all", passphrase=None).code == 0
        assert len(list(scheduled.glob("notes-*.mvault"))) == 1  # the newest is under an hour old: none due


def test_an_mcp_call_served_by_the_daemon_names_its_client_in_the_egress_log(tmp_path, srv) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp_types import Implementation

    home = make_home(tmp_path, config(srv))
    server = Path(__file__).resolve().parents[1] / "helpers" / "mcp_server.py"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIES_")}  # no passphrase: the daemon's
    env["PYTHONIOENCODING"] = "utf-8"
    params = StdioServerParameters(command=sys.executable, args=[str(server), "mcp", "--home", str(home),
                                                                 "--vault", "notes"], env=env)

    async def ask() -> None:
        with open(tmp_path / "mcp.log", "w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120,
                              client_info=Implementation(name="daemon-egress-client", version="1")) as client:
                result = await client.call_tool("memory_ask", {"vault_id": "notes", "question": "lantern",
                                                               "mode": "bm25"})
                assert result.is_error is False, result.content[0].text

    with daemon(home):
        assert unlock(home, "notes").code == 0
        sent = len(srv.requests_for(COMPAT_CHAT))
        before = log_length(home)
        asyncio.run(ask())
        served = served_methods(home, before)  # relayed to a session the daemon hosts (or forwarded call by call)
        assert ("mcp_relay" in served or "mcp_call" in served) and len(srv.requests_for(COMPAT_CHAT)) == sent + 1
        entries = call_cli(home, "--json", "rag", "egress", "notes", passphrase=None).json["entries"]
        assert [(e["purpose"], e["client"]) for e in entries] == [("generation", "mcp:daemon-egress-client")]
        assert call_cli(home, "rag", "ask", "notes", "lantern", passphrase=None).code == 0
        entries = call_cli(home, "--json", "rag", "egress", "notes", passphrase=None).json["entries"]
        assert entries[-1]["client"] is None and len(entries) == 2  # the user's own ask names no client


def test_unlock_in_the_daemon_detects_a_rolled_back_file_and_accepts_it_on_purpose(tmp_path, srv) -> None:
    home = make_home(tmp_path, config(srv))
    vault_file = next((home / "vaults").glob("*.mvault"))
    old = tmp_path / "old.mvault"
    shutil.copyfile(vault_file, old)  # closed cleanly: the file alone holds this state
    with daemon(home):
        assert unlock(home, "notes").code == 0
        assert call_cli(home, "memory", "add", "notes", "--title", "newer", "--text", "x", passphrase=None).code == 0
        assert run_cli(home, "lock", "notes", passphrase=None).code == 0
        for extra in ("-wal", "-shm"):
            Path(f"{vault_file}{extra}").unlink(missing_ok=True)
        shutil.copyfile(old, vault_file)  # an old copy put back, as a sync tool might
        refused = unlock(home, "notes")
        assert refused.code == 1 and refused.json["error"]["code"] == "vault_rolled_back", refused.stdout
        assert unlock(home, "notes", "--accept-rollback").code == 0
        listed = call_cli(home, "--json", "memory", "list", "notes", passphrase=None).json["records"]
        assert "newer" not in {r["title"] for r in listed} and len(listed) == 3
