"""One lock state per vault per home, with the TUI in it (Pilot + real CLI subprocesses).

Without a daemon the TUI serves the home's socket itself: unlocking in the TUI makes the
vault available to the CLI and AI clients, ctrl+l locks it for them, and a `memories lock`
from a terminal locks the TUI. Beside a separate `memories daemon`, the TUI's unlock and
lock act on the daemon's lock state too, and a lock there reaches the TUI.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest
from textual.widgets import Input

from memories_tui.access.grants import GrantedVault
from memories_tui.daemon import connect
from memories_tui.engine import Engine
from memories_tui.errors import LockedError
from memories_tui.mcp.daemon_tools import DaemonTools
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.records import RecordsScreen
from memories_tui.tui.screens.vaults import UnlockScreen
from tests.helpers.cli import run_cli
from tests.helpers.daemon import daemon, lock_held, wait_until
from tests.helpers.pilot import wait_for
from tests.helpers.vaults import PASS

SIZE = (120, 40)


@pytest.fixture
def home(homes) -> Path:
    return homes.make(note=("Sourdough", "Feed the starter twice a day."))


def daemon_vaults(home: Path) -> list[str]:
    client = connect(home)
    assert client is not None
    return [v["name"] for v in client.call("status")["vaults"]]


async def unlock_in_tui(pilot) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen) and bool(app.screen.query("#passphrase")), 30)
    field = app.screen.query_one("#passphrase", Input)
    field.focus()
    field.value = PASS
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen), 30)


async def cli(home: Path, *args: str):
    return await asyncio.to_thread(run_cli, home, *args, passphrase=None)


async def test_the_tui_serves_a_home_whose_folders_are_not_made_yet(tmp_path: Path) -> None:
    """A fresh account has no ~/.local/share: the TUI made the home but said "not shared" for
    the whole session (the daemon folder's parents were not made)."""
    home = tmp_path / "account" / ".local" / "share" / "memories"
    app = MemoriesApp(Engine.open(home))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.daemon_link.host is not None or bool(app.daemon_link.problem), 30)
        assert app.daemon_link.host is not None, app.daemon_link.problem
        assert lock_held(home)


async def test_a_tui_that_could_not_serve_at_start_serves_from_its_next_unlock(home: Path) -> None:
    """Something in the way at start (here a file where the daemon folder goes) is said on the
    status screen; once it is gone, the next unlock serves the CLI and AI clients."""
    (home / "daemon").write_text("in the way", encoding="utf-8")
    app = MemoriesApp(Engine.open(home))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(app.daemon_link.problem), 30)
        assert app.daemon_link.host is None and "not shared" in app.daemon_link.describe()
        (home / "daemon").unlink()
        await unlock_in_tui(pilot)
        await wait_for(pilot, lambda: app.daemon_link.host is not None, 30)
        assert daemon_vaults(home) == ["notes"]


async def test_the_tui_serves_the_socket_and_one_lock_locks_everyone(home: Path) -> None:
    app = MemoriesApp(Engine.open(home))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.daemon_link.host is not None, 30)
        assert lock_held(home)
        shown = await cli(home, "--json", "daemon", "status")
        assert shown.json["kind"] == "tui" and shown.json["vaults"] == []
        second = await cli(home, "--json", "daemon", "--detach")
        assert second.json["error"]["code"] == "daemon_running" and "TUI" in second.json["error"]["message"]

        await unlock_in_tui(pilot)
        assert daemon_vaults(home) == ["notes"]  # the CLI and AI clients may use it now
        locked = await cli(home, "--json", "lock", "--all")  # from a terminal: the TUI locks too
        assert locked.code == 0 and len(locked.json["locked"]) == 1
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen) and app.vault is None, 30)

        await unlock_in_tui(pilot)
        assert daemon_vaults(home) == ["notes"]
        found = await cli(home, "--json", "rag", "search", "notes", "starter")  # no passphrase: the TUI serves it
        assert found.code == 0 and found.json["results"][0]["title"] == "Sourdough"
        tools = DaemonTools(home, [GrantedVault(found.json["vault_id"], "notes")], expires_in=None)  # an MCP server's
        assert (await asyncio.to_thread(tools.retrieve, "notes", "starter")).chunks
        rows = dict(await asyncio.to_thread(app.daemon_link.sharing_rows, found.json["vault_id"]))
        assert rows["shared"] == "this TUI serves the CLI and AI clients of this home"
        assert f"pid {os.getpid()} AI client (MCP), 2 calls, last mcp_call" in rows["clients"]  # open + retrieve
        assert rows["grants"] == f"pid {os.getpid()}: notes (active)"
        await pilot.press("ctrl+l")  # from the TUI: locked for everyone
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen), 30)
        assert daemon_vaults(home) == []
        refused = await cli(home, "--json", "rag", "search", "notes", "starter")
        assert refused.code == 2 and "No passphrase given" in refused.json["error"]["message"]
        with pytest.raises(LockedError):
            await asyncio.to_thread(tools.retrieve, "notes", "starter")
    assert not lock_held(home)  # the TUI stopped serving when it quit


async def test_beside_a_daemon_the_tui_acts_on_its_lock_state(home: Path) -> None:
    with daemon(home) as pid:
        app = MemoriesApp(Engine.open(home))
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.daemon_link.remote is not None, 30)
            assert app.daemon_link.host is None
            assert f"pid {pid}" in await asyncio.to_thread(app.daemon_link.describe)

            await unlock_in_tui(pilot)
            await wait_for(pilot, lambda: daemon_vaults(home) == ["notes"], 30)  # the daemon unlocked it too
            assert (await cli(home, "--json", "lock", "notes")).code == 0
            await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen) and app.vault is None, 30)

            await unlock_in_tui(pilot)
            await wait_for(pilot, lambda: daemon_vaults(home) == ["notes"], 30)
            await pilot.press("ctrl+l")
            await wait_for(pilot, lambda: daemon_vaults(home) == [], 30)


async def test_the_status_screen_lists_the_clients_and_grants_of_the_vault(home: Path) -> None:
    from memories_tui.tui.screens.status import StatusScreen
    from tests.tui.test_status_screen import rendered

    app = MemoriesApp(Engine.open(home))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.daemon_link.host is not None, 30)
        await unlock_in_tui(pilot)
        vault_id = app.vault.vault_id
        tools = DaemonTools(home, [GrantedVault(vault_id, "notes")], expires_in=None)  # an MCP server's
        assert (await asyncio.to_thread(tools.retrieve, "notes", "starter")).chunks
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view, 30)
        text = " ".join(rendered(app.screen, width=120).split())
        assert "shared this TUI serves the CLI and AI clients of this home" in text
        assert f"pid {os.getpid()} AI client (MCP)" in text
        assert f"grants pid {os.getpid()}: notes (active)" in text


def test_a_poll_while_the_daemon_derives_the_key_keeps_following_the_vault(home: Path) -> None:
    """Beside a daemon, the TUI's unlock asks the daemon to unlock too (Argon2id: seconds). A
    poll answered while the daemon still derives the key says "locked"; that must not make the
    TUI stop following the vault, or a later `memories lock` would never reach it."""
    from memories_tui.tui.daemon_link import DaemonLink

    with daemon(home):
        engine = Engine.open(home)
        locked_elsewhere: list[tuple[list[str], str]] = []
        link = DaemonLink(engine, lambda ids, why: locked_elsewhere.append((ids, why)))
        link.start()
        assert link.remote is not None
        vault_id = engine.resolve_vault("notes").vault_id
        unlocking = threading.Thread(target=link.unlocked, args=(vault_id, PASS))
        unlocking.start()
        while unlocking.is_alive():  # the app's one-second timer, only faster
            link.poll()
            unlocking.join(0.02)
        wait_until(lambda: not link._polling, what="the poll in flight")
        assert locked_elsewhere == []  # nothing was locked: the daemon was still deriving the key

        assert run_cli(home, "--json", "lock", "notes", passphrase=None).code == 0
        wait_until(lambda: link.poll() or bool(locked_elsewhere), what="the lock to reach the TUI")
        assert locked_elsewhere == [([vault_id], "locked in the Memories daemon")]


TIMERS = "[tui]\nidle_lock_minutes = 1.5\n[daemon]\nidle_lock_minutes = 30\n"


def tui_row(home: Path) -> dict:
    client = connect(home)
    assert client is not None
    return client.call("status")["vaults"][0]


async def test_daemon_status_tells_the_idle_lock_of_the_tui_that_serves_the_vault(home: Path) -> None:
    """The TUI locks after its own 1.5 idle minutes, long before the daemon's 30: the status
    says so instead of "29m (idle)"."""
    (home / "config.toml").write_text(TIMERS)
    app = MemoriesApp(Engine.open(home))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.daemon_link.host is not None, 30)
        await unlock_in_tui(pilot)
        shown = await cli(home, "--json", "daemon", "status")
        row = shown.json["vaults"][0]
        assert 0 <= row["seconds_left"] <= 90 and row.get("locks_by") == "tui", row
        assert row["idle_lock_at"] > row["last_used"] + 29 * 60  # the daemon's own timer is still there
        text = await cli(home, "daemon", "status")
        assert "(TUI idle)" in text.stdout and "29m" not in text.stdout


async def test_daemon_status_tells_the_idle_lock_of_a_tui_beside_the_daemon(home: Path) -> None:
    """A TUI following a separate daemon locks it after its own idle time too (ctrl+l's path)."""
    (home / "config.toml").write_text(TIMERS)
    with daemon(home):
        app = MemoriesApp(Engine.open(home))
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.daemon_link.remote is not None, 30)
            await unlock_in_tui(pilot)
            await wait_for(pilot, lambda: daemon_vaults(home) == ["notes"], 30)
            await wait_for(pilot, lambda: tui_row(home).get("locks_by") == "tui", 30)  # told at the TUI's next poll
            assert 0 <= tui_row(home)["seconds_left"] <= 90
