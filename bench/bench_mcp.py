"""MCP server start-up and first-call latency, beside the bare interpreter and SDK import.

Spawns the real `memories mcp` over raw JSON-RPC on its pipes, several times, on a vault made
with the default Argon2id cost (so the unlock a user pays is included), and reports medians:
spawn → `initialize` answered, `tools/list`, the first BM25 `memory_retrieve`, and (when the
MiniLM test model is present) the first hybrid call, which loads onnxruntime and the model.
References measured in the same run (each a fresh process): `python -c pass`, the default
Argon2id derivation, `import memories_tui.engine` and `import mcp.server.mcpserver`.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MINILM = ROOT / "tests" / ".models" / "minilm"
PASSPHRASE = "bench passphrase"


def make_home(home: Path) -> None:
    from memories_tui.engine import Engine

    if (MINILM / "model.onnx").is_file():
        home.mkdir(parents=True)
        (home / "config.toml").write_text(f'[rag]\nlocal_model_dir = "{MINILM}"\n'
                                          'local_model_profile = "sentence-transformers"\nlocal_threads = 1\n')
    engine = Engine.open(home)
    vault_id = engine.create_vault("bench", PASSPHRASE).vault_id
    engine.unlock(vault_id, PASSPHRASE)
    for n in range(200):
        engine.add_record(vault_id, kind="memory", title=f"Note {n}",
                          body=f"Note {n}: sourdough starter, lantern festival, 第{n}篇筆記 about bread and rivers.")
    engine.close()


def process_seconds(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def one_server_run(home: Path) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIES_")}
    env["MEMORIES_PASSPHRASE"] = PASSPHRASE
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "memories_tui", "mcp", "--home", str(home), "--vault", "bench"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out: dict[str, float] = {}

    def ask(message: dict, key: str | None) -> None:
        t = time.perf_counter()
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        if "id" in message:
            reply = json.loads(proc.stdout.readline())
            if "error" in reply or reply.get("result", {}).get("isError"):
                raise SystemExit(f"server error: {reply}")
        if key:
            out[key] = time.perf_counter() - (start if key == "initialize" else t)

    try:
        ask({"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "bench", "version": "1"}}}, "initialize")
        ask({"jsonrpc": "2.0", "method": "notifications/initialized"}, None)
        ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, "tools_list")
        ask(call(3, "sourdough lantern", "bm25"), "first_bm25")
        ask(call(4, "bread river", "bm25"), "second_bm25")
        if (MINILM / "model.onnx").is_file():
            ask(call(5, "baking bread", "hybrid"), "first_hybrid")
            ask(call(6, "festival by the river", "hybrid"), "second_hybrid")
    finally:
        proc.stdin.close()
        proc.wait(60)
    return out


def call(n: int, query: str, mode: str) -> dict:
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": "memory_retrieve", "arguments": {"vault_id": "bench", "query": query, "mode": mode}}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        make_home(home)
        one_server_run(home)  # warm the page cache and the encrypted index snapshot
        runs = [one_server_run(home) for _ in range(args.runs)]
        kdf = ("import os, time; from memories_tui.vault import crypto; "
               "crypto.derive_kek('x', os.urandom(16), crypto.creation_params())")
        refs = {"python -c pass": [process_seconds("pass") for _ in range(args.runs)],
                "Argon2id default cost (process)": [process_seconds(kdf) for _ in range(args.runs)],
                "import memories_tui.engine": [process_seconds("import memories_tui.engine")
                                               for _ in range(args.runs)],
                "import mcp.server.mcpserver": [process_seconds("import mcp.server.mcpserver")
                                                for _ in range(args.runs)]}
    medians = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    ref_medians = {key: statistics.median(v) for key, v in refs.items()}
    if args.json:
        print(json.dumps({"runs": args.runs, "server": medians, "reference": ref_medians}))
        return
    print(f"memories mcp, median of {args.runs} runs (default Argon2id unlock included in initialize)")
    for key, value in medians.items():
        print(f"  {key:<16} {value * 1000:8.0f} ms")
    print("reference processes")
    for key, value in ref_medians.items():
        print(f"  {key:<32} {value * 1000:8.0f} ms")


if __name__ == "__main__":
    main()
