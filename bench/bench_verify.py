"""What re-checking the manifest costs a process that stays open.

Builds a vault of N records, then measures in one run: reading one record when nothing
changed (the data_version fast path), reading one record right after another connection
committed (a full manifest re-verification over every row), and, as the reference, the
plain SELECT + AES-GCM decrypt of one row with no check at all. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memories_tui.vault import crypto  # noqa: E402
from memories_tui.vault.integrity import record_ad  # noqa: E402
from memories_tui.vault.records import NewRecord  # noqa: E402
from memories_tui.vault.store import UnlockedVault, create_vault_file  # noqa: E402


def _ms(samples: list[float]) -> str:
    return f"p50 {statistics.median(samples) * 1000:.3f} ms, max {max(samples) * 1000:.3f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memories-bench-verify-"))
    crypto._TEST_KDF_OVERRIDE = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)  # KDF not measured
    try:
        path = folder / "v.mvault"
        create_vault_file(path, "bench", "pw")
        vault = UnlockedVault(path, "pw")
        items = [NewRecord("memory", f"note {i}", f"body of note {i} " * 20) for i in range(args.records)]
        records = vault.add_many(items)
        target = records[len(records) // 2]
        other = sqlite3.connect(path)

        unchanged, changed, plain = [], [], []
        for _ in range(args.repeat):
            started = time.perf_counter()
            vault.read(target.id)
            unchanged.append(time.perf_counter() - started)
            # another connection commits (a harmless cache row), so data_version moves
            other.execute("INSERT OR REPLACE INTO blobs VALUES ('bench-other', x'00', x'00', x'00')")
            other.commit()
            started = time.perf_counter()
            vault.read(target.id)
            changed.append(time.perf_counter() - started)
            started = time.perf_counter()
            row = other.execute("SELECT nonce, ciphertext FROM records WHERE record_id = ?", (target.id,)).fetchone()
            crypto.open_sealed(vault.keys.record, row[0], row[1],
                               record_ad(vault.vault_id, target.id, "memory", 1), "bench")
            plain.append(time.perf_counter() - started)
        other.close()
        vault.close()
        print(f"vault of {args.records:,} records, {args.repeat} reads each")
        print(f"read_record, file unchanged (data_version fast path): {_ms(unchanged)}")
        print(f"read_record after another process committed (full manifest check): {_ms(changed)}")
        print(f"reference: one SELECT + AES-GCM decrypt, no check: {_ms(plain)}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
