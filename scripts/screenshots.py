#!/usr/bin/env python3
"""Regenerate screenshots/*.svg (and .png when an SVG renderer is available) from the real app.

What a new user sees: a fresh home folder (a fixed /tmp/memories-shots, wiped first and set as
$HOME, so paths in the images read ~/… as a user's do and never change from run to run), the
Memories home where it goes by default (~/.local/share/memories) with one vault holding only the bundled
sample notes, and no embedding model (so the no-model search state is shown). A cheap-KDF
test hook makes vault creation take milliseconds. MemoriesApp is driven through every screen
with `run_test()` + Pilot at 150×42, plus the records and search screens at 80×24 and the
search screen in Traditional Chinese. The
model-install shots download from a loopback mirror into the home's own model folder.

PNG copies need `cairosvg` (pip) or `rsvg-convert` (librsvg); without either only SVGs are
written and the script says so.

    .venv/bin/python scripts/screenshots.py [--out screenshots]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from memories_tui.engine import Engine
from memories_tui.i18n import set_language
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.ask import AskScreen
from memories_tui.tui.screens.editor import RecordEditorScreen
from memories_tui.tui.screens.help import HelpScreen
from memories_tui.tui.screens.ingest import IngestScreen
from memories_tui.tui.screens.model import ModelInstallScreen
from memories_tui.tui.screens.records import RecordsScreen
from memories_tui.tui.screens.search import ChunkDetailScreen, SearchScreen
from memories_tui.tui.screens.status import StatusScreen
from memories_tui.tui.screens.vaults import CreateVaultScreen, UnlockScreen, VaultPickerScreen
from memories_tui.tui.widgets.results import ResultsPane
from memories_tui.vault import crypto

SIZE = (150, 42)
PASS = "correct horse battery staple"
ROOT = Path(__file__).resolve().parent.parent
SMALL_MODEL_FILES = ROOT.parent / "shared" / "models" / "embeddinggemma-small-files"
WORK_DIR = Path("/tmp/memories-shots")  # fixed, so regenerated SVGs do not differ by a random path
ASK_QUESTION = "手沖咖啡的水溫要多少？"  # no [rag.generation] here: the extractive answer
SEARCH_QUERY = "sourdough bread 咖啡"


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


def to_png(out: Path) -> None:
    """PNG copies of every SVG, with whichever renderer is installed."""
    svgs = sorted(out.glob("*.svg"))
    try:
        import cairosvg  # type: ignore[import-not-found]
    except ImportError:
        cairosvg = None
    tool = shutil.which("rsvg-convert")
    if cairosvg is None and tool is None:
        print("  no PNGs: neither cairosvg nor rsvg-convert is installed (the SVGs are complete)")
        return
    for svg in svgs:
        png = svg.with_suffix(".png")
        if cairosvg is not None:
            cairosvg.svg2png(url=str(svg), write_to=str(png))
        else:
            subprocess.run([tool, "-o", str(png), str(svg)], check=True)
        print(f"  {png}")


async def first_run(home: Path, out: Path) -> None:
    app = MemoriesApp(Engine.open(home))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen))
        await pilot.pause(0.3)
        shot(app, out, "01-first-run")


def write_config(home: Path, mirror_url: str) -> None:
    """The home's config: only the loopback mirror (a new user's home has no model)."""
    (home / "config.toml").write_text(f'[rag]\nmodel_download_base_url = "{mirror_url}"\n', encoding="utf-8")


async def embedding_settled(pilot, app: MemoriesApp) -> None:
    await wait_for(pilot, lambda: app.vault is None or not app.embedding_active(app.vault.vault_id), timeout=60)
    await pilot.pause(0.1)


async def unlock_personal(pilot, app: MemoriesApp) -> None:
    await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
    app.screen.query_one("#passphrase").value = PASS
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and app.screen.records)


async def show_note(pilot, app: MemoriesApp, title_part: str) -> None:
    table = app.screen.query_one("#records")
    row = next((n for n, r in enumerate(app.screen.records) if title_part in r.title), 0)
    table.move_cursor(row=row)
    await pilot.pause(0.4)


async def search(pilot, app: MemoriesApp) -> None:
    await pilot.press("s")
    await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
    app.screen.query_one("#query").value = SEARCH_QUERY
    await pilot.press("enter")
    panes = list(app.screen.query(ResultsPane))
    await wait_for(pilot, lambda: all(p.shown for p in panes), timeout=30)
    await pilot.pause(0.3)


async def main_tour(home: Path, notes: Path, out: Path, mirror_url: str) -> None:
    home.mkdir(parents=True)
    write_config(home, mirror_url)
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

        await unlock_personal(pilot, app)
        await show_note(pilot, app, "Welcome")
        shot(app, out, "04-records-reader")
        await show_note(pilot, app, "會議")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordEditorScreen))
        await pilot.pause(0.3)
        shot(app, out, "04b-record-editor")
        await pilot.press("escape")

        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, IngestScreen))
        app.screen.query_one("#tree").root.expand()
        app.screen.query_one("#paths").value = f"{notes / 'garden.md'} {notes / 'reading-list.md'}"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.query_one("#ingest-results").row_count == 2)
        await pilot.pause(0.3)
        shot(app, out, "05-ingest-results")
        await pilot.press("escape")

        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await search(pilot, app)
        shot(app, out, "06-search-no-model")
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause(0.3)
        shot(app, out, "06b-help")
        await pilot.press("escape")

        bm25 = app.screen.query_one("#pane-bm25", ResultsPane)
        bm25.option_list.focus()
        bm25.option_list.highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChunkDetailScreen))
        await pilot.pause(0.3)
        shot(app, out, "07-chunk-detail")
        await pilot.press("escape", "escape")

        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, AskScreen))
        ask = app.screen
        ask.query_one("#question").value = ASK_QUESTION
        await pilot.press("enter")
        await wait_for(pilot, lambda: ask.state not in ("idle", "working"), timeout=30)
        await pilot.pause(0.3)
        shot(app, out, "07b-ask-extractive")
        await pilot.press("escape")

        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelInstallScreen))
        model = app.screen
        await pilot.pause(0.3)
        shot(app, out, "08-model-install-terms")
        await pilot.click("#start")
        bar = model.query_one("#model-progress")
        await wait_for(pilot, lambda: (bar.progress or 0) > 0 and "/s" in str(model.query_one("#model-rate").content))
        await pilot.pause(0.8)
        shot(app, out, "08b-model-install")
        await pilot.click("#cancel")
        await wait_for(pilot, lambda: model.cancel_event is None)
        await pilot.pause(0.2)
        shot(app, out, "08c-model-install-cancelled")
        await pilot.press("escape")

        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
        await pilot.pause(0.3)
        shot(app, out, "09-status")

        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        await pilot.pause(0.2)
        shot(app, out, "10-locked")

    small = MemoriesApp(engine, browse_root=notes)  # what an 80×24 terminal shows
    async with small.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(small.screen, VaultPickerScreen) and small.screen.vaults)
        await pilot.press("enter")
        await unlock_personal(pilot, small)
        await show_note(pilot, small, "Sourdough")
        shot(small, out, "11-records-80x24")
        await search(pilot, small)
        shot(small, out, "12-search-80x24")

    set_language("zh-Hant")  # what LANG=zh_TW.UTF-8 (or `[ui] language = "zh-Hant"`) shows
    try:
        chinese = MemoriesApp(engine, browse_root=notes)
        async with chinese.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: isinstance(chinese.screen, VaultPickerScreen) and chinese.screen.vaults)
            await pilot.press("enter")
            await unlock_personal(pilot, chinese)
            await search(pilot, chinese)
            shot(chinese, out, "13-search-zh-Hant")
    finally:
        set_language("en")
    engine.lock()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    crypto._TEST_KDF_OVERRIDE = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)  # screenshots only
    shutil.rmtree(WORK_DIR, ignore_errors=True)
    WORK_DIR.mkdir(mode=0o700, parents=True)
    try:
        base = WORK_DIR
        os.environ["HOME"] = str(base)  # the TUI shows paths under the home folder as ~/…
        data = base / ".local" / "share"
        notes = base / "notes"
        notes.mkdir()
        (notes / "garden.md").write_text(
            "# Garden log\n\nTomatoes went in on 12 April; basil next to them. 番茄要全日照，每週澆水兩次。\n"
            "Markup-looking text stays literal: [S1] [b]bold?[/b]\n", encoding="utf-8")
        (notes / "reading-list.md").write_text(
            "# Reading list 書單\n\n- The Pragmatic Programmer\n- 《活著》余華\n- Designing Data-Intensive Applications\n",
            encoding="utf-8")
        for old in list(args.out.glob("*.svg")) + list(args.out.glob("*.png")):
            old.unlink()  # no stale images of screens that changed names
        print(f"writing screenshots to {args.out}")
        asyncio.run(first_run(data / "memories-first-run", args.out))
        mirror = start_mirror()
        try:
            asyncio.run(main_tour(data / "memories", notes, args.out, mirror.url))
        finally:
            mirror.release.set()
            mirror.stop()
    finally:
        shutil.rmtree(WORK_DIR, ignore_errors=True)
    to_png(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
