"""SVG snapshots of every screen at 80×24 with deterministic data, in English and in
Traditional Chinese (`NAME-zh-Hant.svg`: double-width text must fit the same screens).

Data: fixed notes, a pinned record clock and search clock; random ids and the temp home are
masked with same-length placeholders. When a screen changes on purpose, review the image in
tests/tui/snapshots/__failures__/ and rerun with SNAPSHOT_UPDATE=1 (see tests/helpers/snapshots.py).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input

from memories_tui.engine import Engine
from memories_tui.i18n import _, set_language
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens import search as search_screen
from memories_tui.tui.screens import status as status_screen
from memories_tui.tui.screens.chunk import ChunkDetailScreen
from memories_tui.tui.screens.confirm import ConfirmScreen
from memories_tui.tui.screens.create_vault import CreateVaultScreen
from memories_tui.tui.screens.editor import RecordEditorScreen
from memories_tui.tui.screens.help import HelpScreen
from memories_tui.tui.screens.ingest import IngestScreen
from memories_tui.tui.screens.model import ModelInstallScreen
from memories_tui.tui.screens.records import RecordsScreen
from memories_tui.tui.screens.search import SearchScreen
from memories_tui.tui.screens.status import StatusScreen
from memories_tui.tui.screens.vaults import UnlockScreen, VaultPickerScreen
from memories_tui.tui.widgets.results import ResultsPane
from memories_tui.vault import store
from tests.helpers.pilot import PASS, wait_for
from tests.helpers.snapshots import check

SIZE = (80, 24)
NOTES = [
    ("memory", "Oven temperatures", "# Oven temperatures\n\nBake sourdough **bread** at 250 °C in a covered pot,\n"
     "then uncover it for a golden crust.\n\n- preheat 45 minutes\n- steam for the first 20 minutes\n"),
    ("card", "咖啡筆記 Coffee notes", "# 咖啡筆記\n\n手沖咖啡：水溫 92 度，粉水比 1:15。Pour-over coffee at 92 °C, ratio 1:15.\n"),
    ("card", "Literal markup", "Text like [S1], [b]bold?[/b] and [@click=app.quit]x[/] stays literal in every view.\n"),
]
FIXED_HOME = "/tmp/msnap-00000000"  # same length as mkdtemp(prefix="msnap-", dir="/tmp")


@pytest.fixture
def snap_home() -> Iterator[Path]:
    home = Path(tempfile.mkdtemp(prefix="msnap-", dir="/tmp"))
    assert len(str(home)) == len(FIXED_HOME), home
    yield home
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(params=["en", "zh-Hant"])
def language(request) -> Iterator[str]:
    """Each screen in English, then in Traditional Chinese."""
    set_language(request.param)
    yield request.param
    set_language("en")


def shot(name: str, language: str) -> str:
    return name if language == "en" else f"{name}-{language}"


@pytest.fixture
def pinned_clocks(monkeypatch) -> None:
    """Record timestamps one minute apart from a fixed date, ids counted; every search takes "0 ms"."""
    start = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    ticks = iter(range(10_000))
    monkeypatch.setattr(store, "now_iso", lambda: (start + timedelta(minutes=next(ticks)))
                        .isoformat(timespec="seconds").replace("+00:00", "Z"))
    monkeypatch.setattr(search_screen, "clock", lambda: 0.0)
    # record ids in order (a column cut at 80 columns shows the start of one, which no mask matches)
    counter = iter(range(1, 10_000))
    monkeypatch.setattr(store.secrets, "token_hex", lambda nbytes=16: f"{next(counter):0{2 * nbytes}x}")
    real_sections = status_screen.sections

    def fixed_build_time(**kwargs):  # whether the index was built or restored here is a race
        built = "2026-03-01 09:00:00" + _(", took {seconds:.2f} s").format(seconds=0.01)
        return [replace(section, rows=tuple(replace(row, value=built) if row.label == _("last built") else row
                                            for row in section.rows))
                for section in real_sections(**kwargs)]

    monkeypatch.setattr(status_screen, "sections", fixed_build_time)


def masks_for(engine: Engine, home: Path) -> dict[str, str]:
    masks = {str(home): FIXED_HOME}
    for n, info in enumerate(engine.list_vaults()):
        masks[info.vault_id] = str(n).rjust(len(info.vault_id), "v")
        if engine.is_unlocked(info.vault_id):
            for m, record in enumerate(engine.list_records(info.vault_id)):
                masks[record.id] = f"{n}{m}".rjust(len(record.id), "r")
    return masks


async def test_first_run_screens(snap_home: Path, pinned_clocks, language: str) -> None:
    engine = Engine.open(snap_home / "home")
    failures = []
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen))
        failures.append(await check(pilot, shot("first-run", language), masks_for(engine, snap_home)))
        screen = app.screen
        screen.query_one("#pass1", Input).value = "abc"
        screen.query_one("#pass2", Input).value = "abc"
        screen.query_one("#pass2", Input).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        failures.append(await check(pilot, shot("short-passphrase", language), masks_for(engine, snap_home)))
    problems = [f for f in failures if f]
    assert not problems, "\n".join(problems)


async def test_every_screen_of_a_vault(snap_home: Path, pinned_clocks, language: str) -> None:
    home = snap_home / "home"
    notes = snap_home / "notes"
    notes.mkdir()
    (notes / "garden.md").write_text("# Garden\n\nTomatoes need full sun; 番茄要全日照。\n", encoding="utf-8")
    engine = Engine.open(home)
    info = engine.create_vault("Personal", PASS)
    engine.unlock(info.vault_id, PASS)
    for kind, title, body in NOTES:
        engine.add_record(info.vault_id, kind=kind, title=title, body=body)
    engine.lock()
    engine.create_vault("Work", PASS)
    (home / "vaults" / "old-notes.mvault").write_text("not a vault", encoding="utf-8")  # listed as not usable

    failures: list[str | None] = []
    app = MemoriesApp(engine, browse_root=notes)
    async with app.run_test(size=SIZE) as pilot:
        async def snap(name: str) -> None:
            failures.append(await check(pilot, shot(name, language), masks_for(engine, snap_home)))

        await wait_for(pilot, lambda: isinstance(app.screen, VaultPickerScreen) and app.screen.vaults)
        await snap("vault-picker")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        app.screen.query_one("#passphrase", Input).value = "not my passphrase"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen) and not app.screen.query_one(
            "#passphrase", Input).disabled and app.screen.query_one("#unlock-error").content)
        await snap("unlock-wrong-passphrase")

        app.screen.query_one("#passphrase", Input).value = PASS
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and app.screen.records)
        records = app.screen
        records.query_one("#records", DataTable).move_cursor(row=len(NOTES) - 1)  # the oldest: "Oven"
        await wait_for(pilot, lambda: bool(records.query("#reader-markdown MarkdownH1")))
        await pilot.pause(0.2)
        await snap("records-reader")
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await snap("help-records")
        await pilot.press("escape")

        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        search.query_one("#query", Input).value = "bread coffee"
        await pilot.press("enter")
        panes = list(search.query(ResultsPane))
        await wait_for(pilot, lambda: all(p.shown for p in panes), timeout=20)
        await snap("search-no-model")
        bm25 = search.query_one("#pane-bm25", ResultsPane)
        bm25.option_list.focus()
        bm25.option_list.highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChunkDetailScreen))
        await pilot.pause(0.2)
        await snap("chunk-detail")
        await pilot.press("escape", "escape")

        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, IngestScreen))
        ingest = app.screen
        ingest.query_one("#paths", Input).value = str(notes / "garden.md")
        await pilot.press("enter")
        await wait_for(pilot, lambda: ingest.query_one("#ingest-results", DataTable).row_count == 1)
        await pilot.pause(0.2)
        await snap("ingest-results")
        await pilot.press("escape")

        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelInstallScreen))
        await snap("model-install-terms")
        await pilot.press("escape")

        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen) and app.screen.view)
        failures.append(await check(pilot, shot("status", language), masks_for(engine, snap_home)))
        await pilot.press("escape")

        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordEditorScreen)
                       and app.screen.focused is app.screen.query_one("#editor-body"))
        await snap("record-editor")
    engine.lock()
    problems = [f for f in failures if f]
    assert not problems, "\n".join(problems)
