"""What backups, restore and the egress log cost, beside references measured in the same run.

- backup of a vault of about `--mib` MiB: locked (structure and digests checked) and unlocked
  (every record decrypted, keyed manifest), beside a raw `shutil.copyfile` of the same file
  (what an unsafe copy costs) — medians of `--runs` interleaved runs;
- `vault restore --force` of that backup (verify + replace + the replaced vault kept), beside
  one Argon2id derivation at the default cost, which restore pays once for the passphrase;
- a search with a loopback rerank service, with its egress-log entry written (two small
  synchronous SQLite transactions) and with the log switched off, interleaved;
- one `memory add` (a commit), with the rollback anchors in the home and their copy outside it
  (the product), and with the home's anchor alone, interleaved: what the second copy costs.

`--json` prints one object: {"vault_mib", "records", "runs", "copy_s", "backup_locked_s",
"backup_unlocked_s", "restore_s", "argon2id_s", "search_rerank_s", "search_rerank_no_log_s",
"add_s", "add_home_anchor_only_s", "ratios": {...}}. The outside copy goes to a temporary
folder of the run (MEMORIES_STATE_DIR), never yours. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PASSPHRASE = "bench passphrase"


class Rerank(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        reply = json.dumps({"results": [{"index": i, "relevance_score": 1.0 / (i + 1)}
                                        for i in range(len(body["documents"]))]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


def timed(fn) -> float:  # noqa: ANN001
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=float, default=8.0, help="vault size to build (default 8 MiB)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from memories_tui.engine import Engine
    from memories_tui.engine.egress_ops import VaultEgress
    from memories_tui.vault import crypto

    server = ThreadingHTTPServer(("127.0.0.1", 0), Rerank)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEMORIES_STATE_DIR"] = str(Path(tmp) / "state")
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "config.toml").write_text('[rag.rerank]\nprotocol = "compatible"\n'
                                          f'url = "http://127.0.0.1:{server.server_address[1]}/rerank"\nmodel = "m"\n')
        engine = Engine.open(home)
        vault_id = engine.create_vault("bench", PASSPHRASE).vault_id
        engine.unlock(vault_id, PASSPHRASE)
        records = 0
        body = ("Sourdough starter notes, lantern festival, 第{n}篇筆記 about bread and rivers. " * 40)
        while engine.resolve_vault(vault_id).path.stat().st_size < args.mib * 2**20:
            engine.add_records(vault_id, [_note(n, body) for n in range(records, records + 50)])
            records += 50
        engine.lock()
        vault_file = engine.resolve_vault(vault_id).path
        out = Path(tmp) / "out"
        figures: dict[str, list[float]] = {k: [] for k in ("copy", "locked", "unlocked", "restore", "kdf",
                                                            "search", "search_no_log", "add", "add_home")}
        header = crypto.KdfParams()
        for run in range(args.runs):
            raw = Path(tmp) / f"raw{run}.mvault"
            figures["copy"].append(timed(lambda raw=raw: shutil.copyfile(vault_file, raw)))
            figures["locked"].append(timed(lambda: engine.backup_vault(vault_id, out)))
            engine.unlock(vault_id, PASSPHRASE)
            backup = engine.backup_vault(vault_id, out)
            figures["unlocked"].append(backup.seconds)
            engine.search(vault_id, "lantern bread", limit=10)  # index built once
            figures["search"].append(timed(lambda: engine.search(vault_id, "lantern bread", limit=10)))
            logged = VaultEgress.opened
            VaultEgress.opened = lambda self, request: (lambda *end: None)  # type: ignore[method-assign,assignment]
            figures["search_no_log"].append(timed(lambda: engine.search(vault_id, "lantern bread", limit=10)))
            VaultEgress.opened = logged  # type: ignore[method-assign]
            both = list(engine.anchors.stores)
            for stores, key in ((both, "add"), (both[:1], "add_home")):
                engine.anchors.stores = stores  # the open vault's watcher reads this same book
                figures[key] += [timed(lambda n=n: engine.add_record(vault_id, kind="memory", title=f"a{n}",
                                                                     body="one more note")) for n in range(20)]
            engine.anchors.stores = both
            engine.lock()
            figures["restore"].append(timed(lambda b=backup.path: engine.restore_vault(b, PASSPHRASE, force=True)))
            figures["kdf"].append(timed(lambda: crypto.derive_kek(PASSPHRASE, os.urandom(16), header)))
        size = vault_file.stat().st_size
        engine.close()
    server.shutdown()
    med = {k: statistics.median(v) for k, v in figures.items()}
    result = {"vault_mib": round(size / 2**20, 2), "records": records, "runs": args.runs,
              "copy_s": med["copy"], "backup_locked_s": med["locked"], "backup_unlocked_s": med["unlocked"],
              "restore_s": med["restore"], "argon2id_s": med["kdf"], "search_rerank_s": med["search"],
              "search_rerank_no_log_s": med["search_no_log"], "add_s": med["add"],
              "add_home_anchor_only_s": med["add_home"],
              "ratios": {"backup_locked_vs_copy": med["locked"] / med["copy"],
                         "backup_unlocked_vs_copy": med["unlocked"] / med["copy"],
                         "restore_vs_argon2id": med["restore"] / med["kdf"],
                         "search_with_log_vs_without": med["search"] / med["search_no_log"],
                         "add_with_outside_copy_vs_home_only": med["add"] / med["add_home"]}}
    if args.json:
        print(json.dumps(result))
        return
    print(f"vault: {result['vault_mib']} MiB, {records} records; medians of {args.runs} interleaved runs")
    rows = [("raw shutil.copyfile (reference)", med["copy"], ""),
            ("vault backup, locked (structure)", med["locked"], f"{med['locked'] / med['copy']:.1f}x copy"),
            ("vault backup, unlocked (AEAD + manifest)", med["unlocked"], f"{med['unlocked'] / med['copy']:.1f}x copy"),
            ("Argon2id, default cost (reference)", med["kdf"], ""),
            ("vault restore --force", med["restore"], f"{med['restore'] / med['kdf']:.1f}x Argon2id"),
            ("search + loopback rerank, no egress log", med["search_no_log"], ""),
            ("search + loopback rerank, egress logged", med["search"],
             f"{med['search'] / med['search_no_log']:.2f}x"),
            ("memory add, home's anchor only", med["add_home"], ""),
            ("memory add, anchors in and outside the home", med["add"], f"{med['add'] / med['add_home']:.2f}x")]
    for label, seconds, ratio in rows:
        print(f"  {label:<44} {seconds * 1000:9.1f} ms  {ratio}")


def _note(n: int, body: str):  # noqa: ANN202
    from memories_tui.engine import NewRecord

    return NewRecord("memory", f"Note {n}", body.format(n=n))


if __name__ == "__main__":
    main()
