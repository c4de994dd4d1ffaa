#!/usr/bin/env python3
"""First frame after launch: Memories vs a minimal Textual app.

Each run is a fresh interpreter (what a user's shell does): the parent notes the wall clock,
starts `python bench_tui_start.py --child KIND`, and the child prints the wall clock once its
first screen has been composed and refreshed (headless, so no terminal is needed). For
Memories that screen is the unlock screen of the home's only vault, after the engine opened the
home and listed its vaults; the reference is a Textual app showing one Static. The two kinds
alternate, so machine noise hits both alike. Both start from compiled modules, as after
`./scripts/start` (which byte-compiles the package once; pip compiles Textual's on install).

    .venv/bin/python bench/bench_tui_start.py [--runs 9] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def child(kind: str, home: str) -> None:
    """Runs in the fresh interpreter: print time.time() at the first refreshed frame, then exit."""
    from textual.app import App

    marks: list[float] = []

    def first_frame(app: App) -> None:
        if not marks:
            marks.append(time.time())
            app.exit()

    if kind == "minimal":
        from textual.app import ComposeResult
        from textual.widgets import Static

        class Minimal(App):
            def compose(self) -> ComposeResult:
                yield Static("hello")

            def on_mount(self) -> None:
                self.call_after_refresh(first_frame, self)

        Minimal().run(headless=True, size=(80, 24))
    else:
        sys.path.insert(0, str(REPO))
        from memories_tui.engine import Engine
        from memories_tui.tui.app import MemoriesApp
        from memories_tui.tui.screens.vaults import UnlockScreen

        app = MemoriesApp(Engine.open(home))

        def watch_screen() -> None:
            if isinstance(app.screen, UnlockScreen) and app.screen.is_mounted:
                app.screen.call_after_refresh(first_frame, app)
            else:
                app.call_after_refresh(watch_screen)

        app.call_later(watch_screen)
        app.run(headless=True, size=(80, 24))
    print(f"{marks[0]:.6f}" if marks else "nan")


def one_run(kind: str, home: str) -> float:
    started = time.time()
    out = subprocess.run([sys.executable, __file__, "--child", kind, "--home", home], capture_output=True,
                         text=True, timeout=120, check=True).stdout.strip().splitlines()
    return float(out[-1]) - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--child", choices=("memories", "minimal"))
    parser.add_argument("--home")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.home or "")
        return 0
    sys.path.insert(0, str(REPO))
    import compileall

    from memories_tui.engine import Engine
    from memories_tui.vault import crypto

    compileall.compile_dir(str(REPO / "memories_tui"), quiet=1)

    crypto._TEST_KDF_OVERRIDE = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)  # creation only
    with tempfile.TemporaryDirectory() as tmp:
        home = str(Path(tmp) / "home")
        Engine.open(home).create_vault("Personal", "bench passphrase")
        times: dict[str, list[float]] = {"minimal": [], "memories": []}
        one_run("minimal", home)  # warm the file cache for both
        one_run("memories", home)
        for _ in range(args.runs):
            for kind in ("minimal", "memories"):
                times[kind].append(one_run(kind, home))
    gap = statistics.median(times["memories"]) - statistics.median(times["minimal"])
    if args.json:
        print(json.dumps({"runs": args.runs, "difference_of_medians_s": gap, **{
            kind: {"median_s": statistics.median(ts), "min_s": min(ts), "max_s": max(ts)} for kind, ts in times.items()}}))
        return 0
    print(f"first frame after launch, {args.runs} fresh processes each (headless 80x24), seconds")
    print(f"{'app':<34} {'median':>8} {'min':>8} {'max':>8}")
    for kind, label in (("minimal", "minimal Textual app (reference)"), ("memories", "memories-tui → unlock screen")):
        ts = times[kind]
        print(f"{label:<34} {statistics.median(ts):8.3f} {min(ts):8.3f} {max(ts):8.3f}")
    print(f"{'difference of medians':<34} {gap:8.3f}   (goal: within 0.100)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
