"""The resident engine against per-process unlocking, measured in the same run.

1. CLI wall time (each a fresh `python -m memories_tui` process, median of --runs >= 20):
   `rag search`, `memory add`, `rag ask` (extractive) in-process (`--no-daemon`, the default
   Argon2id unlock and the index restore every time) and through a daemon that holds the
   vault unlocked: the command line run by the daemon (cli/quick_call.py, the default) and the
   ordinary client that builds the CLI and asks the daemon per engine call
   (`MEMORIES_QUICK_OFF=1`); their ratio; `python -c pass` and `vault list` (no unlock) as references.
2. `memories mcp` spawn -> `initialize` answered and the first BM25 call: per process (the
   server unlocks with the default Argon2id cost) and with the daemon running (the process
   relays its stdio to a session the daemon hosts); `python -c pass` in the same rounds.
3. Total resident memory of a TUI + 3 MCP servers + 5 CLI searches with an embedding model
   loaded (hybrid mode): every process on its own, the TUI serving the socket itself, and a
   separate daemon beside the TUI. Long-lived processes are read from /proc (VmRSS after their
   work); each CLI search counts its own peak (VmHWM, bench/peak_rss.py), as if the five ran
   at once.

The vault is made with the shipped Argon2id cost; the model is the MiniLM test model
(`tests/.models/minilm`, fetched by scripts/fetch-test-models) unless --model names another
sentence-transformers folder. Prints figures; asserts nothing (Linux: /proc, wait4).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
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
TUI_HOST = Path(__file__).with_name("daemon_tui.py")
PEAK = Path(__file__).with_name("peak_rss.py")


def env_for(home: Path, *, passphrase: bool, no_daemon: bool, quick: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORIES_")}
    env["MEMORIES_HOME"] = str(home)
    if not quick:
        env["MEMORIES_QUICK_OFF"] = "1"
    if passphrase:
        env["MEMORIES_PASSPHRASE"] = PASSPHRASE
    if no_daemon:
        env["MEMORIES_NO_DAEMON"] = "1"
    return env


def make_home(home: Path, model: Path | None) -> None:
    from memories_tui.engine import Engine

    home.mkdir(parents=True)
    if model is not None:
        (home / "config.toml").write_text(f'[rag]\nlocal_model_dir = "{model}"\n'
                                          'local_model_profile = "sentence-transformers"\nlocal_threads = 1\n')
    engine = Engine.open(home)
    vault_id = engine.create_vault("bench", PASSPHRASE).vault_id  # the shipped Argon2id cost
    engine.unlock(vault_id, PASSPHRASE)
    for n in range(200):
        engine.add_record(vault_id, kind="memory", title=f"Note {n}",
                          body=f"Note {n}: sourdough starter, lantern festival, 第{n}篇筆記 about bread and rivers.")
    engine.load_index(vault_id)
    engine.close()  # saves the encrypted index snapshot


def cli(home: Path, *args: str, passphrase: bool, no_daemon: bool, quick: bool = True) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "memories_tui", *args], env=env_for(home, passphrase=passphrase,
                                                                                    no_daemon=no_daemon, quick=quick),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"memories {' '.join(args)} failed: {done.stderr.decode(errors='replace')}")
    return elapsed


VERBS = {
    "rag search": ("rag", "search", "bench", "sourdough lantern"),
    "memory add": ("memory", "add", "bench", "--title", "bench", "--text", "a new note about rye bread"),
    "rag ask (extractive)": ("rag", "ask", "bench", "What is the note about bread and rivers?"),
}


def cli_figures(home: Path, runs: int) -> dict[str, dict[str, float]]:
    """In-process and daemon runs alternate (the daemon idles during in-process runs), with the
    references measured among them, so a busy machine loads both sides alike."""
    out: dict[str, dict[str, float]] = {}
    refs = {"python -c pass": lambda: _seconds([sys.executable, "-c", "pass"]),
            "vault list (no unlock)": lambda: cli(home, "vault", "list", passphrase=False, no_daemon=True)}
    ref_times: dict[str, list[float]] = {name: [] for name in refs}
    cli(home, "unlock", "bench", passphrase=True, no_daemon=False)
    try:
        for name, argv in VERBS.items():
            cli(home, *argv, passphrase=True, no_daemon=True)  # warm the page cache and the daemon's index
            cli(home, *argv, passphrase=False, no_daemon=False)
            alone, served, asked = [], [], []
            for _ in range(runs):
                alone.append(cli(home, *argv, passphrase=True, no_daemon=True))
                served.append(cli(home, *argv, passphrase=False, no_daemon=False))
                asked.append(cli(home, *argv, passphrase=False, no_daemon=False, quick=False))
                for ref, fn in refs.items():
                    ref_times[ref].append(fn())
            out[name] = {"in_process_s": statistics.median(alone), "daemon_s": statistics.median(served),
                         "ordinary_client_s": statistics.median(asked),
                         "ratio": statistics.median(alone) / statistics.median(served)}
    finally:
        cli(home, "daemon", "stop", passphrase=False, no_daemon=False)
    for ref, times in ref_times.items():
        out[ref] = {"median_s": statistics.median(times)}
    floor = out["python -c pass"]["median_s"]
    for name in VERBS:
        out[name]["daemon_vs_pass"] = out[name]["daemon_s"] / floor
        out[name]["ordinary_client_vs_pass"] = out[name]["ordinary_client_s"] / floor
    return out


def _seconds(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True)
    return time.perf_counter() - start


# -- MCP ---------------------------------------------------------------------------------------

class McpServer:
    """A real `memories mcp` over raw JSON-RPC on its pipes."""

    def __init__(self, home: Path, *, daemon: bool) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memories_tui", "mcp", "--vault", "bench"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env_for(home, passphrase=not daemon, no_daemon=not daemon))
        self.next_id = 0

    def ask(self, method: str, params: dict | None = None) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if "error" in reply or reply.get("result", {}).get("isError"):
            raise SystemExit(f"server error: {reply}")
        return reply

    def initialize(self) -> float:
        self.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "1"}})
        seconds = time.perf_counter() - self.started
        assert self.proc.stdin is not None
        self.proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        self.proc.stdin.flush()
        return seconds

    def retrieve(self, query: str, mode: str) -> float:
        start = time.perf_counter()
        self.ask("tools/call", {"name": "memory_retrieve", "arguments": {"vault_id": "bench", "query": query,
                                                                         "mode": mode}})
        return time.perf_counter() - start

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(60)


def mcp_figures(home: Path, runs: int) -> dict[str, dict[str, float]]:
    """Per-process servers (MEMORIES_NO_DAEMON=1: they unlock with the default Argon2id cost)
    alternate with daemon-served ones while the daemon holds the vault."""
    times: dict[str, dict[str, list[float]]] = {label: {"initialize_s": [], "first_bm25_s": []}
                                                for label in ("per process", "daemon running")}
    floor: list[float] = []
    cli(home, "unlock", "bench", passphrase=True, no_daemon=False)
    try:
        for n in range(runs + 1):
            for label, daemon in (("per process", False), ("daemon running", True)):
                server = McpServer(home, daemon=daemon)
                started = server.initialize()
                first = server.retrieve("sourdough lantern", "bm25")
                server.close()
                if n:  # the first round warms the page cache (and loads the MCP SDK in the daemon)
                    times[label]["initialize_s"].append(started)
                    times[label]["first_bm25_s"].append(first)
            if n:
                floor.append(_seconds([sys.executable, "-c", "pass"]))
    finally:
        cli(home, "daemon", "stop", passphrase=False, no_daemon=False)
    out = {label: {key: statistics.median(values) for key, values in row.items()} for label, row in times.items()}
    for row in out.values():
        row["initialize_vs_pass"] = row["initialize_s"] / statistics.median(floor)
    out["python -c pass"] = {"median_s": statistics.median(floor)}
    return out


# -- memory ------------------------------------------------------------------------------------

def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def cli_peak(home: Path, *, daemon: bool) -> int:
    """One hybrid `rag search`'s peak resident memory, as the process itself reports it."""
    done = subprocess.run([sys.executable, str(PEAK), "rag", "search", "bench", "bread by the river", "--mode",
                           "hybrid"], env=env_for(home, passphrase=not daemon, no_daemon=not daemon),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        raise SystemExit(f"a CLI search failed: {done.stderr.decode(errors='replace')}")
    return int(done.stderr.decode().strip().splitlines()[-1].split()[1])


class TuiHost:
    """The real TUI (headless, driven by Pilot in bench/daemon_tui.py): unlocked, model loaded."""

    def __init__(self, home: Path, *, no_daemon: bool) -> None:
        self.proc = subprocess.Popen([sys.executable, str(TUI_HOST)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env={**env_for(home, passphrase=True, no_daemon=no_daemon)})
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode().strip()
        if line != "ready":
            raise SystemExit(f"the TUI did not get ready: {line!r}")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(60)


def memory_scenario(home: Path, scenario: str) -> dict[str, float]:
    """scenario: per-process | tui-serves | daemon+tui."""
    daemon_pid = None
    if scenario == "daemon+tui":
        cli(home, "unlock", "bench", passphrase=True, no_daemon=False)
        daemon_pid = int(json.loads((home / "daemon" / "daemon.lock").read_text())["pid"])
    tui = TuiHost(home, no_daemon=scenario == "per-process")
    servers = [McpServer(home, daemon=scenario != "per-process") for _ in range(3)]
    try:
        for server in servers:
            server.initialize()
            server.retrieve("bread by the river", "hybrid")  # loads the model where the work runs
        peaks = [cli_peak(home, daemon=scenario != "per-process") for _ in range(5)]
        parts = {"tui": rss(tui.proc.pid), "mcp": sum(rss(s.proc.pid) for s in servers), "cli": sum(peaks),
                 "daemon": rss(daemon_pid) if daemon_pid else 0}
    finally:
        for server in servers:
            server.close()
        tui.close()
        if daemon_pid:
            os.kill(daemon_pid, signal.SIGTERM)
            time.sleep(1)
    return {key: value / 2**20 for key, value in {**parts, "total": sum(parts.values())}.items()}


def compile_package() -> None:
    """Byte-compile memories_tui as an install does: with PYTHONDONTWRITEBYTECODE set (as in some
    shells and CI) an editable checkout would otherwise compile every module it imports on every
    run, which is start-up a user's installed copy never pays."""
    import compileall

    import memories_tui

    compileall.compile_dir(str(Path(memories_tui.__file__).parent), quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="CLI runs per command and mode (median; >= 20)")
    parser.add_argument("--mcp-runs", type=int, default=5)
    parser.add_argument("--model", type=Path, default=MINILM, help="a sentence-transformers ONNX folder")
    parser.add_argument("--skip", action="append", default=[], choices=("cli", "mcp", "memory"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    model = args.model if (args.model / "model.onnx").is_file() else None
    compile_package()
    report: dict[str, object] = {"runs": args.runs, "model": str(model) if model else None}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        make_home(home, model)
        if "cli" not in args.skip:
            report["cli"] = cli_figures(home, args.runs)
        if "mcp" not in args.skip:
            report["mcp"] = mcp_figures(home, args.mcp_runs)
        if "memory" not in args.skip and model is not None:
            report["memory_mib"] = {name: memory_scenario(home, name)
                                    for name in ("per-process", "tui-serves", "daemon+tui")}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print_report(report)


def print_report(report: dict) -> None:
    if "cli" in report:
        print(f"CLI wall time, median of {report['runs']} fresh processes")
        for name, row in report["cli"].items():
            if "ratio" in row:
                print(f"  {name:<24} in-process {row['in_process_s']:6.3f} s   daemon {row['daemon_s']:6.3f} s   "
                      f"{row['ratio']:5.1f}x   daemon / python -c pass {row['daemon_vs_pass']:4.2f}x   (ordinary client "
                      f"{row['ordinary_client_s']:6.3f} s, {row['ordinary_client_vs_pass']:4.2f}x)")
            else:
                print(f"  {name:<24} {row['median_s']:6.3f} s (reference)")
    if "mcp" in report:
        print("memories mcp: spawn -> initialize answered, first BM25 call (median)")
        for label, row in report["mcp"].items():
            if "initialize_s" not in row:
                print(f"  {label:<16} {row['median_s']:6.3f} s (reference, same rounds)")
                continue
            print(f"  {label:<16} initialize {row['initialize_s']:6.3f} s ({row['initialize_vs_pass']:4.1f}x python -c "
                  f"pass)   first bm25 {row['first_bm25_s']:6.3f} s")
    if "memory_mib" in report:
        print(f"resident memory, TUI + 3 MCP + 5 CLI hybrid searches (MiB; model {report['model']})")
        for name, row in report["memory_mib"].items():
            print(f"  {name:<12} total {row['total']:7.1f}   tui {row['tui']:6.1f}   daemon {row['daemon']:6.1f}   "
                  f"3 mcp {row['mcp']:6.1f}   5 cli {row['cli']:6.1f}")


if __name__ == "__main__":
    main()
