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
