"""What keeping a folder in step and importing an Evernote export cost.

- `source sync` of a generated folder of `--files` notes (Chinese and English): the first sync,
  the first re-sync (it also decrypts the cards the first sync wrote, once), a re-sync with
  nothing changed (stat checks only: no read, no write), a re-sync after every
  file was touched (read and hashed, no write), and one changed file once the vault's index is
  built (a sync that writes checks the chunk limit on it; the build is reported apart); the no-change re-sync's
  cost relative to the first sync.
- through a real daemon holding the vault (`--watch-runs` saves): seconds from saving a file with
  a new word to the daemon's keyword search finding it (the watcher's debounce set to 0.5 s).
- a folder of `--big-files` one-line notes (default 50,000) under the default limits (10,000
  chunks): the first sync (it takes what fits and lists the rest as skipped), how many were
  created and skipped, and a re-sync of the full vault (it reads the files left out again).
- `memories import evernote` of a generated `--enex-mib` MiB export (notes with ENML and a
  resource, as Evernote writes them), in a child process: notes/s and its peak resident memory
  (VmHWM), beside the same CLI's peak for `memory list` (what the process needs anyway).

`--json` prints one object: {"files", "initial_sync_s", "files_per_s", "first_resync_s", "resync_unchanged_s",
"resync_touched_s", "index_build_s", "one_changed_s", "resync_vs_initial", "enex_mib", "enex_notes",
"enex_import_s", "enex_notes_per_s", "enex_peak_rss_mib", "baseline_peak_rss_mib", "watch_runs",
"watch_to_search_p50_s", "watch_to_search_max_s", "big_files", "big_sync_s", "big_created", "big_skipped",
"big_resync_s"}.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import base64
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
PASSPHRASE = "bench passphrase"


def make_folder(folder: Path, files: int) -> None:
    for n in range(files):
        sub = folder / f"area-{n % 50:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"note-{n:05d}.md").write_text(
            f"# 筆記 {n}\n\n第{n}篇筆記：今天整理了花園，also notes about bread and rivers number {n}.\n", encoding="utf-8")


def make_enex(path: Path, mib: float) -> int:
    resource = base64.b64encode(os.urandom(48 * 1024)).decode()
    note = ("<note><title>會議 {n}</title><content><![CDATA[<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
            "<!DOCTYPE en-note SYSTEM \"http://xml.evernote.com/pub/enml2.dtd\"><en-note><div><b>Decisions {n}</b>"
            "</div><ul><li>決定下週開會</li><li>ship it</li></ul><en-media hash=\"h\" type=\"image/png\"/></en-note>]]>"
            "</content><created>20231201T120000Z</created><updated>20231202T080000Z</updated><tag>work</tag>"
            "<resource><data encoding=\"base64\">" + resource + "</data><mime>image/png</mime></resource></note>")
    count = 0
    with path.open("w", encoding="utf-8") as fh:
        fh.write('<?xml version="1.0" encoding="UTF-8"?>\n<en-export application="Evernote">')
        while fh.tell() < mib * 2**20:
            fh.write(note.replace("{n}", str(count)))
            count += 1
        fh.write("</en-export>\n")
    return count


def peak(home: Path, *args: str) -> tuple[float, int]:
    env = {**os.environ, "MEMORIES_PASSPHRASE": PASSPHRASE, "MEMORIES_NO_DAEMON": "1"}
    start = time.perf_counter()
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "peak_rss.py"), "--home", str(home), *args],
                         capture_output=True, text=True, env=env, check=True)
    seconds = time.perf_counter() - start
    return seconds, int(out.stderr.strip().splitlines()[-1].split()[1])


def watch_latency(home: Path, folder: Path, runs: int) -> list[float]:
    """Seconds from saving a file with a new word to the daemon's search finding it, `runs` times."""
    from memories_tui.daemon.client import DaemonClient

    env = {**os.environ, "MEMORIES_PASSPHRASE": PASSPHRASE}
    (home / "config.toml").write_text((home / "config.toml").read_text() + "\n[sources]\ndebounce_seconds = 0.5\n")
    subprocess.run([sys.executable, "-m", "memories_tui", "--home", str(home), "unlock", "bench"], env=env,
                   check=True, capture_output=True)
    client = DaemonClient(home)
    out = []
    try:
        client.call("vault.memory_search", {"vault_id": "bench", "query": "warm"})  # the index is built once
        time.sleep(3)  # the watcher's first pass after unlock
        for n in range(runs):
            word = f"zqxwatch{n}"
            start = time.perf_counter()
            (folder / "area-01" / f"watch-{n}.md").write_text(f"# watched\n\n{word}\n", encoding="utf-8")
            while not client.call("vault.memory_search", {"vault_id": "bench", "query": word}):
                time.sleep(0.05)
            out.append(time.perf_counter() - start)
    finally:
        subprocess.run([sys.executable, "-m", "memories_tui", "--home", str(home), "daemon", "stop"], env=env,
                       capture_output=True)
    return out


def big_folder(tmp: Path, files: int) -> dict[str, object]:
    """A folder past the default chunk limit, synced under the default limits."""
    from memories_tui.engine import Engine

    home = Path(tmp) / "big-home"
    home.mkdir()
    folder = Path(tmp) / "Big"
    for n in range(files):
        sub = folder / f"{n // 1000:03d}"
        if n % 1000 == 0:
            sub.mkdir(parents=True)
        (sub / f"n{n:05d}.md").write_text(f"note {n} 筆記\n", encoding="utf-8")
    engine = Engine.open(home)
    vid = engine.create_vault("big", PASSPHRASE).vault_id
    engine.unlock(vid, PASSPHRASE)
    engine.add_source(vid, folder)
    start = time.perf_counter()
    report = engine.sync_sources(vid)[0]
    first = time.perf_counter() - start
    resync = timed(lambda: engine.sync_sources(vid))
    engine.close()
    return {"big_files": files, "big_sync_s": round(first, 2), "big_created": report.count("created"),
            "big_skipped": report.count("skipped"), "big_resync_s": round(resync, 2)}


def timed(fn) -> float:  # noqa: ANN001
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--enex-mib", type=float, default=50.0)
    parser.add_argument("--watch-runs", type=int, default=10, help="saves timed through the daemon (0: skip)")
    parser.add_argument("--big-files", type=int, default=50_000, help="files of the folder past the limits (0: skip)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from memories_tui.engine import Engine

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "config.toml").write_text("[rag.limits]\nchunks = 1000000\nsource_mib = 4096\n", encoding="utf-8")
        folder = Path(tmp) / "Notes"
        make_folder(folder, args.files)
        engine = Engine.open(home)
        vid = engine.create_vault("bench", PASSPHRASE).vault_id
        engine.unlock(vid, PASSPHRASE)
        engine.add_source(vid, folder)
        initial = timed(lambda: engine.sync_sources(vid))
        first_resync = timed(lambda: engine.sync_sources(vid))  # also loads the records the first sync wrote
        unchanged = timed(lambda: engine.sync_sources(vid))
        for path in folder.rglob("*.md"):
            os.utime(path)
        touched = timed(lambda: engine.sync_sources(vid))
        index_build = timed(lambda: engine.load_index(vid))  # a sync that writes checks the limits on the index
        (folder / "area-00" / "note-00000.md").write_text("# changed\n\nnew text\n", encoding="utf-8")
        one = timed(lambda: engine.sync_sources(vid))
        engine.close()

        watch = watch_latency(home, folder, args.watch_runs) if args.watch_runs else []

        enex = Path(tmp) / "Export.enex"
        notes = make_enex(enex, args.enex_mib)
        enex_mib = enex.stat().st_size / 2**20
        _, baseline = peak(home, "memory", "list", "bench")
        seconds, enex_peak = peak(home, "--json", "import", "evernote", "bench", str(enex))
        big = big_folder(Path(tmp), args.big_files) if args.big_files else {}
    report = {
        "files": args.files, "initial_sync_s": round(initial, 3), "files_per_s": round(args.files / initial, 1),
        "first_resync_s": round(first_resync, 3), "resync_unchanged_s": round(unchanged, 3), "resync_touched_s": round(touched, 3),
        "index_build_s": round(index_build, 3), "one_changed_s": round(one, 3), "resync_vs_initial": round(unchanged / initial, 4),
        "enex_mib": round(enex_mib, 1), "enex_notes": notes,
        "enex_import_s": round(seconds, 2), "enex_notes_per_s": round(notes / seconds, 1),
        "enex_peak_rss_mib": round(enex_peak / 2**20, 1), "baseline_peak_rss_mib": round(baseline / 2**20, 1),
        "watch_runs": len(watch), "watch_to_search_p50_s": round(statistics.median(watch), 2) if watch else None,
        "watch_to_search_max_s": round(max(watch), 2) if watch else None,
        **big,
    }
    if args.json:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            print(f"{key:24} {value}")


if __name__ == "__main__":
    main()
