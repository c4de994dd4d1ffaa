"""The egress log: every request that carried vault content out, recorded encrypted inside the
vault, checked against what real loopback servers received."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import sys
from pathlib import Path

import pytest

from memories_tui.egress import Outbound, SentChunk
from memories_tui.engine import Engine
from memories_tui.errors import PolicyError
from tests.helpers.cli import call_cli, run_cli
from tests.helpers.model_server import (
    COMPAT_CHAT,
    COMPAT_EMBED,
    GEMINI_BATCH,
    GEMINI_GENERATE,
    RERANK,
    ModelServer,
    sources_in,
)
from tests.helpers.tamper import sql
from tests.helpers.vaults import PASS

NOTES = {"混合搜尋": "混合搜尋把 BM25 與向量排名融合。The fused list keeps both signals.",
         "Sourdough": "Feed the starter every twelve hours. Sourdough needs a warm kitchen.",
         "Lantern": "The lantern release ships in May; the lantern needs new batteries."}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture
def srv():
    with ModelServer() as s:
        s.embed_dims = 16
        yield s


def service(table: str, protocol: str, url: str, model: str = "m") -> str:
    return f'[rag.{table}]\nprotocol = "{protocol}"\nurl = "{url}"\nmodel = "{model}"\n'


def world(tmp_path: Path, config: str, *, device_only: bool = False) -> tuple[Engine, str, dict[str, tuple[str, int]]]:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[rag.http]\nretries = 2\nbackoff_ms = 1\n" + config, encoding="utf-8")
    engine = Engine.open(home)
    vault_id = engine.create_vault("notes", PASS, device_only=device_only).vault_id
    engine.unlock(vault_id, PASS)
    records = {}
    for title, body in NOTES.items():
        record = engine.add_record(vault_id, kind="card", title=title, body=body)
        records[record.id] = (title, record.revision)
    engine.add_record(vault_id, kind="private", title="diary 混合搜尋", body="PRIVATE-CANARY lantern sourdough")
    return engine, vault_id, records


def sent_pairs(entries) -> set[tuple[str | None, int | None, str]]:
    return {(c.record_id, c.revision, c.chunk_hash) for e in entries for c in e.chunks}


@pytest.mark.parametrize("protocol", ["compatible", "gemini"])
def test_embedding_entries_hold_exactly_the_hashes_the_server_received(tmp_path, cheap_kdf, srv, protocol):
    url = srv.compat_embed_url if protocol == "compatible" else srv.gemini_batch_url
    prefix = 'document_prefix = "passage: "\n'  # the log names the chunk, not the text as prefixed
    engine, vault_id, records = world(tmp_path, service("embedding", protocol, url, "emb") + prefix)
    try:
        engine.build_vector_index(vault_id)
        report = engine.egress_log(vault_id)
    finally:
        engine.close()
    if protocol == "compatible":
        seen = [r.json() for r in srv.requests_for(COMPAT_EMBED)]
        received = [t for body in seen for t in body["input"]]
    else:
        seen = [r.json() for r in srv.requests_for(GEMINI_BATCH)]
        received = [q["content"]["parts"][0]["text"] for body in seen for q in body["requests"]]
    documents = [e for e in report.entries if e.purpose == "embedding"]
    probes = [e for e in report.entries if e.purpose == "query-embedding"]
    assert len(report.entries) == len(seen) == len(documents) + len(probes)
    chunks_received = {sha(t.removeprefix("passage: ")) for t in received if t.startswith("passage: ")}
    assert len(chunks_received) >= len(records)
    assert {c.chunk_hash for e in documents for c in e.chunks} == chunks_received
    by_id = {c.record_id for e in documents for c in e.chunks}
    assert by_id == set(records)  # every chunk named by its record, never the private one
    for entry, request in zip(report.entries, srv.requests, strict=True):
        assert entry.bytes_sent == len(request.body) and entry.outcome == "ok" and entry.attempts == 1
        assert entry.loopback and entry.host == srv.base.removeprefix("http://")
        assert all(rev == records[rid][1] for rid, rev, _ in sent_pairs([entry]) if rid)


@pytest.mark.parametrize("protocol", ["compatible", "gemini"])
def test_generation_and_rerank_entries_name_the_chunks_in_the_prompt(tmp_path, cheap_kdf, srv, protocol):
    url = srv.compat_chat_url if protocol == "compatible" else srv.gemini_generate_url
    config = service("generation", protocol, url, "gen") + service("rerank", "compatible", srv.rerank_url)
    engine, vault_id, _ = world(tmp_path, config)
    try:
        answer = engine.ask(vault_id, "lantern sourdough 混合搜尋")
        report = engine.egress_log(vault_id)
    finally:
        engine.close()
    purposes = [e.purpose for e in report.entries]
    assert purposes == ["rerank", "generation"]
    rerank, generation = report.entries
    documents = srv.requests_for(RERANK)[0].json()["documents"]
    assert {c.chunk_hash for c in rerank.chunks} == {sha(d) for d in documents}
    path = COMPAT_CHAT if protocol == "compatible" else GEMINI_GENERATE
    body = srv.requests_for(path)[0].json()
    user = (body["messages"][1]["content"] if protocol == "compatible"
            else body["contents"][0]["parts"][0]["text"])
    in_prompt = sources_in(user)
    assert [c.chunk_hash for c in generation.chunks] == [sha(in_prompt[f"S{i}"]) for i in range(1, len(in_prompt) + 1)]
    assert [(c.record_id, c.revision) for c in generation.chunks] == [(s.record_id, s.revision)
                                                                      for s in answer.sources]
    assert generation.bytes_sent == len(srv.requests_for(path)[0].body)


def test_an_extractive_answer_sends_nothing_and_logs_nothing(tmp_path, cheap_kdf, srv):
    engine, vault_id, _ = world(tmp_path, "")
    try:
        answer = engine.ask(vault_id, "lantern")
        assert answer.status == "extractive"
        assert engine.egress_log(vault_id).entries == []
    finally:
        engine.close()
    assert srv.requests == []


def test_failures_retries_and_nothing_of_the_content_in_the_log(tmp_path, cheap_kdf, srv):
    engine, vault_id, _ = world(tmp_path, service("rerank", "compatible", srv.rerank_url))
    for _ in range(3):
        srv.queue(RERANK, 503)
    try:
        with pytest.raises(Exception) as failed:
            engine.search(vault_id, "lantern sourdough", limit=3)
        assert getattr(failed.value, "code", "") == "network_error"
        entry, = engine.egress_log(vault_id).entries
        assert (entry.purpose, entry.outcome, entry.attempts) == ("rerank", "network_error", 3)
        assert entry.bytes_sent == len(srv.requests_for(RERANK)[0].body)
        text = json.dumps(entry.to_json(), ensure_ascii=False)
        for body in NOTES.values():
            assert body[:20] not in text and "lantern" not in text
        vault_file = engine.resolve_vault(vault_id).path
    finally:
        engine.close()
    raw = vault_file.read_bytes()
    assert srv.base.removeprefix("http://").encode() not in raw  # the entry itself is ciphertext
    conn = sqlite3.connect(vault_file)
    assert conn.execute("SELECT COUNT(*) FROM egress").fetchone()[0] == 1
    conn.close()


def test_a_device_only_vault_logs_only_loopback_requests(tmp_path, cheap_kdf, srv):
    remote = service("rerank", "compatible", "https://rerank.example.invalid/v1/rerank")
    engine, vault_id, _ = world(tmp_path, remote, device_only=True)
    try:
        with pytest.raises(PolicyError):
            engine.search(vault_id, "lantern sourdough", limit=3)
        assert engine.egress_log(vault_id).entries == []  # refused before anything was sent
    finally:
        engine.close()
    local = tmp_path / "local"
    local.mkdir()
    engine, vault_id, _ = world(local, service("rerank", "compatible", srv.rerank_url), device_only=True)
    try:
        engine.search(vault_id, "lantern sourdough", limit=3)
        entries = engine.egress_log(vault_id).entries
        assert entries and all(e.loopback for e in entries)
    finally:
        engine.close()


def test_cli_lists_the_log_with_since_and_json(tmp_path, cheap_kdf, srv):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(service("rerank", "compatible", srv.rerank_url), encoding="utf-8")
    assert run_cli(home, "vault", "create", "notes", "--json").code == 0
    for title, body in NOTES.items():
        run_cli(home, "memory", "add", "notes", "--title", title, "--text", body, "--kind", "card")
    assert run_cli(home, "rag", "search", "notes", "lantern sourdough", "--json").code == 0
    listed = run_cli(home, "rag", "egress", "notes", "--json")
    assert listed.code == 0, listed.stderr
    entry, = listed.json["entries"]
    documents = srv.requests_for(RERANK)[0].json()["documents"]
    assert sorted(c["chunk_hash"] for c in entry["chunks"]) == sorted(sha(d) for d in documents)
    assert entry["loopback"] is True and entry["client"] is None and len(entry["records"]) >= 2
    assert run_cli(home, "rag", "egress", "notes", "--since", "2999-01-01", "--json").json["entries"] == []
    assert len(run_cli(home, "rag", "egress", "notes", "--since", "24h", "--json").json["entries"]) == 1
    people = run_cli(home, "rag", "egress", "notes")
    assert "rerank" in people.stdout and "(loopback)" in people.stdout
    bad = run_cli(home, "rag", "egress", "notes", "--since", "last tuesday", "--json")
    assert bad.code == 2 and bad.json["error"]["code"] == "usage_error"


def test_mcp_calls_are_marked_with_the_clients_name(tmp_path, cheap_kdf, srv):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp_types import Implementation

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(service("generation", "compatible", srv.compat_chat_url), encoding="utf-8")
    assert run_cli(home, "vault", "create", "notes", "--json").code == 0
    run_cli(home, "memory", "add", "notes", "--title", "Lantern", "--text", NOTES["Lantern"], "--kind", "card")
    server = Path(__file__).parents[1] / "helpers" / "mcp_server.py"
    env = {"MEMORIES_PASSPHRASE": PASS, "PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8"}
    params = StdioServerParameters(command=sys.executable, args=[str(server), "mcp", "--home", str(home),
                                                                 "--vault", "notes"], env=env)

    async def ask() -> None:
        with open(tmp_path / "mcp.log", "w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120,
                              client_info=Implementation(name="egress-test-client", version="1")) as client:
                result = await client.call_tool("memory_ask", {"vault_id": "notes", "question": "lantern"})
                assert result.is_error is False, result.content[0].text

    asyncio.run(ask())
    logged = run_cli(home, "rag", "egress", "notes", "--json").json["entries"]
    assert [(e["purpose"], e["client"]) for e in logged] == [("generation", "mcp:egress-test-client")]
    assert run_cli(home, "rag", "ask", "notes", "lantern", "--json").code == 0
    assert run_cli(home, "rag", "egress", "notes", "--json").json["entries"][-1]["client"] is None


def _logged(engine: Engine, vault_id: str, *purposes: str) -> list[str]:
    """One finished entry per purpose, written through the hook a model request uses; their times."""
    hook = engine.egress_hook(vault_id)
    for i, purpose in enumerate(purposes):
        hook.opened(Outbound(purpose, "127.0.0.1:9", True, (SentChunk(None, None, sha(purpose)),), 10 + i))("ok", 5, 1)
    return [e.time for e in engine.egress_log(vault_id).entries]


def test_a_deleted_entry_is_a_gap_and_swapped_entries_fail_their_check(engine):
    vault_id = engine.test_vault_id
    _logged(engine, vault_id, "rerank", "generation", "embedding", "query-embedding")
    path = engine.resolve_vault(vault_id).path
    sql(path, "DELETE FROM egress WHERE seq = 2")
    report = engine.egress_log(vault_id)
    assert [e.seq for e in report.entries] == [1, 3, 4] and report.missing == [2] and report.damaged == []
    listed = call_cli(engine.home, "rag", "egress", "notes")  # the CLI warns about the gap
    assert listed.code == 0 and "egress log entries [2] are missing" in listed.stderr, listed.stderr
    (one,), (three,) = (sql(path, "SELECT nonce, ciphertext, digest FROM egress WHERE seq = ?", n) for n in (1, 3))
    for seq, row in ((1, three), (3, one)):  # each entry sealed under the other's number
        sql(path, "UPDATE egress SET nonce = ?, ciphertext = ?, digest = ? WHERE seq = ?", *row, seq)
    report = engine.egress_log(vault_id)
    assert [(e.seq, e.purpose) for e in report.entries] == [(4, "query-embedding")]
    assert report.damaged == [1, 3] and report.missing == [2]


def test_since_is_inclusive_at_the_exact_time_of_an_entry(engine):
    from datetime import datetime, timedelta

    vault_id = engine.test_vault_id
    stamp, = _logged(engine, vault_id, "rerank")
    assert [e.purpose for e in engine.egress_log(vault_id, since=stamp).entries] == ["rerank"]  # at or after
    after = (datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(seconds=1)).isoformat()
    assert engine.egress_log(vault_id, since=after).entries == []
    shown = call_cli(engine.home, "rag", "egress", "notes", "--since", stamp, "--json")
    assert shown.code == 0 and [e["purpose"] for e in shown.json["entries"]] == ["rerank"]
def test_a_dropped_log_table_is_damage_not_an_empty_log(tmp_path, cheap_kdf, srv):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(service("rerank", "compatible", srv.rerank_url), encoding="utf-8")
    vault_id = run_cli(home, "vault", "create", "notes", "--json").json["vault_id"]
    for title, body in NOTES.items():
        run_cli(home, "memory", "add", "notes", "--title", title, "--text", body, "--kind", "card")
    assert run_cli(home, "rag", "search", "notes", "lantern sourdough", "--json").code == 0
    assert len(run_cli(home, "rag", "egress", "notes", "--json").json["entries"]) == 1
    conn = sqlite3.connect(home / "vaults" / f"{vault_id}.mvault")
    conn.execute("DROP TABLE egress")
    conn.commit()
    conn.close()
    dropped = run_cli(home, "rag", "egress", "notes", "--json")
    assert dropped.code == 1 and dropped.json["error"]["code"] == "egress_log_missing", dropped.stdout
    assert "missing" in dropped.json["error"]["message"]
    human = run_cli(home, "rag", "egress", "notes")
    assert human.code == 1 and "egress log is missing" in human.stderr and "Traceback" not in human.stderr


def test_a_vault_from_before_the_log_reads_as_empty_until_it_sends_something(tmp_path, cheap_kdf):
    home = tmp_path / "home"
    home.mkdir()
    engine = Engine.open(home)
    vault_id = engine.create_vault("notes", PASS).vault_id
    engine.unlock(vault_id, PASS)
    vault = engine._state.vaults.get(vault_id).vault
    assert vault.settings().get("egress_log") is True  # a new vault keeps a log from the start
    vault.set_settings({"device_only": False})  # as a vault made before the log existed
    engine.close()
    conn = sqlite3.connect(home / "vaults" / f"{vault_id}.mvault")
    conn.execute("DROP TABLE egress")
    conn.commit()
    conn.close()
    assert run_cli(home, "rag", "egress", "notes", "--json").json["entries"] == []


def test_a_vault_from_the_previous_version_is_marked_at_unlock(tmp_path, cheap_kdf):
    """Made with the log table but before the mark: the first unlock marks it, so a table
    dropped afterwards is damage even though the vault never sent anything."""
    home = tmp_path / "home"
    home.mkdir()
    engine = Engine.open(home)
    vault_id = engine.create_vault("notes", PASS).vault_id
    engine.unlock(vault_id, PASS)
    engine._state.vaults.get(vault_id).vault.set_settings({"device_only": False})  # as the previous version
    engine.close()
    assert run_cli(home, "rag", "egress", "notes", "--json").json["entries"] == []  # unlocked once: marked
    conn = sqlite3.connect(home / "vaults" / f"{vault_id}.mvault")
    conn.execute("DROP TABLE egress")
    conn.commit()
    conn.close()
    assert run_cli(home, "rag", "egress", "notes", "--json").json["error"]["code"] == "egress_log_missing"
