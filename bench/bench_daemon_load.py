"""The resident engine under many clients at once: large requests in parallel and a burst of
small calls.

1. Peak resident memory (VmHWM) of a daemon sent --large concurrent requests of 64 MiB each (the
   per-request cap), and how each was answered (served, or `daemon_busy` past the 128 MiB cap on
   request bytes in flight); the reference, in the same run, is a fresh daemon sent one such
   request.
2. --burst threads each calling `vault_state` through the product's client at the same moment:
   how many were answered and in how long (wall time of the whole burst).

The vault is made with the tests' cheap key derivation (tests/helpers/cheap_cli.py): the KDF is
not what is measured. Linux only (/proc). Prints figures; asserts nothing.

`--json` prints `{"reference_peak_mib", "large": {"requests", "peak_mib", "answers"},
"burst": {"calls", "answered", "seconds", "errors"}}`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REQUEST_BYTES = 64 * 1024 * 1024


def peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def large_requests(home: Path, count: int) -> tuple[float, Counter[str]]:
    from tests.helpers.daemon import answer_json, daemon, post, raw_request

    body = b'{"pad": "' + b"x" * (REQUEST_BYTES - 11) + b'"}'
    answers: Counter[str] = Counter()
    with daemon(home) as pid:
        def one() -> None:
            _, answer = answer_json(raw_request(home, post("hello", body)))
            answers["served" if isinstance(answer, dict) and "result" in answer
                    else str(answer["error"]["code"]) if isinstance(answer, dict) else "?"] += 1

        threads = [threading.Thread(target=one) for _ in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return peak_mib(pid), answers


def burst(home: Path, count: int) -> dict[str, object]:
    from memories_tui.daemon import connect
    from memories_tui.errors import MemoriesError
    from tests.helpers.daemon import stop, unlock

    assert unlock(home, "notes").code == 0
    start = threading.Barrier(count + 1)
    outcomes: list[str] = []  # list.append is atomic under the GIL

    def one() -> None:
        start.wait()
        try:
            client = connect(home)
            ok = client is not None and client.call("vault_state", {"vault": "notes"})["unlocked"]
            outcomes.append("answered" if ok else "no daemon")
        except MemoriesError as exc:
            outcomes.append(exc.code)

    threads = [threading.Thread(target=one) for _ in range(count)]
    for thread in threads:
        thread.start()
    began = time.monotonic()
    start.wait()
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - began
    stop(home)
    errors = Counter(o for o in outcomes if o != "answered")
    return {"calls": count, "answered": outcomes.count("answered"), "seconds": round(seconds, 3),
            "errors": dict(errors)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", type=int, default=8, help="concurrent 64 MiB requests (default 8)")
    parser.add_argument("--burst", type=int, default=200, help="concurrent small calls (default 200)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from tests.helpers.cli import run_cli

    base = Path(tempfile.mkdtemp(prefix="bench-daemon-load-"))
    homes = [base / "reference", base / "large"]
    for home in homes:
        assert run_cli(home, "--json", "vault", "create", "notes").code == 0
    reference, _ = large_requests(homes[0], 1)
    peak, answers = large_requests(homes[1], args.large)
    calls = burst(homes[1], args.burst)
    result = {"reference_peak_mib": round(reference, 1),
              "large": {"requests": args.large, "peak_mib": round(peak, 1), "answers": dict(answers)},
              "burst": calls}
    if args.json:
        print(json.dumps(result))
        return
    print(f"daemon peak RSS, one 64 MiB request (reference): {reference:,.1f} MiB")
    print(f"daemon peak RSS, {args.large} concurrent 64 MiB requests: {peak:,.1f} MiB; answers {dict(answers)}")
    print(f"burst of {args.burst} concurrent calls: {calls['answered']} answered in {calls['seconds']} s; "
          f"errors {calls['errors'] or 'none'}")


if __name__ == "__main__":
    main()
