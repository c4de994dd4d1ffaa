"""The object count in a real S3-compatible bucket (SeaweedFS on 127.0.0.1) when a device stops
syncing: three devices, A and B syncing every round (an edit on A synced, then a sync on B), C
having written a few bundles and then silent, on a vault of 100 records (~2 KB each):

- `forgotten`: B runs `sync forget` on C at the start; A (which read C's whole chain) carries it
  in a snapshot and deletes C's objects;
- `silent`: C is not forgotten; from the second round on A's clock reads `hold_days` + 1 days
  later (as if C had been away that long), so C stops holding back A's bundles;
- `held`: C is not forgotten and `hold_days = 0`: C holds back the deleting of A's bundles for
  good (what every silent device did before `hold_days`).

Prints, per variant, the highest and the final count, the objects left under C's prefix and
the seconds (`--json`: one object per variant). Asserts nothing.

    .venv/bin/python bench/bench_sync_gc.py --syncs 300
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PASSPHRASE = "bench passphrase"
BUCKET = "bench-sync-gc"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--syncs", type=int, default=300, help="rounds (default 300)")
    parser.add_argument("--compact-after", type=int, default=64, help="[sync] compact_after (default 64)")
    parser.add_argument("--variants", default="forgotten,silent,held", help="forgotten,silent,held (default all)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per variant")
    args = parser.parse_args()
    rows = [measure(v, args.syncs, args.compact_after) for v in args.variants.split(",")]
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return
    print(f"Objects in the bucket over {args.syncs:,} rounds, compact_after = {args.compact_after}:\n")
    print("| C (silent after a few pushes) | highest count | final count | objects of C left | seconds |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['variant']} | {r['highest']:,} | {r['final']:,} | {r['c_left']} | {r['seconds']:.0f} |")


def measure(variant: str, rounds: int, compact_after: int, records: int = 100) -> dict[str, object]:
    for name, value in {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                        "AWS_DEFAULT_REGION": "us-east-1"}.items():
        os.environ.setdefault(name, value)
    import boto3

    from memories_tui.engine import Engine
    from memories_tui.sync import compaction
    from memories_tui.vault.records import NewRecord
    from tests.helpers.seaweed import seaweed_server
    from tests.helpers.vaults import use_cheap_kdf

    use_cheap_kdf()
    hold = 0 if variant == "held" else 30
    real_wall = compaction.wall_ms
    with seaweed_server() as server, tempfile.TemporaryDirectory() as tmp:
        client = boto3.client("s3", endpoint_url=server.endpoint)
        client.create_bucket(Bucket=BUCKET)
        url = f"s3://{BUCKET}/vault"
        for home in ("a", "b", "c"):
            (Path(tmp) / home).mkdir()
            (Path(tmp) / home / "config.toml").write_text(
                f"[sync]\ncompact_after = {compact_after}\nhold_days = {hold}\n", encoding="utf-8")
        a = Engine.open(Path(tmp) / "a")
        info = a.create_vault("notes", PASSPHRASE)
        a.unlock(info.vault_id, PASSPHRASE)
        text = "同步測試 compaction paragraph. " * 55
        ids = [r.id for r in a.add_records(info.vault_id, [NewRecord("memory", f"note {i}", f"{i} {text}")
                                                           for i in range(records)])]
        a.sync_add(info.vault_id, url, PASSPHRASE, endpoint_url=server.endpoint)
        a.sync_now(info.vault_id)
        b, c = Engine.open(Path(tmp) / "b"), Engine.open(Path(tmp) / "c")
        vid = b.sync_join(url, PASSPHRASE, endpoint_url=server.endpoint).vault_id
        c_report = c.sync_join(url, PASSPHRASE, endpoint_url=server.endpoint)
        for i in range(5):
            c.update_record(vid, ids[i], body=f"from c {i} {text}")
            c.sync_now(vid)
        c_device = c_report.sync.device
        c.close()
        a.sync_now(vid)
        if variant == "forgotten":
            b.sync_now(vid)
            b.sync_forget(vid, c_device)
        highest = 0
        start = time.perf_counter()
        try:
            for round_ in range(rounds):
                if variant == "silent" and round_ == 1:
                    compaction.wall_ms = lambda: real_wall() + (hold + 1) * compaction.DAY_MS  # type: ignore[assignment]
                a.update_record(vid, ids[round_ % len(ids)], body=f"edit {round_} {text}")
                a.sync_now(vid)
                b.sync_now(vid)
                highest = max(highest, len(_listed(client)))
        finally:
            compaction.wall_ms = real_wall  # type: ignore[assignment]
        seconds = time.perf_counter() - start
        final = _listed(client)
        a.close()
        b.close()
    return {"variant": variant, "syncs": rounds, "compact_after": compact_after, "highest": highest,
            "final": len(final), "c_left": sum(1 for k in final if k.startswith(f"vault/d/{c_device}/")),
            "seconds": seconds}


def _listed(client: object) -> dict[str, int]:
    out: dict[str, int] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix="vault/"):  # type: ignore[attr-defined]
        out.update({o["Key"]: o["Size"] for o in page.get("Contents", [])})
    return out


if __name__ == "__main__":
    main()
