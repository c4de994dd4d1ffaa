"""What sync costs against a real WebDAV server on 127.0.0.1 (WsgiDAV on cheroot, from the test
extra), beside moving the same bytes in the same number of objects with plain httpx PUT/GET:

- the first push of a vault of `--records` records (~2 KB each) and a `sync join` of it on a
  fresh home;
- one edit on one device, then a sync on another: seconds (p50 of `--edits`), and the HTTP
  requests that sync made (PROPFIND listings, GETs).

Vaults use cheap Argon2id parameters (the KDF is not what is measured). `--json` prints one
object per size. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PASSPHRASE = "bench passphrase"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", default="1000", help="records in the vault; several sizes comma-separated")
    parser.add_argument("--edits", type=int, default=20, help="edit-then-sync rounds for the p50 (default 20)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per size")
    args = parser.parse_args()
    results = [measure(int(n), args.edits) for n in str(args.records).split(",")]
    if args.json:
        for result in results:
            print(json.dumps(result))
        return
    print(f"| records | objects | MB | push s | raw up s | join s | raw down s | edit sync p50 s ({args.edits}) | "
          "requests per edit sync | last one by method |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['records']:,} | {r['objects']} | {r['bytes'] / 1e6:.1f} | {r['push_s']:.2f} | "
              f"{r['raw_upload_s']:.2f} | {r['join_s']:.2f} | {r['raw_download_s']:.2f} | "
              f"{r['edit_sync_p50_s']:.3f} | {r['edit_sync_requests']} | {r['edit_sync_methods_last']} |")


def measure(records: int, edits: int) -> dict[str, object]:
    import httpx

    from memories_tui.engine import Engine
    from memories_tui.vault.records import NewRecord
    from tests.helpers.dav import PASSWORD, USER, dav_server
    from tests.helpers.vaults import use_cheap_kdf

    use_cheap_kdf()
    os.environ["MEMORIES_WEBDAV_USERNAME"], os.environ["MEMORIES_WEBDAV_PASSWORD"] = USER, PASSWORD
    with dav_server() as server, tempfile.TemporaryDirectory() as tmp:
        (server.root / "vault").mkdir()
        (server.root / "raw").mkdir()
        url = server.url + "vault"
        for home in ("a", "b"):
            (Path(tmp) / home).mkdir()
            (Path(tmp) / home / "config.toml").write_text("[rag.limits]\nchunks = 1000000\nsource_mib = 1024\n",
                                                          encoding="utf-8")
        a = Engine.open(Path(tmp) / "a")
        info = a.create_vault("notes", PASSPHRASE)
        a.unlock(info.vault_id, PASSPHRASE)
        text = "同步測試 sync benchmark paragraph. " * 55  # ~2 KB of UTF-8
        ids = [r.id for r in a.add_records(info.vault_id, [NewRecord("memory", f"note {i}", f"{i} {text}")
                                                           for i in range(records)])]
        a.sync_add(info.vault_id, url, PASSPHRASE)
        start = time.perf_counter()
        pushed = a.sync_now(info.vault_id)
        push_s = time.perf_counter() - start
        sizes = [p.stat().st_size for p in (server.root / "vault").rglob("*") if p.is_file()]
        client = httpx.Client(auth=(USER, PASSWORD))
        payload = [os.urandom(n) for n in sizes]
        start = time.perf_counter()
        for i, blob in enumerate(payload):
            client.put(f"{server.url}raw/{i}", content=blob).raise_for_status()
        raw_up = time.perf_counter() - start
        start = time.perf_counter()
        for i in range(len(payload)):
            client.get(f"{server.url}raw/{i}").raise_for_status()
        raw_down = time.perf_counter() - start
        b = Engine.open(Path(tmp) / "b")
        start = time.perf_counter()
        joined = b.sync_join(url, PASSPHRASE)
        join_s = time.perf_counter() - start
        times, requests, methods = [], [], ""
        counted = _count_requests()
        for round_ in range(edits):
            a.update_record(info.vault_id, ids[round_ % len(ids)], body=f"edit {round_}")
            a.sync_now(info.vault_id)
            counted.clear()
            start = time.perf_counter()
            b.sync_now(joined.vault_id)
            times.append(time.perf_counter() - start)
            requests.append(len(counted))
            methods = " ".join(f"{m} {counted.count(m)}" for m in sorted(set(counted)))
        a.close()
        b.close()
        client.close()
    return {"records": records, "push_s": push_s, "raw_upload_s": raw_up, "join_s": join_s,
            "raw_download_s": raw_down, "edit_sync_p50_s": statistics.median(times),
            "edit_sync_requests": statistics.median(requests), "edit_sync_methods_last": methods, "objects": pushed.pushed_objects,
            "bytes": pushed.pushed_bytes}


def _count_requests() -> list[str]:
    """Every request the WebDAV target sends from now on, by method (wraps its one request method)."""
    from memories_tui.sync.webdav import WebDavTarget

    seen: list[str] = []
    original = WebDavTarget._request

    def counting(self: WebDavTarget, method: str, url: str, **kwargs: object):  # noqa: ANN202
        seen.append(method)
        return original(self, method, url, **kwargs)

    WebDavTarget._request = counting  # type: ignore[method-assign]
    return seen


if __name__ == "__main__":
    main()
