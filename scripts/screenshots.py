#!/usr/bin/env python3
"""Regenerate screenshots/*.svg from the real app (R-TUI-3).

Builds a throw-away home with a cheap-KDF vault (test-only hook, so this takes seconds),
imports the bundled sample notes, drives MemoriesApp through every screen with
`run_test()` + Pilot, and saves one SVG per screen.

    .venv/bin/python scripts/screenshots.py [--out screenshots]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.ingest import IngestScreen
from memories_tui.tui.screens.model import ModelInstallScreen
from memories_tui.tui.screens.records import RecordsScreen
from memories_tui.tui.screens.search import ChunkDetailScreen, SearchScreen
from memories_tui.tui.screens.status import StatusScreen
from memories_tui.tui.screens.vaults import CreateVaultScreen, UnlockScreen
from memories_tui.tui.widgets.results import ResultsPane
from memories_tui.vault import crypto

SIZE = (150, 42)
PASS = "correct horse battery staple"
ROOT = Path(__file__).resolve().parent.parent
SMALL_MODEL_FILES = ROOT.parent / "shared" / "models" / "embeddinggemma-small-files"


def start_mirror():
    """A loopback mirror of the pinned model files for the install screenshot: the real small
    files where ../shared has them (never committed), zero-filled stand-ins otherwise, and a
    throttled first file so the shot catches a live transfer. Nothing leaves the machine."""
    sys.path.insert(0, str(ROOT))
    from memories_tui.models.manifest import PINNED
    from tests.helpers.mirror import Mirror

    files = {}
    for mf in PINNED.files:
        real = SMALL_MODEL_FILES / mf.path
        files[mf.path] = real.read_bytes() if real.is_file() else bytes(mf.bytes)
    mirror = Mirror(files).start()
    mirror.slow[PINNED.files[0].path] = 0.4  # ~3 s for its 8 chunks
    return mirror


async def wait_for(pilot, predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out on {pilot.app.screen!r}")
        await pilot.pause(0.05)


def shot(app: MemoriesApp, out: Path, name: str) -> None:
    app.save_screenshot(f"{name}.svg", str(out))
    print(f"  {out / name}.svg")


async def first_run(home: Path, out: Path) -> None:
    app = MemoriesApp(Engine.open(home))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen))
        await pilot.pause(0.3)
        shot(app, out, "01-first-run")


async def main_tour(home: Path, notes: Path, out: Path, mirror_url: str) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text(f'[rag]\nmodel_download_base_url = "{mirror_url}"\n', encoding="utf-8")
    engine = Engine.open(home)
    info = engine.create_vault("Personal", PASS)
    engine.unlock(info.vault_id, PASS)
    engine.import_samples(info.vault_id)
    engine.lock()
    engine.create_vault("Work", PASS)

    app = MemoriesApp(engine, browse_root=notes)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        shot(app, out, "02-vault-picker")
        await pilot.press("enter")  # "Personal" sorts first
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        field = app.screen.query_one("#passphrase")
        field.value = "not my passphrase"
        await pilot.press("enter")
        await wait_for(pilot, lambda: str(app.screen.query_one("#unlock-error").content) != "")
        await pilot.pause(0.2)
        shot(app, out, "03-unlock-wrong-passphrase")

        field.value = PASS
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and app.screen.records)
        table = app.screen.query_one("#records")
        row = next((n for n, r in enumerate(app.screen.records) if "會議" in r.title or "sync" in r.title), 0)
        table.move_cursor(row=row)
        await pilot.pause(0.3)
        shot(app, out, "04-records-reader")

        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, IngestScreen))
        app.screen.query_one("#tree").root.expand()
        app.screen.query_one("#paths").value = f"{notes / 'garden.md'} {notes / 'reading-list.md'} " \
                                               f"{home / 'samples' / '03-coffee.md'}"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.query_one("#ingest-results").row_count == 3)
        await pilot.pause(0.3)
        shot(app, out, "05-ingest-results")
        await pilot.press("escape")

        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        search.query_one("#query").value = "咖啡 coffee"
        await pilot.press("enter")
        panes = list(search.query(ResultsPane))
        await wait_for(pilot, lambda: all("Searching" not in str(p.state.content) for p in panes))
        await pilot.pause(0.3)
        shot(app, out, "06-search-three-panes")

        bm25 = search.query_one("#pane-bm25", ResultsPane)
        bm25.option_list.focus()
        bm25.option_list.highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChunkDetailScreen))
        await pilot.pause(0.3)
        shot(app, out, "07-chunk-detail")
        await pilot.press("escape", "escape")

        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelInstallScreen))
        model = app.screen
        await pilot.click("#start")
        bar = model.query_one("#model-progress")
        await wait_for(pilot, lambda: (bar.progress or 0) > 0 and "/s" in str(model.query_one("#model-rate").content))
        await pilot.pause(0.8)
        shot(app, out, "08-model-install")
        await pilot.click("#cancel")
        await wait_for(pilot, lambda: model.cancel_event is None)
        await pilot.pause(0.2)
        shot(app, out, "08b-model-install-cancelled")
        await pilot.press("escape")

        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen)
                       and app.screen.query_one("#status-table").row_count > 0)
        await pilot.pause(0.3)
        shot(app, out, "09-status")

        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        await pilot.pause(0.2)
        shot(app, out, "10-locked")
    engine.lock()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    crypto._TEST_KDF_OVERRIDE = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)  # screenshots only
    with tempfile.TemporaryDirectory(prefix="memories-shots-") as tmp:
        base = Path(tmp)
        notes = base / "notes"
        notes.mkdir()
        (notes / "garden.md").write_text(
            "# Garden log\n\nTomatoes went in on 12 April; basil next to them. 番茄要全日照，每週澆水兩次。\n"
            "Markup-looking text stays literal: [S1] [b]bold?[/b]\n", encoding="utf-8")
        (notes / "reading-list.md").write_text(
            "# Reading list 書單\n\n- The Pragmatic Programmer\n- 《活著》余華\n- Designing Data-Intensive Applications\n",
            encoding="utf-8")
        print(f"writing screenshots to {args.out}")
        asyncio.run(first_run(base / "empty-home", args.out))
        mirror = start_mirror()
        try:
            asyncio.run(main_tour(base / "home", notes, args.out, mirror.url))
        finally:
            mirror.release.set()
            mirror.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
