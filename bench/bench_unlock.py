"""Time from unlock to a searchable lexical index: cold build vs encrypted snapshot restore.

Builds a mixed zh/en vault of about 10,000 chunks from the collections in --data (default
../shared/data: CMRC paragraphs and SciFact abstracts; the first Chinese and the first other
collection, interleaved), then measures in one run: the cold build, saving the snapshot, restoring it
after a fresh unlock (KDF excluded, reported separately), and a restore after one record changed.
Prints figures; asserts nothing. ``--json`` prints one JSON object (see bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import find_collections, is_chinese, load_collection  # noqa: E402

from memories_tui.engine import Engine  # noqa: E402
from memories_tui.vault import crypto  # noqa: E402


def load_docs(data: Path, target_chars: int) -> list[tuple[str, str]]:
    """Documents of the first Chinese and the first other collection, interleaved."""
    colls = [c for c in (load_collection(data, n) for n in find_collections(data)) if c is not None]
    sources = [c for c in colls if is_chinese(c)][:1] + [c for c in colls if not is_chinese(c)][:1]
    rows = [[(d["title"] or "untitled", d["text"]) for d in c.corpus.values()] for c in sources]
    docs: list[tuple[str, str]] = []
    total = 0
    i = 0
    while total < target_chars and any(i < len(r) for r in rows):
        for rowset in rows:
            if i < len(rowset):
                docs.append(rowset[i])
                total += len(rowset[i][1])
        i += 1
    return docs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--chars", type=int, default=7_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="memories-bench-unlock-"))
    (home / "config.toml").write_text("[rag.limits]\nchunks = 50000\nsource_mib = 64\n")
    crypto._TEST_KDF_OVERRIDE = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)  # KDF timed separately
    try:
        eng = Engine.open(home)
        vid = eng.create_vault("bench", "pw").vault_id
        eng.unlock(vid, "pw")
        docs = load_docs(args.data, args.chars)
        if not docs:
            sys.exit(f"no collections in {args.data}")
        notes = home / "notes"
        notes.mkdir()
        paths = []
        for n, (title, body) in enumerate(docs):
            path = notes / f"{n:05}.md"
            path.write_text(f"# {title}\n\n{body}", encoding="utf-8")
            paths.append(path)
        ingest_bytes = sum(p.stat().st_size for p in paths)
        t0 = time.perf_counter()
        eng.ingest(vid, paths)  # read, check, chunk-count, encrypt, one transaction
        ingest_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        index = eng._context(vid).index()
        cold = time.perf_counter() - t0
        chunks = len(index.chunks)
        t0 = time.perf_counter()
        eng.search(vid, "蛋白質", match_mode="phrase")  # inserts the FTS5 phrase rows the build deferred
        first_phrase = time.perf_counter() - t0
        t0 = time.perf_counter()
        eng.close()
        save = time.perf_counter() - t0
        restores, changed = [], []
        for _ in range(args.repeat):
            eng = Engine.open(home)
            eng.unlock(vid, "pw")
            t0 = time.perf_counter()
            eng.search(vid, "protein 蛋白質")
            restores.append(time.perf_counter() - t0)
            rid = next(iter(eng._context(vid).records()))
            eng.update_record(vid, rid, body="a changed body 改過的內容")
            eng.close()
            eng = Engine.open(home)
            eng.unlock(vid, "pw")
            t0 = time.perf_counter()
            eng.search(vid, "protein 蛋白質")
            changed.append(time.perf_counter() - t0)
            eng.close()
        real = crypto.KdfParams()
        t0 = time.perf_counter()
        crypto.derive_kek("pw", bytes(16), real)
        kdf = time.perf_counter() - t0
        size_mb = sum(len(b) for _, b in docs) / 1e6
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if args.json:
            print(json.dumps({
                "records": len(docs), "chunks": chunks, "chars": int(size_mb * 1e6), "ingest_s": ingest_s,
                "ingest_mb_per_s": ingest_bytes / 1e6 / ingest_s, "cold_build_s": cold, "save_s": save,
                "restore_s": statistics.median(restores), "changed_restore_s": statistics.median(changed),
                "kdf_s": kdf, "restore_over_cold": statistics.median(restores) / cold, "repeat": args.repeat,
                "peak_rss_mib": peak}))
            return
        print(f"vault: {len(docs):,} records, {chunks:,} chunks, {size_mb:.1f} M chars")
        print(f"{'step':<52}{'seconds':>10}")
        print(f"{'ingest (excluding embedding)':<52}{ingest_s:>10.2f}   "
              f"{ingest_bytes / 1e6 / ingest_s:.1f} MB/s of UTF-8")
        print(f"{'cold build (decrypt, chunk, segment, BM25 index)':<52}{cold:>10.2f}   "
              f"{cold * 10_000 / chunks:.2f} s per 10,000 chunks")
        print(f"{'then the first phrase query (FTS5 phrase rows go in)':<52}{first_phrase:>10.2f}")
        print(f"{'save encrypted snapshot (on lock)':<52}{save:>10.2f}")
        print(f"{'unlock → first search, snapshot restore (median)':<52}{statistics.median(restores):>10.2f}")
        print(f"{'unlock → first search, one record changed (median)':<52}{statistics.median(changed):>10.2f}")
        print(f"{'reference: Argon2id KDF at the default cost':<52}{kdf:>10.2f}")
        print(f"ratio restore / cold build: {statistics.median(restores) / cold:.3f}")
        print(f"peak RSS: {peak:.0f} MiB")
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
