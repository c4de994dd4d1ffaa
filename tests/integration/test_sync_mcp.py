"""An AI client reading a record with a kept conflict is told so (MCP `memory_read`)."""

from __future__ import annotations

from memories_tui.access.grants import GrantedVault, Grants
from memories_tui.access.mcp_server import build_server
from memories_tui.access.tools import MemoryTools
from tests.helpers.sync import first_device, joined_device
from tests.integration.test_mcp_tools import structured


async def test_memory_read_says_when_a_record_has_a_conflict(tmp_path, cheap_kdf):
    from mcp import Client

    folder = tmp_path / "Sync"
    folder.mkdir()
    a = first_device(tmp_path / "a", str(folder))
    clash = a.add("clash", "one")
    calm = a.add("calm", "two")
    a.sync()
    b = joined_device(tmp_path / "b", str(folder))
    a.edit(clash, "on a")
    b.edit(clash, "on b")
    for device in (a, b, a):
        device.sync()
    grants = Grants(a.engine.home, [GrantedVault(a.vault_id, "notes")])
    async with Client(build_server(MemoryTools(a.engine, grants), list(grants.vaults.values()))) as client:
        read = {rid: structured(await client.call_tool("memory_read", {"vault_id": "notes", "id": rid}))
                for rid in (clash, calm)}
    assert read[clash]["conflict"] is True and read[calm]["conflict"] is False
    a.close()
    b.close()


async def test_memory_read_says_so_through_the_resident_engine_too(tmp_path):
    """`memories mcp` with the daemon holding the vault (no passphrase in the server): the
    conflict flag comes from the daemon's engine."""
    from tests.helpers.cli import call_cli
    from tests.helpers.daemon import daemon, unlock
    from tests.integration.test_mcp_daemon import mcp_client

    a, b, folder = tmp_path / "a", tmp_path / "b", tmp_path / "Sync"
    folder.mkdir()
    call_cli(a, "vault", "create", "notes")
    clash, calm = (call_cli(a, "--json", "memory", "add", "notes", "--title", t, "--text", "one").json["id"]
                   for t in ("clash", "calm"))
    assert call_cli(a, "sync", "add", "notes", str(folder)).code == 0 and call_cli(a, "sync", "notes").code == 0
    assert call_cli(b, "sync", "join", str(folder)).code == 0
    for home, text in ((a, "on a"), (b, "on b")):
        assert call_cli(home, "memory", "update", "notes", clash, "--text", text).code == 0
    for home in (a, b, a):
        assert call_cli(home, "sync", "notes").code == 0
    (a / "config.toml").write_text("[daemon]\nidle_lock_minutes = 0\n[sync]\nbackground = false\n", encoding="utf-8")
    with daemon(a):
        assert unlock(a, "notes").code == 0
        async with mcp_client(a, "--vault", "notes") as client:
            read = {rid: (await client.call_tool("memory_read", {"vault_id": "notes", "id": rid})).structured_content
                    for rid in (clash, calm)}
    assert read[clash]["conflict"] is True and read[calm]["conflict"] is False
