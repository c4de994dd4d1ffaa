"""The resident engine's timers and lock state at their edges, on a clock the test moves
(`MEMORIES_TEST_CLOCK`) and with races held at a named point (`MEMORIES_TEST_HOLD_AT`): the
`--for` end reached exactly, idle time counted from the last use (a served call is use), a
bad `--for` refused before anything reaches a daemon, a lock that arrives while the key is
derived, an MCP session reopened after a restart keeping its expiry (through the relay too),
and a lock between an MCP call's answer and its last check."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from memories_tui.access.grants import GrantedVault
from memories_tui.daemon import connect
from memories_tui.errors import MemoriesError
from memories_tui.mcp.daemon_tools import DaemonTools
from tests.helpers.cli import Result, run_cli
from tests.helpers.daemon import Clock, daemon, holder_pid, lock_held, unlock, wait_until

TEXT = "Feed the sourdough starter twice a day with rye flour."


@pytest.fixture
def home(homes) -> Path:
    return homes.make(note=("Sourdough", TEXT))


def unlocked_names(home: Path) -> list[str]:
    client = connect(home)
    return [] if client is None else [v["name"] for v in client.call("status")["vaults"]]


def vault_id_of(home: Path) -> str:
    return run_cli(home, "--json", "vault", "list").json["vaults"][0]["vault_id"]


def held_at(tmp_path: Path, point: str) -> tuple[Path, dict[str, str]]:
    ready = tmp_path / f"held-{point}"
    return ready, {"MEMORIES_TEST_HOLD_AT": f"{point}:{ready}"}


def test_for_ends_at_exactly_its_end_and_idle_counts_from_the_last_served_call(home: Path, tmp_path: Path) -> None:
    (home / "config.toml").write_text("[daemon]\nidle_lock_minutes = 60\n")
    clock = Clock(tmp_path / "clock")
    assert unlock(home, "notes", "--for", "30m", env=clock.env).code == 0
    clock.advance(30 * 60 - 1)
    assert unlocked_names(home) == ["notes"]
    clock.advance(1)  # exactly the end of --for
    assert unlocked_names(home) == []

    assert unlock(home, "notes", env=clock.env).code == 0  # only the idle timer (60 min)
    client = connect(home)
    vault_id = client.call("status")["vaults"][0]["vault_id"]  # asking for the status is not use
    clock.advance(50 * 60)
    records = client.call("vault.list_records", {"vault_id": vault_id})  # a served call, as the CLI makes: use
    assert [r["title"] for r in records] == ["Sourdough"]
    clock.advance(20 * 60)  # 70 minutes since the unlock, 20 since the last use
    assert unlocked_names(home) == ["notes"]
    clock.advance(40 * 60 - 1)
    assert unlocked_names(home) == ["notes"]
    clock.advance(1)  # 60 minutes since the last use
    assert unlocked_names(home) == []


@pytest.mark.parametrize("duration", ["0", "-5", "0m", "-5m"])
def test_a_zero_or_negative_for_is_refused_before_any_daemon_hears_of_it(home: Path, duration: str) -> None:
    refused = run_cli(home, "--json", "unlock", "notes", f"--for={duration}")
    assert refused.code == 2, refused.stdout + refused.stderr
    assert refused.json["error"]["code"] == "usage_error"
    assert "duration" in refused.json["error"]["message"] and "for_seconds" not in refused.json["error"]["message"]
    assert not lock_held(home)  # no daemon was started, no passphrase sent anywhere


def test_a_lock_while_the_key_is_derived_wins(home: Path, tmp_path: Path) -> None:
    ready, env = held_at(tmp_path, "unlock-deriving")
    with daemon(home, env=env):
        outcome: list[Result] = []
        unlocking = threading.Thread(target=lambda: outcome.append(unlock(home, "notes")))
        unlocking.start()
        wait_until(ready.exists, what="the daemon to start deriving the key")
        assert run_cli(home, "lock", "notes", passphrase=None).code == 0
        ready.unlink()
        unlocking.join(120)
        assert outcome and outcome[0].code != 0, outcome
        error = outcome[0].json["error"]
        assert error["code"] == "vault_locked" and "while it was being unlocked" in error["message"]
        assert unlocked_names(home) == []


def test_an_mcp_session_reopened_after_a_daemon_restart_keeps_its_expiry(home: Path, tmp_path: Path) -> None:
    (home / "config.toml").write_text("[daemon]\nidle_lock_minutes = 0\n")
    clock = Clock(tmp_path / "clock")
    assert unlock(home, "notes", env=clock.env).code == 0
    tools = DaemonTools(home, [GrantedVault(vault_id_of(home), "notes")], expires_in=3600)  # `mcp --expires 1h`
    assert tools.retrieve("notes", "sourdough").chunks
    os.kill(holder_pid(home), signal.SIGKILL)
    wait_until(lambda: not lock_held(home), what="the killed daemon to let go")
    clock.advance(30 * 60)
    assert unlock(home, "notes", env=clock.env).code == 0  # a new daemon: the session is opened again
    assert tools.retrieve("notes", "sourdough").chunks
    clock.advance(30 * 60)  # an hour after the grant began, not after it was reopened
    with pytest.raises(MemoriesError) as ended:
        tools.retrieve("notes", "sourdough")
    assert ended.value.code == "grant_expired"


async def test_a_relayed_mcp_session_reopened_after_a_daemon_restart_keeps_its_expiry(home: Path,
                                                                                        tmp_path: Path) -> None:
    """The same through the relay `memories mcp` is by default: it opens the session again
    with the times the first daemon gave it, never a fresh `--expires`."""
    from tests.integration.test_mcp_daemon import error_of, mcp_client

    (home / "config.toml").write_text("[daemon]\nidle_lock_minutes = 0\n")
    clock = Clock(tmp_path / "clock")
    search = {"vault_id": "notes", "query": "sourdough"}
    assert unlock(home, "notes", env=clock.env).code == 0
    async with mcp_client(home, "--vault", "notes", "--expires", "1h") as client:
        assert (await client.call_tool("memory_search", search)).is_error is False
        os.kill(holder_pid(home), signal.SIGKILL)
        wait_until(lambda: not lock_held(home), what="the killed daemon to let go")
        clock.advance(30 * 60)
        assert unlock(home, "notes", env=clock.env).code == 0  # a new daemon: the relay opens the session again
        again = await client.call_tool("memory_search", search)
        if again.is_error:  # the relay may say once that the old daemon went, then reopen
            assert "[daemon_gone]" in error_of(again)
            again = await client.call_tool("memory_search", search)
        assert again.is_error is False, again.content[0].text
        clock.advance(30 * 60)  # an hour after the grant began, not after it was reopened
        assert "[grant_expired]" in error_of(await client.call_tool("memory_search", search))


def test_a_lock_between_an_mcp_answer_and_its_last_check_drops_the_answer(home: Path, tmp_path: Path) -> None:
    ready, env = held_at(tmp_path, "mcp-call-answered")
    assert unlock(home, "notes", env=env).code == 0
    tools = DaemonTools(home, [GrantedVault(vault_id_of(home), "notes")], expires_in=None)
    outcome: list[object] = []

    def search() -> None:
        try:
            outcome.append(tools.search("notes", "sourdough"))
        except MemoriesError as exc:
            outcome.append(exc)

    searching = threading.Thread(target=search)
    searching.start()
    wait_until(ready.exists, what="the daemon to have the answer")
    assert run_cli(home, "lock", "--all", passphrase=None).code == 0
    ready.unlink()
    searching.join(120)
    assert isinstance(outcome[0], MemoriesError), outcome
    assert outcome[0].code == "vault_locked" and "the late result was dropped" in outcome[0].message
