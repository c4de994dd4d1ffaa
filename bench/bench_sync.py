"""What sync costs against a real S3-compatible server on 127.0.0.1 (SeaweedFS from the test
extra), beside references measured in the same run with the same client (boto3):

- the first push of a vault of `--records` records (~2 KB each) and a `sync join` of it on a
  fresh home, beside uploading / downloading the same bytes in the same number of objects
  with boto3 directly;
- the peak resident memory a first push adds (a child process opens a copy of the vault and
  pushes it to a folder target, its peak reset just before the push: /proc/self/clear_refs),
  and the peak a join of that folder adds (another child, on a fresh home), then the peak a sync
  of that joined home adds once the pushing one added as many records again (a device far
  behind: another imported a folder of notes), beside the vault file's size;
- one edit on one device, then a sync on another: seconds (p50 of `--edits`), objects fetched
  and bytes, at this vault size (`--records 1000,5000,10000` measures each size in one run and
  prints one Markdown table, to see whether cost follows changes or vault size);
- a floor beside each ratio, measured in the same run: the raw transfer plus the least any
  vault stored in SQLite must do with those bytes (join: the raw download, then the same
  records' plaintext inserted into a fresh SQLite file in one transaction, no crypto; push:
  those rows read back from SQLite, then the raw upload);
- the object count in the bucket after `--syncs` rounds (default 1,000) of "an edit on device A,
  synced, then a sync on device B", with compaction (`[sync] compact_after`, default 64) and
  without (0), on a vault of 100 records: highest and final count, bytes stored, seconds.

`--latency-ms N` makes every request of the sync's S3 target and of the raw reference wait N ms
first: a store a round trip away (a cloud bucket is 10-100 ms from a laptop), which loopback
hides; the server is still the real SeaweedFS. `--mbps M` makes the transfers of both share a
link of M megabits a second each way (a home uplink is 10-100): on loopback a push or a join
costs its vault work, over such a link mostly its transfer, and what the sync's work overlaps
with the transfer shows.

Vaults use cheap Argon2id parameters here (the KDF is not what is measured). `--json` prints one
object per size: {"records", "push_s", "raw_upload_s", "join_s", "raw_download_s", "edit_sync_p50_s",
"edit_sync_objects", "edit_sync_bytes", "objects", "bytes", "push_rss_mb", "join_rss_mb", "behind_rss_mb",
"vault_mb",
"floor_push_s", "floor_join_s", "push_cpu_s", "join_cpu_s" (this process's CPU seconds: less swayed
by a loaded machine than the wall-clock figures), "ratios": {...}}, then one for the compaction
figure: {"syncs", "compact_after", "with": {...}, "without": {...}}. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PASSPHRASE = "bench passphrase"
BUCKET = "bench-sync"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", default="1000", help="records in the vault; several sizes comma-separated "
                        "(1000,5000,10000) print one table from one run (default 1000)")
    parser.add_argument("--edits", type=int, default=20, help="edit-then-sync rounds for the p50 (default 20)")
    parser.add_argument("--syncs", type=int, default=1000, help="rounds for the object count with and without "
                        "compaction (default 1000; 0 skips it)")
    parser.add_argument("--compact-after", type=int, default=64, help="[sync] compact_after measured (default 64)")
    parser.add_argument("--variants", default="with,without", help="with,without (default both; one of them "
                        "runs that one alone, e.g. to run the two in parallel)")
    parser.add_argument("--latency-ms", type=float, default=0, help="every request to the store, the sync's and "
                        "the raw reference's, first waits this long (a remote store's round trip, modelled in the "
                        "client; the server is still SeaweedFS on 127.0.0.1; default 0)")
    parser.add_argument("--mbps", type=float, default=0, help="the sync's and the raw reference's transfers share "
                        "a link of this many megabits a second each way (modelled in the client, like "
                        "--latency-ms; default 0: loopback's own speed)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per size")
    parser.add_argument("--rss-child", nargs=3, metavar=("push|join", "HOME", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        print(json.dumps(sync_peak(*args.rss_child)))
        return
    sizes = [int(n) for n in str(args.records).split(",") if int(n) > 0]
    if args.latency_ms or args.mbps:
        _model_link(args.latency_ms / 1000, args.mbps)
    results = [measure(n, args.edits) for n in sizes]
    counts = None
    if args.syncs > 0:
        counts = {"syncs": args.syncs, "compact_after": args.compact_after}
        for key in args.variants.split(","):
            counts[key] = measure_compaction(args.syncs, args.compact_after if key == "with" else 0)
    if args.json:
        for result in results + ([counts] if counts else []):
            print(json.dumps(result))
        return
    if counts:
        print(f"Objects in the bucket after {counts['syncs']:,} rounds (edit on A + sync, sync on B):\n")
        print("| compaction | highest count | final count | MB stored | seconds |")
        print("|---|---|---|---|---|")
        for label, key in ((f"compact_after = {args.compact_after}", "with"), ("none (0)", "without")):
            if key in counts:
                c = counts[key]
                print(f"| {label} | {c['highest']:,} | {c['final']:,} | {c['bytes'] / 1e6:.2f} | "
                      f"{c['seconds']:.0f} (retried {c['retries']:g}) |")
        print()
    if not results:
        return
    print(f"| records | objects | MB | push s | raw up s | ratio | floor push s (ratio) | join s | raw down s | ratio | "
          f"floor join s (ratio) | edit sync p50 s ({args.edits}) | objects | bytes fetched | push peak RSS MB | "
          "join peak RSS MB | behind peak RSS MB | vault MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        q = r["ratios"]
        print(f"| {r['records']:,} | {r['objects']} | {r['bytes'] / 1e6:.1f} | {r['push_s']:.2f} | "
              f"{r['raw_upload_s']:.2f} | {q['push_vs_raw']:.1f}x | {r['floor_push_s']:.2f} ({q['floor_push_vs_raw']:.1f}x) | "
              f"{r['join_s']:.2f} | {r['raw_download_s']:.2f} | {q['join_vs_raw']:.1f}x | "
              f"{r['floor_join_s']:.2f} ({q['floor_join_vs_raw']:.1f}x) | {r['edit_sync_p50_s']:.3f} | "
              f"{r['edit_sync_objects']:g} | {r['edit_sync_bytes']:,.0f} | {r['push_rss_mb']:.1f} | "
              f"{r['join_rss_mb']:.1f} | {r['behind_rss_mb']:.1f} | {r['vault_mb']:.1f} |")


class _Link:
    """One direction of a link of `rate` bytes a second that every transfer shares: a transfer
    waits for the ones before it, as on one real connection (four fetches at once do not get
    four times the bandwidth)."""

    def __init__(self, rate: float) -> None:
        self.rate, self.free_at = rate, 0.0
        self._lock = threading.Lock()

    def carry(self, size: int) -> None:
        if not self.rate:
            return
        with self._lock:
            self.free_at = max(time.perf_counter(), self.free_at) + size / self.rate
            until = self.free_at
        time.sleep(max(0.0, until - time.perf_counter()))


_LATENCY = 0.0
_UP, _DOWN = _Link(0), _Link(0)


def _model_link(seconds: float, mbps: float) -> None:
    """Make every request of the sync's S3 target (and, through `_wait`, of the raw reference)
    wait `seconds` first and carry its bytes at `mbps` megabits a second each way: what a store
    a round trip away over a real link costs, which loopback hides."""
    global _LATENCY, _UP, _DOWN
    from memories_tui.sync import s3

    _LATENCY, _UP, _DOWN = seconds, _Link(mbps * 1e6 / 8), _Link(mbps * 1e6 / 8)
    real_put, real_get, real_list, real_delete = s3.S3Target.put, s3.S3Target.get, s3.S3Target.list, s3.S3Target.delete

    def put(self, name, data):  # noqa: ANN001, ANN202
        _wait(up=len(data))
        return real_put(self, name, data)

    def get(self, name, limit=None):  # noqa: ANN001, ANN202
        _wait()
        blob = real_get(self, name, limit)
        _DOWN.carry(len(blob or b""))
        return blob

    def listed(self, prefix):  # noqa: ANN001, ANN202
        _wait()
        return real_list(self, prefix)

    def delete(self, name):  # noqa: ANN001, ANN202
        _wait()
        return real_delete(self, name)

    s3.S3Target.put, s3.S3Target.get, s3.S3Target.list, s3.S3Target.delete = put, get, listed, delete  # type: ignore[method-assign]


def _wait(up: int = 0) -> None:
    if _LATENCY:
        time.sleep(_LATENCY)
    _UP.carry(up)


def measure(records: int, edits: int) -> dict[str, object]:
    for name, value in {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                        "AWS_DEFAULT_REGION": "us-east-1"}.items():
        os.environ.setdefault(name, value)
    import boto3

    from memories_tui.engine import Engine
    from memories_tui.vault.records import NewRecord
    from tests.helpers.seaweed import seaweed_server
    from tests.helpers.vaults import use_cheap_kdf

    use_cheap_kdf()
    room = max(8, records // 1000)  # 64 MiB volumes: the pushed vault and the raw copy of it, with room to spare
    with seaweed_server(volumes=room) as server, tempfile.TemporaryDirectory() as tmp:
        client = boto3.client("s3", endpoint_url=server.endpoint)
        client.create_bucket(Bucket=BUCKET)
        url = f"s3://{BUCKET}/vault"
        for home in ("a", "b"):  # ~3 chunks a record: room for the largest size measured
            (Path(tmp) / home).mkdir()
            (Path(tmp) / home / "config.toml").write_text("[rag.limits]\nchunks = 1000000\nsource_mib = 1024\n",
                                                          encoding="utf-8")
        a = Engine.open(Path(tmp) / "a")
        info = a.create_vault("notes", PASSPHRASE)
        a.unlock(info.vault_id, PASSPHRASE)
        text = "同步測試 sync benchmark paragraph. " * 55  # ~2 KB of UTF-8
        ids = [r.id for r in a.add_records(info.vault_id, [NewRecord("memory", f"note {i}", f"{i} {text}")
                                                           for i in range(records)])]
        shutil.copytree(Path(tmp) / "a", Path(tmp) / "c")  # the same vault, pushed again by a child (peak RSS)
        vault_mb = sum(f.stat().st_size for f in (Path(tmp) / "c").rglob("*.mvault*")) / 1e6
        a.sync_add(info.vault_id, url, PASSPHRASE, endpoint_url=server.endpoint)
        start, cpu = time.perf_counter(), time.process_time()
        pushed = a.sync_now(info.vault_id)
        push_s, push_cpu = time.perf_counter() - start, time.process_time() - cpu
        sizes = [len(client.get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read())
                 for o in client.list_objects_v2(Bucket=BUCKET, Prefix="vault/")["Contents"]]
        payload = [os.urandom(n) for n in sizes]
        start = time.perf_counter()
        for i, blob in enumerate(payload):
            _wait(up=len(blob))
            client.put_object(Bucket=BUCKET, Key=f"raw/{i}", Body=blob)
        raw_up = time.perf_counter() - start
        b = Engine.open(Path(tmp) / "b")
        start, cpu = time.perf_counter(), time.process_time()
        joined = b.sync_join(url, PASSPHRASE, endpoint_url=server.endpoint)
        join_s, join_cpu = time.perf_counter() - start, time.process_time() - cpu
        start = time.perf_counter()
        for i in range(len(payload)):
            _wait()
            _DOWN.carry(len(client.get_object(Bucket=BUCKET, Key=f"raw/{i}")["Body"].read()))
        raw_down = time.perf_counter() - start
        plain = [(record_id, 1, "memory", _plaintext(record_id, i, text)) for i, record_id in enumerate(ids)]
        # the floor: the raw transfer plus the least SQLite work (a second 25 MB upload here would
        # outgrow the test server's volumes, so the transfer part is the raw one measured above)
        floor_join = raw_down + _floor_insert(plain, Path(tmp) / "floor.sqlite")
        floor_push = _floor_read(Path(tmp) / "floor.sqlite") + raw_up
        times, fetched, fetched_bytes = [], [], []
        for round_ in range(edits):
            a.update_record(info.vault_id, ids[round_ % len(ids)], body=f"edit {round_}")
            a.sync_now(info.vault_id)
            start = time.perf_counter()
            report = b.sync_now(joined.vault_id)
            times.append(time.perf_counter() - start)
            fetched.append(report.fetched_objects)
            fetched_bytes.append(report.fetched_bytes)
        a.close()
        b.close()
        (Path(tmp) / "rss").mkdir()  # a folder target: SeaweedFS here refuses a second prefix's writes now and then
        peak = {}
        for mode, home in (("push", "c"), ("join", "d"), ("behind", "d")):
            if mode == "behind":  # the pushing device imports as many notes again; the joined one is behind
                c = Engine.open(Path(tmp) / "c")
                c.unlock(info.vault_id, PASSPHRASE)
                c.add_records(info.vault_id, [NewRecord("memory", f"more {i}", f"{i} {text}") for i in range(records)])
                c.sync_now(info.vault_id)
                c.close()
            child = subprocess.run([sys.executable, __file__, "--rss-child", mode, str(Path(tmp) / home),
                                    str(Path(tmp) / "rss")], capture_output=True, text=True)
            if child.returncode:
                raise SystemExit(child.stderr)
            peak[mode] = json.loads(child.stdout.splitlines()[-1])["added"]
    return {"records": records, "push_s": push_s, "raw_upload_s": raw_up, "join_s": join_s,
            "raw_download_s": raw_down, "edit_sync_p50_s": statistics.median(times),
            "edit_sync_objects": statistics.median(fetched), "edit_sync_bytes": statistics.median(fetched_bytes),
            "objects": pushed.pushed_objects, "bytes": pushed.pushed_bytes,
            "push_rss_mb": peak["push"] / 1e6, "join_rss_mb": peak["join"] / 1e6,
            "behind_rss_mb": peak["behind"] / 1e6, "vault_mb": vault_mb,
            "floor_push_s": floor_push, "floor_join_s": floor_join, "push_cpu_s": push_cpu, "join_cpu_s": join_cpu,
            "ratios": {"push_vs_raw": push_s / raw_up, "join_vs_raw": join_s / raw_down,
                       "floor_push_vs_raw": floor_push / raw_up, "floor_join_vs_raw": floor_join / raw_down,
                       "push_vs_floor": push_s / floor_push, "join_vs_floor": join_s / floor_join}}


def _plaintext(record_id: str, i: int, text: str) -> bytes:
    """The stored form of record `i` as the bench made it (what a vault holds, before sealing)."""
    from memories_tui.vault.integrity import encode_payload
    from memories_tui.vault.records import Record

    stamp = "2026-01-01T00:00:00Z"
    return encode_payload(Record(id=record_id, revision=1, kind="memory", title=f"note {i}", body=f"{i} {text}",
                                 created=stamp, updated=stamp))


_FLOOR_SCHEMA = ("CREATE TABLE records (record_id TEXT NOT NULL, revision INTEGER NOT NULL, kind TEXT NOT NULL, "
                 "payload BLOB NOT NULL, PRIMARY KEY (record_id, revision))")


def _floor_connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")  # as the vault's connection (vault/header.py)
    conn.execute("PRAGMA synchronous=FULL")
    return conn


def _floor_insert(rows: list[tuple[str, int, str, bytes]], path: Path) -> float:
    """What a join must at least add to its download: the records' plaintext inserted into a
    fresh SQLite file in one transaction (no crypto, no checks). Seconds."""
    start = time.perf_counter()
    conn = _floor_connect(path)
    conn.execute(_FLOOR_SCHEMA)
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO records VALUES (?, ?, ?, ?)", rows)
    conn.execute("COMMIT")
    conn.close()
    return time.perf_counter() - start


def _floor_read(path: Path) -> float:
    """What a first push must at least add to its upload: those rows read back from SQLite and
    joined into the bytes to send. Seconds."""
    start = time.perf_counter()
    conn = _floor_connect(path)
    data = b"".join(row[0] for row in conn.execute("SELECT payload FROM records"))
    conn.close()
    assert data
    return time.perf_counter() - start


def sync_peak(mode: str, home: str, folder: str) -> dict[str, int]:
    """In a child: open the copied home, add the folder target, reset the peak RSS, push (or, on
    a fresh home, reset it and join the folder; or, `behind`, sync the joined home after the
    pushing one added as many records again); the peak that added over the resident size just
    before it (bytes)."""
    for name, value in {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                        "AWS_DEFAULT_REGION": "us-east-1"}.items():
        os.environ.setdefault(name, value)
    import gc

    from memories_tui.engine import Engine
    from tests.helpers.vaults import use_cheap_kdf

    use_cheap_kdf()
    engine = Engine.open(Path(home))
    if mode in ("push", "behind"):
        vault_id = engine.list_vaults()[0].vault_id
        engine.unlock(vault_id, PASSPHRASE)
    if mode == "push":
        engine.sync_add(vault_id, folder, PASSPHRASE)
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM starts again from the current size
    before = _status("VmRSS")
    if mode in ("push", "behind"):
        engine.sync_now(vault_id)
    else:
        engine.sync_join(folder, PASSPHRASE)
    peak = _status("VmHWM")
    engine.close()
    return {"before": before, "peak": peak, "added": peak - before}


def _status(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as handle:
        return next(int(line.split()[1]) * 1024 for line in handle if line.startswith(field + ":"))


def measure_compaction(rounds: int, compact_after: int, records: int = 100) -> dict[str, float]:
    """Two devices; each round an edit on A is synced, then B syncs. The bucket is listed after
    every round: the highest count, the final count and the bytes stored at the end."""
    for name, value in {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                        "AWS_DEFAULT_REGION": "us-east-1"}.items():
        os.environ.setdefault(name, value)
    import boto3

    from memories_tui.engine import Engine
    from memories_tui.vault.records import NewRecord
    from tests.helpers.seaweed import seaweed_server
    from tests.helpers.vaults import use_cheap_kdf

    use_cheap_kdf()
    room = max(8, records // 1000)  # 64 MiB volumes: the pushed vault and the raw copy of it, with room to spare
    with seaweed_server(volumes=room) as server, tempfile.TemporaryDirectory() as tmp:
        client = boto3.client("s3", endpoint_url=server.endpoint)
        client.create_bucket(Bucket=BUCKET)
        url = f"s3://{BUCKET}/vault"
        for home in ("a", "b"):
            (Path(tmp) / home).mkdir()
            (Path(tmp) / home / "config.toml").write_text(f"[sync]\ncompact_after = {compact_after}\n",
                                                          encoding="utf-8")
        a = Engine.open(Path(tmp) / "a")
        info = a.create_vault("notes", PASSPHRASE)
        a.unlock(info.vault_id, PASSPHRASE)
        text = "同步測試 compaction paragraph. " * 55
        ids = [r.id for r in a.add_records(info.vault_id, [NewRecord("memory", f"note {i}", f"{i} {text}")
                                                           for i in range(records)])]
        a.sync_add(info.vault_id, url, PASSPHRASE, endpoint_url=server.endpoint)
        a.sync_now(info.vault_id)
        b = Engine.open(Path(tmp) / "b")
        joined = b.sync_join(url, PASSPHRASE, endpoint_url=server.endpoint)
        highest = 0
        start = time.perf_counter()
        retries = 0
        for round_ in range(rounds):
            a.update_record(info.vault_id, ids[round_ % len(ids)], body=f"edit {round_} {text}")
            retries += _sync(a, info.vault_id) + _sync(b, joined.vault_id)
            highest = max(highest, len(_listed(client)))
        seconds = time.perf_counter() - start
        final = _listed(client)
        a.close()
        b.close()
    return {"highest": highest, "final": len(final), "bytes": sum(final.values()), "seconds": seconds,
            "retries": retries}


def _sync(engine: object, vault_id: str) -> int:
    """One sync; a timeout of the loaded loopback server is retried (the next sync resumes the
    push). How many retries it took."""
    from memories_tui.errors import SyncError

    for attempt in range(5):
        try:
            engine.sync_now(vault_id)  # type: ignore[attr-defined]
            return attempt
        except SyncError as exc:
            if exc.code != "sync_target_unreachable" or attempt == 4:
                raise
            time.sleep(1)
    return 5


def _listed(client: object) -> dict[str, int]:
    out: dict[str, int] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix="vault/"):  # type: ignore[attr-defined]
        out.update({o["Key"]: o["Size"] for o in page.get("Contents", [])})
    return out


if __name__ == "__main__":
    main()
