"""`memories mcp` driven by the official `mcp` client over stdio.

Every test starts a real `memories mcp` subprocess (through tests/helpers/mcp_server.py, which
only adds an import watcher on stderr) on a real vault, and talks to it with `mcp.Client`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import jsonschema
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.helpers.cli import call_cli
from tests.helpers.homes import minilm_config, write_config
from tests.helpers.vaults import PASS

SERVER = Path(__file__).resolve().parents[1] / "helpers" / "mcp_server.py"
MINILM = Path(__file__).resolve().parents[1] / ".models" / "minilm"
CANARIES = ("CANARY-private-4f1d", "CANARY-credential-9a2b", "CANARY-asset-77e0")
LONG_PARAGRAPH = ("The lantern festival notes, paragraph {n}: paper lanterns float on the river at dusk while "
                  "families write wishes on them. " * 6).strip()


def _server_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIES_")}
    env.update(MEMORIES_PASSPHRASE=PASS, PYTHONIOENCODING="utf-8")
    return env


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A home with vault `notes` (a memory in 2 revisions, a long card, excluded-kind canaries)
    and vault `work`; the MiniLM test model configured when it is present."""
    root = tmp_path_factory.mktemp("mcp")
    home = write_config(root / "home", minilm_config(MINILM) if (MINILM / "model.onnx").is_file() else "")
    notes = call_cli(home, "vault", "create", "notes", "--json").json["vault_id"]
    work = call_cli(home, "vault", "create", "work", "--json").json["vault_id"]
    memory = call_cli(home, "memory", "add", "notes", "--title", "Sourdough",
                     "--text", "Feed the starter once a day.", "--json").json
    call_cli(home, "memory", "update", "notes", memory["id"], "--text",
            "Feed the sourdough starter twice a day with rye flour. 酸種麵包的酵頭每天餵兩次。")
    long_file = root / "lanterns.md"
    long_file.write_text("# Lantern festival\n\n" + "\n\n".join(LONG_PARAGRAPH.format(n=n) for n in range(100)),
                         encoding="utf-8")
    card = call_cli(home, "rag", "ingest", "notes", str(long_file), "--json").json["results"][0]
    private = call_cli(home, "memory", "add", "notes", "--title", "Safe", "--kind", "private",
                      "--text", f"{CANARIES[0]} sourdough lantern safe code", "--json").json
    credential = call_cli(home, "memory", "add", "notes", "--title", "Bank", "--kind", "credential",
                         "--text", f"{CANARIES[1]} sourdough lantern password", "--json").json
    asset_file = root / "scan.txt"
    asset_file.write_text(f"{CANARIES[2]} sourdough lantern", encoding="utf-8")
    asset = call_cli(home, "asset", "add", "notes", str(asset_file), "--json").json
    call_cli(home, "memory", "add", "work", "--title", "Roadmap", "--text", "Ship the lantern release in May.")
    return {"home": home, "notes": notes, "work": work, "memory": memory["id"], "card": card["id"],
            "excluded": [private["id"], credential["id"], asset["id"]]}


@asynccontextmanager
async def connect(world, *args: str, errlog_path: Path | None = None):
    home = world["home"]
    params = StdioServerParameters(command=sys.executable,
                                   args=[str(SERVER), "mcp", "--home", str(home), *args], env=_server_env(home))
    errlog_path = errlog_path or home.parent / f"stderr-{time.monotonic_ns()}.log"
    with open(errlog_path, "w+", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
            client.errlog_path = errlog_path
            yield client


def structured(result) -> dict:
    assert result.is_error is False, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content  # same JSON for older clients
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error is True
    return result.content[0].text


def assert_no_canary(result) -> None:
    """Nothing but the echoed query may carry a canary."""
    payload = result.model_dump(mode="json")
    if payload.get("structured_content"):
        payload["structured_content"].pop("query", None)
        payload["content"] = [json.loads(block["text"]) | {"query": None} for block in payload["content"]]
    dump = json.dumps(payload, ensure_ascii=False)
    for canary in CANARIES:
        assert canary not in dump


async def test_tools_schemas_and_every_tool(world):
    async with connect(world, "--vault", "notes", "--expires", "1h") as client:
        record = _server_record(world["home"])  # the grant's end is an hour of the grant's clock away
        assert record["expires_at"] - record["started_at"] == 3600  # (test_mcp_tools.py lets it run out)
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) == {"memory_retrieve", "memory_search", "memory_read", "memory_ask"}
        retrieve = listed["memory_retrieve"]
        assert retrieve.input_schema["required"] == ["vault_id", "query"]
        props = retrieve.input_schema["properties"]
        assert set(props) == {"vault_id", "query", "mode", "match_mode", "limit", "cards_only"}
        assert props["mode"]["enum"] == ["bm25", "vector", "hybrid"]
        assert listed["memory_read"].input_schema["required"] == ["vault_id", "id"]
        assert "[S#]" in retrieve.description and retrieve.annotations.read_only_hint is True
        for tool in listed.values():
            assert tool.output_schema and tool.output_schema["type"] == "object"

        got = await client.call_tool("memory_retrieve", {"vault_id": "notes", "query": "sourdough starter"})
        data = structured(got)
        jsonschema.validate(data, listed["memory_retrieve"].output_schema)
        first = data["chunks"][0]
        assert (first["citation"], first["id"], first["revision"], first["title"]) == \
            ("S1", world["memory"], 2, "Sourdough")
        body = "Feed the sourdough starter twice a day with rye flour. 酸種麵包的酵頭每天餵兩次。".encode()
        assert body[first["byte_start"]:first["byte_end"]].decode() == first["text"]
        assert data["vault_id"] == world["notes"] and data["truncated"] is False

        zh = structured(await client.call_tool("memory_retrieve", {"vault_id": world["notes"], "query": "酸种面包",
                                                                   "match_mode": "all"}))
        assert [c["id"] for c in zh["chunks"]] == [world["memory"]]  # Simplified finds Traditional

        found = structured(await client.call_tool("memory_search", {"vault_id": "notes", "query": "lantern"}))
        jsonschema.validate(found, listed["memory_search"].output_schema)
        assert [r["id"] for r in found["records"]] == [world["card"]]
        assert found["records"][0]["chunks"]

        old = structured(await client.call_tool("memory_read", {"vault_id": "notes", "id": world["memory"],
                                                                "revision": 1}))
        jsonschema.validate(old, listed["memory_read"].output_schema)
        assert old["text"] == "Feed the starter once a day." and old["revisions"] == [1, 2]
        part = structured(await client.call_tool("memory_read", {"vault_id": "notes", "id": world["memory"],
                                                                 "byte_start": first["byte_start"],
                                                                 "byte_end": first["byte_end"]}))
        assert part["text"] == first["text"] and part["revision"] == 2
        zh_start = body.index("酸".encode())
        char = structured(await client.call_tool("memory_read", {"vault_id": "notes", "id": world["memory"],
                                                                 "byte_start": zh_start + 1, "byte_end": zh_start + 2}))
        assert (char["text"], char["byte_start"], char["byte_end"]) == ("酸", zh_start, zh_start + 3)  # whole chars

        # bounded output: a long card fills the byte budget and says so
        many = structured(await client.call_tool("memory_retrieve", {"vault_id": "notes", "query": "lantern river",
                                                                     "limit": 50}))
        assert many["truncated"] is True and many["omitted"] > 0
        assert sum(len(c["text"].encode()) for c in many["chunks"]) <= 24_000
        assert [c["citation"] for c in many["chunks"]] == [f"S{i}" for i in range(1, len(many["chunks"]) + 1)]
        whole = structured(await client.call_tool("memory_read", {"vault_id": "notes", "id": world["card"]}))
        assert whole["truncated"] is True and whole["byte_end"] <= 64_000 < whole["total_bytes"]
        rest = structured(await client.call_tool("memory_read", {"vault_id": "notes", "id": world["card"],
                                                                 "byte_start": whole["byte_end"]}))
        assert rest["truncated"] is False and rest["byte_end"] == whole["total_bytes"]


async def test_out_of_grant_bad_arguments_and_excluded_kinds(world):
    async with connect(world, "--vault", "notes") as client:
        text = error_text(await client.call_tool("memory_retrieve", {"vault_id": "work", "query": "lantern"}))
        assert "not granted" in text and "grant_denied" in text
        text = error_text(await client.call_tool("memory_read", {"vault_id": world["work"], "id": world["card"]}))
        assert "not granted" in text
        assert "mode" in error_text(await client.call_tool("memory_retrieve", {"vault_id": "notes", "query": "x",
                                                                               "mode": "telepathy"}))
        assert "limit" in error_text(await client.call_tool("memory_retrieve", {"vault_id": "notes",
                                                                                "query": "x", "limit": 0}))
        text = error_text(await client.call_tool("memory_retrieve", {"vault_id": "notes", "query": "x" * 5000}))
        assert "limit_exceeded" in text
        text = error_text(await client.call_tool("memory_read", {"vault_id": "notes", "id": world["memory"],
                                                                 "revision": 9}))
        assert "No record" in text

        for query in ("sourdough", "lantern", *CANARIES, "safe code password"):
            for mode_args in ({}, {"match_mode": "all"}, {"cards_only": True}):
                result = await client.call_tool("memory_retrieve", {"vault_id": "notes", "query": query, **mode_args})
                assert_no_canary(result)
                if not result.is_error:
                    assert not {c["id"] for c in result.structured_content["chunks"]} & set(world["excluded"])
            result = await client.call_tool("memory_search", {"vault_id": "notes", "query": query})
            assert_no_canary(result)
        missing = error_text(await client.call_tool("memory_read", {"vault_id": "notes", "id": "0000000000000000"}))
        for excluded_id in world["excluded"]:
            result = await client.call_tool("memory_read", {"vault_id": "notes", "id": excluded_id})
            assert_no_canary(result)
            # the same answer as for a record that does not exist: no hint that it is there
            assert error_text(result) == missing.replace("0000000000000000", excluded_id)


async def test_model_loads_lazily_and_vector_mode(world, minilm_dir):
    # The vectors first (`rag index`, resumed until done): a tool call embeds on demand within a
    # 30 s budget, which a loaded machine can run out of; this test is about loading, not speed.
    for _attempt in range(30):
        built = call_cli(world["home"], "--json", "rag", "index", "notes")
        if built.code == 0:
            break
        assert built.json["error"]["code"] == "budget_exceeded", built.stdout
    assert built.code == 0 and built.json["missing"] == 0
    async with connect(world, "--vault", "notes") as client:
        await client.list_tools()
        structured(await client.call_tool("memory_retrieve", {"vault_id": "notes", "query": "sourdough"}))
        log = client.errlog_path.read_text(encoding="utf-8")
        assert "[import-watch]" not in log  # start-up and BM25 never load onnxruntime or the tokenizer
        result = await client.call_tool("memory_retrieve", {"vault_id": "notes", "query": "bread dough feeding",
                                                            "mode": "hybrid"})
        log = client.errlog_path.read_text(encoding="utf-8")
    data = structured(result)
    assert data["mode"] == "hybrid" and data["chunks"]
    assert any(c["scores"].get("vector") is not None for c in data["chunks"])
    assert "[import-watch] onnxruntime" in log


async def test_memory_ask_extractive_and_insufficient_evidence(world):
    async with connect(world, "--vault", "notes") as client:
        schema = {t.name: t for t in (await client.list_tools()).tools}["memory_ask"].output_schema
        answer = structured(await client.call_tool("memory_ask", {"vault_id": "notes",
                                                                  "question": "How often is the sourdough starter fed?"}))
        jsonschema.validate(answer, schema)
        assert answer["status"] in ("extractive", "answered") and answer["sources"]
        assert {c["citation"] for c in answer["citations"]} <= {s["citation"] for s in answer["sources"]}
        spans = answer["citation_spans"]  # where each [S#] sits in the answer, as the citation check read it
        assert spans and {label for x in spans for label in x["labels"]} == {c["citation"] for c in answer["citations"]}
        assert all(answer["answer"][x["start"]:x["end"]].startswith("[S") for x in spans)
        assert_no_canary(await client.call_tool("memory_ask", {"vault_id": "notes", "question": "safe code password"}))
        nothing = structured(await client.call_tool("memory_ask", {"vault_id": "notes",
                                                                   "question": "zyxwvut qqqq"}))
        assert nothing["status"] == "insufficient_evidence" and nothing["sources"] == []
        assert "not granted" in error_text(await client.call_tool("memory_ask", {"vault_id": "work",
                                                                                 "question": "lantern"}))


async def test_revoke_from_another_process(world):
    async with connect(world, "--vault", "notes", "--vault", "work") as client:
        structured(await client.call_tool("memory_search", {"vault_id": "notes", "query": "lantern"}))
        status = call_cli(world["home"], "mcp", "status", "--json", passphrase=None)
        assert any(set(s["vaults"]) == {world["notes"], world["work"]} for s in status.json["servers"])
        revoked = call_cli(world["home"], "mcp", "revoke", "notes", "--json", passphrase=None)
        assert revoked.code == 0 and revoked.json["vault_id"] == world["notes"] and revoked.json["servers"]
        text = error_text(await client.call_tool("memory_search", {"vault_id": "notes", "query": "lantern"}))
        assert "revoked" in text and "grant_revoked" in text
        assert structured(await client.call_tool("memory_search", {"vault_id": "work", "query": "lantern"}))["records"]
    # a server started after the revocation is a fresh grant
    async with connect(world, "--vault", "notes") as client:
        structured(await client.call_tool("memory_search", {"vault_id": "notes", "query": "lantern"}))


async def test_passphrase_command_cannot_read_protocol_input(world, tmp_path):
    """The command runs while stdin is pointed at the null device: reading it gets EOF at once
    instead of eating the client's first request."""
    script = tmp_path / "pass.py"
    script.write_text("import sys\nsys.stdin.read()\nprint('correct horse')\n", encoding="utf-8")
    home = world["home"]
    env = _server_env(home)
    del env["MEMORIES_PASSPHRASE"]
    env["MEMORIES_PASSPHRASE_COMMAND"] = f"{sys.executable} {script}"
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "mcp", "--home", str(home),
                                                                 "--vault", "notes"], env=env)
    with open(tmp_path / "stderr.log", "w+", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
            found = structured(await client.call_tool("memory_search", {"vault_id": "notes", "query": "sourdough"}))
    assert [r["id"] for r in found["records"]] == [world["memory"]]


def test_stdout_carries_only_protocol_frames(world):
    """Raw JSON-RPC over the pipes: every line on stdout is a JSON-RPC message, logs go to stderr."""
    home = world["home"]
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "memory_retrieve", "arguments": {"vault_id": "notes", "query": "sourdough"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "memory_retrieve", "arguments": {"vault_id": "nope", "query": "x"}}},
    ]
    proc = subprocess.Popen([sys.executable, str(SERVER), "mcp", "--home", str(home), "--vault", "notes"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_server_env(home))
    try:
        replies = []
        for message in messages:
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
            if "id" in message:
                replies.append(json.loads(proc.stdout.readline()))
        proc.stdin.close()
        rest = proc.stdout.read()
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert all(reply["jsonrpc"] == "2.0" for reply in replies)
    assert [reply["id"] for reply in replies] == [1, 2, 3, 4]
    assert replies[2]["result"]["isError"] is False and replies[3]["result"]["isError"] is True
    for line in rest.decode().splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    log = proc.stderr.read().decode()  # logs go here: never a traceback, never the notes' text
    assert "Traceback" not in log
    for text in ("rye flour", "酸種", "paper lanterns", *CANARIES):
        assert text not in log


@pytest.mark.parametrize(("args", "env", "words"), [
    (["--vault", "notes"], {"MEMORIES_PASSPHRASE": "wrong"}, "passphrase"),
    (["--vault", "nope"], {}, "No vault 'nope'"),
    ([], {}, "--vault"),
    (["--vault", "notes", "--expires", "soon"], {}, "duration"),
    # without a passphrase source the server serves through the daemon (tests/integration/test_mcp_daemon.py)
    (["--vault", "notes", "--no-daemon"], {"MEMORIES_PASSPHRASE": None}, "never prompts"),
    (["--vault", "notes", "--json"], {}, "--json does not apply"),
])
def test_bad_start_is_a_clear_error_on_stderr(world, args, env, words):
    environ = _server_env(world["home"])
    for key, value in env.items():
        environ.pop(key, None) if value is None else environ.__setitem__(key, value)
    done = subprocess.run([sys.executable, str(SERVER), "mcp", "--home", str(world["home"]), *args],
                          stdin=subprocess.DEVNULL, capture_output=True, env=environ, timeout=120, check=False)
    assert done.returncode != 0
    stderr = done.stderr.decode()
    if "--json" in args:  # a usage error before serving: the one JSON object --json promises
        assert words in json.loads(done.stdout)["error"]["message"]
        return
    assert done.stdout == b""  # nothing but protocol frames ever goes to stdout
    assert words in stderr and "Traceback" not in stderr


def test_revoke_unknown_vault_and_no_servers(world, tmp_path):
    result = call_cli(world["home"], "mcp", "revoke", "nope", "--json", passphrase=None)
    assert result.code == 1 and result.json["error"]["code"] == "not_found"
    empty = call_cli(tmp_path / "empty", "mcp", "status", "--json", passphrase=None)
    assert empty.code == 0 and empty.json == {"servers": []}


def _server_record(home: Path) -> dict:
    deadline = time.time() + 30
    while time.time() < deadline:
        for path in (home / "mcp" / "servers").glob("*.json"):
            record = json.loads(path.read_text())
            if record["expires_at"]:
                return record
        time.sleep(0.05)
    raise AssertionError("the server wrote no grant record")


def test_sigterm_ends_the_server_and_removes_its_record(world):
    home = world["home"]
    proc = subprocess.Popen([sys.executable, str(SERVER), "mcp", "--home", str(home), "--vault", "work"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_server_env(home))
    record = home / "mcp" / "servers" / f"{proc.pid}.json"
    try:
        deadline = time.time() + 60
        while not record.exists() and time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert record.exists(), proc.stderr.read().decode() if proc.poll() is not None else "no record"
        # wait until the server is serving (it answers initialize), so the signal finds it idle
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "sigterm-test", "version": "1"}}}).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        proc.terminate()  # stdin stays open: the server is idle in a blocking read
        assert proc.wait(30) == 0
        assert not record.exists()
        assert proc.stdout.read() == b""  # nothing after the one answer
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()


async def test_device_only_vault_refuses_non_loopback_services(tmp_path):
    """Through MCP: a device-only vault never reaches a non-loopback service (192.0.2.1 is a
    documentation address: the refusal comes before any connection), local BM25 still works."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[rag.embedding]\nprotocol = "compatible"\nurl = "https://192.0.2.1/v1/embeddings"\nmodel = "e"\n'
        'dimensions = 8\n\n'
        '[rag.generation]\nprotocol = "compatible"\nurl = "https://192.0.2.1/v1/chat/completions"\nmodel = "g"\n')
    created = call_cli(home, "vault", "create", "dev", "--device-only", "--json")
    assert created.code == 0, created.stderr
    call_cli(home, "memory", "add", "dev", "--title", "Plan", "--text", "The garden plan: tomatoes by the fence.")
    async with connect({"home": home}, "--vault", "dev") as client:
        for tool, args in (("memory_ask", {"question": "Where do the tomatoes go?"}),
                           ("memory_retrieve", {"query": "tomatoes", "mode": "vector"}),
                           ("memory_retrieve", {"query": "tomatoes", "mode": "hybrid"})):
            text = error_text(await client.call_tool(tool, {"vault_id": "dev", **args}))
            assert "device-only" in text and "192.0.2.1" in text and "nothing was sent" in text
        local = structured(await client.call_tool("memory_retrieve", {"vault_id": "dev", "query": "tomatoes"}))
        assert [c["title"] for c in local["chunks"]] == ["Plan"]
