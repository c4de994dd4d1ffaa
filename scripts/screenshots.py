#!/usr/bin/env python3
"""Regenerate screenshots/*.svg from the real app (R-TUI-3).

Builds a throw-away home in a fixed folder (/tmp/memories-shots, wiped first, so paths in
the SVGs do not change from run to run) with a cheap-KDF vault (test-only hook, so this takes
seconds), imports the bundled sample notes, drives MemoriesApp through every screen with
`run_test()` + Pilot, and saves one SVG per screen.

When the MiniLM test model is present (tests/.models/minilm, fetched by
scripts/fetch-test-models) the home's config points `[rag] local_model_dir` at it, the vector
index is built before the search screenshot, and the vector and hybrid panes show real
results; otherwise they show the "no model" message. The model-install screenshots always
download (from a loopback mirror) into the home's own default model folder.

    .venv/bin/python scripts/screenshots.py [--out screenshots]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import shutil
import sys
import time
from pathlib import Path

from memories_tui.config import default_model_dir
from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.ask import AskScreen
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
MINILM = ROOT / "tests" / ".models" / "minilm"
WORK_DIR = Path("/tmp/memories-shots")  # fixed, so regenerated SVGs do not differ by a random path
ASK_QUESTION = "手沖咖啡的水溫要多少？"  # no [rag.generation] here: the extractive answer
SEARCH_QUERY = "how to bake bread at home"  # English: the MiniLM test model is English-only


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


SAMPLES = Path(__file__).resolve().parents[1] / "memories_tui" / "samples"  # re-ingested: unchanged


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


def write_config(home: Path, mirror_url: str) -> bool:
    """The home's config: the loopback mirror, plus the MiniLM model when present. True if it is."""
    lines = ["[rag]", f'model_download_base_url = "{mirror_url}"']
    real_model = (MINILM / "model.onnx").is_file()
    if real_model:
        lines += [f'local_model_dir = "{MINILM}"', 'local_model_profile = "sentence-transformers"',
                  "local_threads = 2"]
    (home / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return real_model


async def embedding_settled(pilot, app: MemoriesApp) -> None:
    """Wait until the app's background embedding (if any) has finished."""
    await wait_for(pilot, lambda: app.vault is None or not app.embedding_active(app.vault.vault_id), timeout=60)
    await pilot.pause(0.1)


async def main_tour(home: Path, notes: Path, out: Path, mirror_url: str) -> None:
    home.mkdir(parents=True)
    real_model = write_config(home, mirror_url)
    engine = Engine.open(home)
    info = engine.create_vault("Personal", PASS)
    engine.unlock(info.vault_id, PASS)
    engine.import_samples(info.vault_id)
    if real_model:
        report = engine.build_vector_index(info.vault_id)  # `rag index`: the vectors go to the encrypted cache
        print(f"  vector index: {report.embedded} chunks embedded with {MINILM}")
    else:
        print(f"  no {MINILM / 'model.onnx'}: vector and hybrid panes will show the no-model message")
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
        await embedding_settled(pilot, app)  # after unlock: vectors come back from the encrypted cache
        await pilot.pause(0.3)
        shot(app, out, "04-records-reader")

        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, IngestScreen))
        app.screen.query_one("#tree").root.expand()
        app.screen.query_one("#paths").value = f"{notes / 'garden.md'} {notes / 'reading-list.md'} " \
                                               f"{SAMPLES / '03-coffee.md'}"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.query_one("#ingest-results").row_count == 3)
        await embedding_settled(pilot, app)  # the new notes are embedded in the background
        await pilot.pause(0.3)
        shot(app, out, "05-ingest-results")
        await pilot.press("escape")

        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        await embedding_settled(pilot, app)
        search.query_one("#query").value = SEARCH_QUERY
        await pilot.press("enter")
        panes = list(search.query(ResultsPane))
        await wait_for(pilot, lambda: all(p.shown for p in panes), timeout=30)
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
        # the install screenshots download the pinned files into the home's own model folder,
        # never into the MiniLM test folder the config points at
        config = engine.config
        engine.config = dataclasses.replace(config, rag=dataclasses.replace(
            config.rag, local_model_dir=default_model_dir(home)))
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
        engine.config = config

        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
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
    shutil.rmtree(WORK_DIR, ignore_errors=True)
    WORK_DIR.mkdir(mode=0o700, parents=True)
    try:
        base = WORK_DIR
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
    finally:
        shutil.rmtree(WORK_DIR, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
