"""Peak memory of a client facing oversized model replies, beside a normal reply.

A loopback server (tests/helpers/model_server.py) sends, on cue: a 1,000 MB generation reply,
a 1,000 MB embedding reply, and a gzip bomb (1 GiB of zeros, ~1 MB on the wire). Each call
runs in a fresh child process through the product's own `Generator` / `RemoteEmbedder`, which
reports its peak RSS (`ru_maxrss`) and how the call ended. The reference, in the same run, is a
child that makes one normal request. Reads no collection, so no `--data`. Prints figures;
asserts nothing.

`--json` prints `{"reference": {"peak_rss_mib", "outcome"}, "cases": [{"case", "peak_rss_mib",
"over_reference_mib", "outcome", "server_sent_mib"}]}`.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MB = 1_000_000


def child(role: str, url: str) -> None:
    """Run in the child: one call, then print peak RSS and how it ended."""
    from memories_tui.config import HttpSettings, RemoteService
    from memories_tui.errors import MemoriesError
    from memories_tui.models.remote import CallContext
    from memories_tui.models.remote_embed import RemoteEmbedder
    from memories_tui.models.remote_generate import Generator

    http = HttpSettings(retries=0, timeout_seconds=60)
    try:
        if role == "embedding":
            service = RemoteService(protocol="compatible", url=url, model="m", dimensions=8)
            RemoteEmbedder(service, http).embed_query("hello")
        else:
            Generator(RemoteService(protocol="compatible", url=url, model="m"), http).generate("s", "u", CallContext())
        outcome = "ok"
    except MemoriesError as exc:
        outcome = f"{exc.code}: {exc.message}"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"peak_rss_mib": round(peak, 1), "outcome": outcome}))


def run_child(role: str, url: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", role, url], capture_output=True, text=True,
                         timeout=600, check=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("ROLE", "URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    from tests.helpers.misbehaving import MiB, Sent, big_body, gzip_bomb
    from tests.helpers.model_server import COMPAT_CHAT, COMPAT_EMBED, ModelServer

    cases = [
        ("generation reply, 1,000 MB", "generation", COMPAT_CHAT,
         lambda rec: big_body(1000 * MB, rec, declare_length=False)),
        ("embedding reply, 1,000 MB", "embedding", COMPAT_EMBED,
         lambda rec: big_body(1000 * MB, rec, declare_length=False)),
        ("generation reply, gzip bomb 1 GiB inflated (~1 MB sent)", "generation", COMPAT_CHAT,
         lambda rec: gzip_bomb(1024 * MiB, rec)),
    ]
    rows = []
    with ModelServer() as srv:
        reference = run_child("generation", srv.compat_chat_url)
        for name, role, path, writer in cases:
            record = Sent()
            srv.custom[path] = writer(record)
            url = srv.compat_embed_url if role == "embedding" else srv.compat_chat_url
            result = run_child(role, url)
            record.ended.wait(60)
            srv.custom.clear()
            rows.append({"case": name, "peak_rss_mib": result["peak_rss_mib"],
                         "over_reference_mib": round(result["peak_rss_mib"] - reference["peak_rss_mib"], 1),
                         "outcome": result["outcome"], "server_sent_mib": round(record.sent / MiB, 1)})
    if args.json:
        print(json.dumps({"reference": reference, "cases": rows}, ensure_ascii=False))
        return
    print(f"reference (one normal reply): peak RSS {reference['peak_rss_mib']} MiB")
    for row in rows:
        print(f"{row['case']}: peak RSS {row['peak_rss_mib']} MiB (+{row['over_reference_mib']} over the reference), "
              f"server got {row['server_sent_mib']} MiB out; {row['outcome']}")


if __name__ == "__main__":
    main()
