"""The MCP server in-process, driven by the official `mcp` client over its in-memory transport.

The stdio tests (test_mcp_server.py) prove the process and the protocol; here the same server
object (`build_server`) runs on an engine and a grant the test holds, so the grant's clock is one
the test moves, a revocation can land in the middle of a call, and the output budgets can be
filled exactly (multi-byte text, exactly one item left out).
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager

import pytest
from mcp import Client

from memories_tui.access.grants import GrantedVault, Grants
from memories_tui.access.mcp_server import build_server
from memories_tui.access.tools import READ_BUDGET, RETRIEVE_BUDGET, SEARCH_BUDGET, MemoryTools
from memories_tui.engine import Engine, NewRecord
from memories_tui.frontend.durations import parse_duration
from memories_tui.frontend.grant_records import revoke
from tests.helpers.model_server import ModelServer, naive_model
from tests.helpers.vaults import open_vault

# 12 CJK characters (36 UTF-8 bytes) that segment into the query's word 燈籠 every time.
LANTERNS = "河上的紙燈籠在黃昏漂流。"


class Clock:
    def __init__(self, now: float = 1_900_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@asynccontextmanager
async def serve(eng: Engine, vid: str, *, expires_in: float | None = None, clock: Clock | None = None):
    grants = Grants(eng.home, [GrantedVault(vid, "notes")], expires_in=expires_in,
                    **({"clock": clock} if clock is not None else {}))
    async with Client(build_server(MemoryTools(eng, grants), list(grants.vaults.values()))) as client:
        yield client


def structured(result) -> dict:
    assert result.is_error is False, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error is True, result.structured_content
    return result.content[0].text


@pytest.fixture
def eng_vid(tmp_path, cheap_kdf):
    eng, vid = open_vault(tmp_path / "home")
    yield eng, vid
    eng.close()


# ------------------------------------------------------------------------------ grants


async def test_a_grant_expires_on_the_grant_clock(eng_vid):
    """`--expires 1h` ends the grant after exactly one hour of the grant's clock, for every tool."""
    eng, vid = eng_vid
    record = eng.add_record(vid, kind="memory", title="Lanterns", body=LANTERNS)
    clock = Clock()
    async with serve(eng, vid, expires_in=parse_duration("1h"), clock=clock) as client:
        assert structured(await client.call_tool("memory_search", {"vault_id": "notes", "query": "燈籠"}))["records"]
        clock.now += 3600 - 0.001
        structured(await client.call_tool("memory_read", {"vault_id": "notes", "id": record.id}))
        clock.now += 0.001
        for tool, args in (("memory_search", {"query": "燈籠"}), ("memory_retrieve", {"query": "燈籠"}),
                           ("memory_read", {"id": record.id}), ("memory_ask", {"question": "燈籠在哪裡？"})):
            text = error_text(await client.call_tool(tool, {"vault_id": "notes", **args}))
            assert "expired" in text and "grant_expired" in text
            assert LANTERNS not in text


async def test_memory_ask_drops_the_answer_when_the_grant_is_revoked_during_the_call(tmp_path, cheap_kdf):
    """The revocation lands while the answer service is working: the answer never reaches the client."""
    with ModelServer() as srv:
        config = srv.generation_toml()
        eng, vid = open_vault(tmp_path / "home", config)
        try:
            eng.add_record(vid, kind="memory", title="Lanterns", body=LANTERNS)
            async with serve(eng, vid) as client:
                before = structured(await client.call_tool("memory_ask", {"vault_id": "notes",
                                                                          "question": "燈籠在哪裡？"}))
                assert before["status"] == "answered"

                def revoke_then_answer(system: str, user: str) -> str:
                    revoke(eng.home, vid)  # `memories mcp revoke` from another terminal, mid-call
                    return naive_model(system, user)

                srv.chat = revoke_then_answer
                text = error_text(await client.call_tool("memory_ask", {"vault_id": "notes",
                                                                        "question": "燈籠在哪裡？"}))
                assert "revoked" in text and "grant_revoked" in text
                assert "燈籠" not in text  # nothing of the answer or its sources
                assert len(srv.requests) == 2
        finally:
            eng.close()


# ------------------------------------------------------------------------------ output budgets


def _size(*texts: str) -> int:
    return sum(len(t.encode("utf-8")) for t in texts)


async def test_retrieve_budget_with_exactly_one_chunk_left_out(eng_vid):
    eng, vid = eng_vid
    # one chunk per record, each 58 * 36 + 9 = 2,097 bytes of CJK text and title: 11 fit in the budget
    eng.add_records(vid, [NewRecord("memory", f"燈籠 {n:02d}", LANTERNS * 58) for n in range(12)])
    per_chunk = _size(LANTERNS * 58, "燈籠 00")
    assert 11 * per_chunk <= RETRIEVE_BUDGET < 12 * per_chunk
    async with serve(eng, vid) as client:
        full = structured(await client.call_tool("memory_retrieve", {"vault_id": "notes", "query": "燈籠",
                                                                     "limit": 11}))
        assert len(full["chunks"]) == 11 and full["omitted"] == 0 and full["truncated"] is False
        cut = structured(await client.call_tool("memory_retrieve", {"vault_id": "notes", "query": "燈籠",
                                                                    "limit": 12}))
    assert len(cut["chunks"]) == 11 and cut["omitted"] == 1 and cut["truncated"] is True
    assert sum(_size(c["text"], c["title"]) for c in cut["chunks"]) <= RETRIEVE_BUDGET
    assert [c["citation"] for c in cut["chunks"]] == [f"S{i}" for i in range(1, 12)]


async def test_search_budget_with_exactly_one_record_left_out(eng_vid):
    eng, vid = eng_vid
    # each row: a 160-character CJK snippet and "…" (483 bytes) and a 20-byte title
    eng.add_records(vid, [NewRecord("memory", f"燈籠筆記第{n:02d}號", LANTERNS * 20) for n in range(40)])
    async with serve(eng, vid) as client:
        rows = structured(await client.call_tool("memory_search", {"vault_id": "notes", "query": "燈籠",
                                                                   "limit": 40}))["records"]
        row = _size(rows[0]["snippet"], rows[0]["title"])
        assert all(_size(r["snippet"], r["title"]) == row for r in rows) and row == 503
        fit = SEARCH_BUDGET // row  # 31 rows: 15,593 bytes; a 32nd would make 16,096
        exact = structured(await client.call_tool("memory_search", {"vault_id": "notes", "query": "燈籠",
                                                                    "limit": fit}))
        assert len(exact["records"]) == fit and exact["omitted"] == 0 and exact["truncated"] is False
        cut = structured(await client.call_tool("memory_search", {"vault_id": "notes", "query": "燈籠",
                                                                  "limit": fit + 1}))
    assert sum(_size(r["snippet"], r["title"]) for r in cut["records"]) <= SEARCH_BUDGET
    assert len(cut["records"]) == fit and cut["omitted"] == 1 and cut["truncated"] is True


async def test_read_budget_never_cuts_a_character(eng_vid):
    """64,000 bytes of 3-byte characters end inside a character: the piece stops before it and
    the next piece starts with it, so the pieces join to the exact body."""
    eng, vid = eng_vid
    body = "燈籠" * 15_000  # 90,000 bytes; READ_BUDGET = 64,000 = 3 * 21,333 + 1
    assert READ_BUDGET % 3 == 1
    record = eng.add_record(vid, kind="memory", title="Long", body=body)
    async with serve(eng, vid) as client:
        first = structured(await client.call_tool("memory_read", {"vault_id": "notes", "id": record.id}))
        assert first["truncated"] is True and first["total_bytes"] == 90_000
        assert first["byte_end"] == 63_999 and first["text"] == body[:21_333]
        rest = structured(await client.call_tool("memory_read", {"vault_id": "notes", "id": record.id,
                                                                 "byte_start": first["byte_end"]}))
    assert rest["truncated"] is False and rest["byte_end"] == 90_000
    assert first["text"] + rest["text"] == body
