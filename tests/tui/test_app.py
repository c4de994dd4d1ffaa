"""TUI end to end through App.run_test() + Pilot, on temp homes with a cheap KDF."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.text import Text
from textual.command import CommandList, CommandPalette
from textual.widgets import Checkbox, DataTable, Input, Static, TextArea

from memories_tui.engine import EmbedProgress, Engine, IndexReport
from memories_tui.text import segment
from memories_tui.tui.app import MemoriesApp, main
from memories_tui.tui.messages import SearchDone
from memories_tui.tui.screens.chunk import ChunkDetailScreen, TermTextArea
from memories_tui.tui.screens.create_vault import CreateVaultScreen
from memories_tui.tui.screens.ingest import IngestScreen
from memories_tui.tui.screens.model import ModelInstallScreen
from memories_tui.tui.screens.records import RecordsScreen
from memories_tui.tui.screens.search import SearchScreen
from memories_tui.tui.screens.status import StatusScreen
from memories_tui.tui.screens.vaults import UnlockScreen, VaultPickerScreen
from memories_tui.tui.text import byte_range_to_chars, match_spans, snippet_text
from memories_tui.tui.widgets.embed_status import EmbedStatus
from memories_tui.tui.widgets.results import ResultsPane
from memories_tui.tui.wrap import BrokenLines
from tests.helpers.embedding import GatedEmbedding
from tests.helpers.homes import minilm_config, write_config
from tests.helpers.paths import MINILM_DIR, require_minilm
from tests.helpers.pilot import PASS, open_records, static_text, type_text, wait_for

SIZE = (160, 48)
MINILM = MINILM_DIR
# Missing inputs skip with a reason outside CI and fail in CI (tests/helpers/paths.py).
needs_minilm = pytest.mark.usefixtures("minilm_dir")
NOTES = {
    "bread.md": "# Baking bread\n\nKnead the dough, let it rise overnight, then bake it in a hot oven until the crust "
                "is golden.",
    "bikes.md": "# Bicycle repair\n\nTo fix a flat tyre, remove the inner tube, find the puncture and apply a patch.",
    "tax.md": "# Tax return\n\nThe annual income tax declaration is due at the end of May; keep receipts for "
              "deductions.",
    "garden.md": "# Garden\n\nTomatoes need full sun and regular watering; pinch off side shoots in summer.",
}


def one_vault(engine: Engine, name: str = "Personal") -> str:
    return engine.create_vault(name, PASS).vault_id


def markdown_text(screen) -> str:
    """The plain text of every rendered Markdown block in the reader."""
    from textual.widgets._markdown import MarkdownBlock

    return "\n".join(block._content.plain for block in screen.query("#reader-markdown MarkdownBlock")
                     if isinstance(block, MarkdownBlock))


def live_actions(screen) -> list[str]:
    """Click actions inside the rendered Markdown (Markdown links become `link(...)`, nothing else may)."""
    from textual.widgets._markdown import MarkdownBlock

    actions = []
    for block in screen.query("#reader-markdown MarkdownBlock"):
        if isinstance(block, MarkdownBlock):
            for span in block._content.spans:
                meta = getattr(span.style, "meta", None) or {}
                if "@click" in meta and not str(meta["@click"]).startswith("link("):
                    actions.append(meta["@click"])
    return actions


async def unlock(pilot, app: MemoriesApp, passphrase: str = PASS) -> None:
    await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
    field = app.screen.query_one("#passphrase", Input)
    await type_text(pilot, field, passphrase)
    await pilot.press("enter")


# ----------------------------------------------------------------------------------------------


def test_text_helpers() -> None:
    body = "中文 abc [S1]"
    data = body.encode()
    start = data.index(b"abc")
    assert byte_range_to_chars(body, start, start + 3) == (3, 6)
    snip = snippet_text("line one\nhas [b]x[/b] and [S1]", ["x"])
    assert snip.plain == "line one has [b]x[/b] and [S1]"
    assert any(span.start == 16 and span.end == 17 for span in snip.spans)
    long = snippet_text("前言" * 200 + "咖啡" + "後記" * 200, ["咖啡"], cells=60)
    assert "咖啡" in long.plain and long.plain.startswith("…") and long.plain.endswith("…")
    assert long.cell_len <= 62
    # stems match word starts in spaced text ("to" not inside "Kyoto"), anywhere in CJK text
    assert match_spans("water at Tomatoes in Kyoto", ["at", "to"]) == [(6, 8), (9, 11)]
    assert match_spans("京都旅行 Kyoto", ["京都"]) == [(0, 2)]
    assert match_spans("去京都", ["京都"]) == [(1, 3)]


async def test_full_flow_create_unlock_ingest_read_search_lock(tmp_path: Path, engine: Engine) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "garden.md").write_text("# Garden\n\nTomatoes need sun. Literal [S1] and [@click=app.quit]x[/] and "
                                     "[b]x[/b] stay text.\n", encoding="utf-8")
    (notes / "tea.md").write_text("# 茶\n\n烏龍茶 oolong tea notes: steep 3 minutes.\n", encoding="utf-8")
    app = MemoriesApp(engine, browse_root=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        # first run → create screen, samples offered; untick to keep this vault small
        await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen))
        screen = app.screen
        screen.query_one("#samples", Checkbox).value = False
        screen.query_one("#name", Input).value = "Mine"
        screen.query_one("#pass1", Input).value = PASS
        screen.query_one("#pass2", Input).value = PASS
        screen.query_one("#pass2", Input).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        assert app.vault is not None and engine.is_unlocked(app.vault.vault_id)
        vault_id = app.vault.vault_id

        # lock, then unlock through the unlock screen
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        assert not engine.is_unlocked(vault_id)
        await unlock(pilot, app)
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))

        # ingest two real files
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, IngestScreen))
        paths = app.screen.query_one("#paths", Input)
        await type_text(pilot, paths, f"{notes / 'garden.md'} {notes / 'tea.md'}")
        await pilot.press("enter")
        table = app.screen.query_one("#ingest-results", DataTable)
        await wait_for(pilot, lambda: table.row_count == 2)
        statuses = [table.get_row_at(n)[1].plain for n in range(2)]
        assert statuses == ["created", "created"]
        # a refused file: inline message, nothing written
        await type_text(pilot, paths, str(notes / "missing.md"))
        await pilot.press("enter")
        message = app.screen.query_one("#ingest-message", Static)
        await wait_for(pilot, lambda: "does not exist" in static_text(message))
        await pilot.press("escape")

        # read: the record list shows both, the reader shows the body literally
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and len(app.screen.records) == 2)
        records = app.screen
        garden_row = next(n for n, r in enumerate(records.records) if r.title == "Garden")
        records.query_one("#records", DataTable).move_cursor(row=garden_row)
        await pilot.pause()
        await wait_for(pilot, lambda: "[@click=app.quit]x[/]" in markdown_text(records))
        rendered = markdown_text(records)
        assert "[S1]" in rendered and "[b]x[/b]" in rendered and "# Garden" not in rendered
        assert not live_actions(records), "document text must never become a live action"
        await pilot.press("v")  # raw view: the literal text, heading marks included
        body = static_text(records.query_one("#reader-body", Static))
        assert "# Garden" in body and "[S1]" in body and "[@click=app.quit]x[/]" in body and "[b]x[/b]" in body
        await pilot.press("v")

        # search: BM25 hit with citation label; vector pane shows the model error in place
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        await type_text(pilot, search.query_one("#query", Input), "tomatoes")
        await pilot.press("enter")
        bm25 = search.query_one("#pane-bm25", ResultsPane)
        await wait_for(pilot, lambda: bm25.hits)
        assert bm25.hits[0].citation == "S1" and bm25.hits[0].title == "Garden"
        prompt = bm25.option_list.get_option_at_index(0).prompt
        assert isinstance(prompt, BrokenLines) and isinstance(prompt.text, Text)  # literal text, never markup
        assert prompt.plain.startswith("[S1] Garden")
        vector = search.query_one("#pane-vector", ResultsPane)
        await wait_for(pilot, lambda: "Searching" not in static_text(vector.state))

        # markup-looking queries render literally
        for query in ("[S1]", "[b]x[/b]"):
            await type_text(pilot, search.query_one("#query", Input), query)
            await pilot.press("enter")
            await wait_for(pilot, lambda: "Searching" not in static_text(bm25.state))
            assert bm25.hits, query
            assert "[S1]" in bm25.option_list.get_option_at_index(0).prompt.plain

        # chunk detail: selection is the chunk (byte offsets → characters)
        bm25.option_list.focus()
        bm25.option_list.highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChunkDetailScreen) and app.screen.is_mounted)
        area = app.screen.query_one("#detail-body", TextArea)
        await wait_for(pilot, lambda: area.selected_text != "")  # set in the screen's on_mount
        assert area.selected_text == bm25.hits[0].text

        # lock pops everything and forgets the vault
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        assert not engine.is_unlocked(vault_id)
        assert [type(s) for s in app.screen_stack] == [VaultPickerScreen, UnlockScreen]
        assert app.screen.query_one("#passphrase", Input).has_focus


async def test_wrong_passphrase_shows_inline_error(engine: Engine) -> None:
    one_vault(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await unlock(pilot, app, "not the passphrase")
        error = app.screen.query_one("#unlock-error", Static)
        await wait_for(pilot, lambda: static_text(error) != "")
        assert "passphrase" in static_text(error).lower()
        field = app.screen.query_one("#passphrase", Input)
        assert field.has_focus and field.value == "" and not field.disabled
        assert isinstance(app.screen, UnlockScreen)
        await unlock(pilot, app)
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))


async def test_first_run_offers_creation_and_samples(engine: Engine) -> None:
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen))
        screen = app.screen
        assert screen.query_one("#samples", Checkbox).value is True
        assert screen.query_one("#name", Input).has_focus  # focus starts in the name field
        screen.query_one("#pass1", Input).value = PASS
        screen.query_one("#pass2", Input).value = PASS
        await pilot.pause()  # the strength line (weak: a famous phrase, with advice) moves the button down
        await pilot.click("#create")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen) and app.screen.records)
        titles = {r.title for r in app.screen.records}
        assert len(titles) == 5
        assert app.screen.query_one("#records", DataTable).row_count == 5


async def test_create_vault_mismatch_is_inline(engine: Engine) -> None:
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CreateVaultScreen))
        screen = app.screen
        screen.query_one("#pass1", Input).value = "a"
        screen.query_one("#pass2", Input).value = "b"
        await pilot.pause()  # the strength line appears and moves the button down
        await pilot.click("#create")
        assert "differ" in static_text(screen.query_one("#create-error", Static))
        assert engine.list_vaults() == []


async def test_one_vault_opens_on_unlock_with_focus(engine: Engine) -> None:
    one_vault(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        await pilot.pause()
        assert app.screen.query_one("#passphrase", Input).has_focus


async def test_several_vaults_show_picker(engine: Engine) -> None:
    one_vault(engine, "Alpha")
    one_vault(engine, "Beta")
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, VaultPickerScreen)
        assert app.screen.query_one("#vaults", DataTable).row_count == 2
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        assert app.screen.info.name == "Beta"


async def test_idle_lock_and_status(engine: Engine) -> None:
    vault_id = one_vault(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await unlock(pilot, app)
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        body = app.screen.query_one("#status-body", Static)
        await wait_for(pilot, lambda: not body.loading and app.screen.query_one("#status-head", Static).content)
        assert [section.title for section in app.screen.view][:3] == [
            "Vault", "Index (in memory while unlocked)", "Embedding model"]
        app.idle_lock_seconds = 0.05
        await app.check_idle_lock()
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        assert not engine.is_unlocked(vault_id)


async def test_late_search_results_after_lock_are_dropped(engine: Engine) -> None:
    """A result computed before a lock never reaches the screen, even when the same vault has
    been unlocked again meanwhile: only the lock epoch tells the stale work apart."""
    vault_id = one_vault(engine)
    engine.unlock(vault_id, PASS)
    engine.add_record(vault_id, kind="memory", title="Apples", body="apples from the orchard")
    engine.add_record(vault_id, kind="memory", title="Pears", body="pears from the market")
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        app.vault_unlocked(engine.resolve_vault(vault_id))
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        screen = app.screen
        pane = screen.query_one("#pane-bm25", ResultsPane)
        shown: list[object] = []
        real_set_results = pane.set_results

        def spy(response, seconds, **how):
            shown.append(response)
            return real_set_results(response, seconds, **how)

        pane.set_results = spy
        generation = screen.generation["bm25"]
        stale_epoch = engine.lock_epoch
        stale = engine.search(vault_id, "apples")  # real, non-empty results from before the lock
        assert [h.title for h in stale.results] == ["Apples"]
        engine.lock()
        engine.unlock(vault_id, PASS)  # the vault is open again; the epoch moved on
        assert engine.lock_epoch != stale_epoch
        fresh = engine.search(vault_id, "pears")
        screen.post_if_live(SearchDone(stale_epoch, mode="bm25", generation=generation, response=stale))
        screen.post_message(SearchDone(stale_epoch, mode="bm25", generation=generation, response=stale))
        screen.post_message(SearchDone(engine.lock_epoch, mode="bm25", generation=generation, response=fresh))
        await wait_for(pilot, lambda: bool(shown))
        await pilot.pause()
        assert shown == [fresh]  # messages are handled in order: the stale ones were dropped
        assert [h.title for h in pane.hits] == ["Pears"]


class FakeInstaller:
    """Only for rendering: the real installer is tested in tests/integration/test_install.py."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def __call__(self, progress=None, cancel=None):
        files = [SimpleNamespace(path="onnx/model_q4.onnx", bytes_done=0, bytes_total=2048, state="pending"),
                 SimpleNamespace(path="tokenizer.json", bytes_done=0, bytes_total=1024, state="pending")]

        def emit(current):
            progress(SimpleNamespace(files=[SimpleNamespace(**vars(f)) for f in files],
                                     bytes_done=sum(f.bytes_done for f in files),
                                     bytes_total=sum(f.bytes_total for f in files),
                                     rate_bps=1024.0, eta_seconds=2.0, current=current))

        files[0].state, files[0].bytes_done = "downloading", 1024
        emit("onnx/model_q4.onnx")
        self.release.wait(60)  # set by the test; the timeout only guards a hang
        if cancel is not None and cancel.is_set():
            from memories_tui.errors import CancelledError

            raise CancelledError("Model install cancelled; finished files are kept.")
        files[0].state, files[0].bytes_done = "downloaded", 2048
        files[1].state, files[1].bytes_done = "verifying", 1024
        emit("tokenizer.json")
        results = [SimpleNamespace(path=f.path, bytes=f.bytes_total, sha256="0" * 64, status="downloaded", error=None)
                   for f in files]
        return SimpleNamespace(directory=Path("/tmp/model"), files=results, ok=True)


async def test_model_install_screen_progress_and_cancel(engine: Engine) -> None:
    fake = FakeInstaller()
    engine.install_model = fake  # injected for rendering only
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.run_action("open_model")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelInstallScreen))
        screen = app.screen
        await pilot.click("#start")
        table = screen.query_one("#model-files", DataTable)
        rate = screen.query_one("#model-rate", Static)
        await wait_for(pilot, lambda: "KiB/s" in static_text(rate))
        assert "1.0 KiB of 3.0 KiB" in static_text(rate) and "ETA 2s" in static_text(rate)
        assert table.get_row("onnx/model_q4.onnx")[3].plain == "downloading"
        assert screen.query_one("#cancel").display
        for line in ("#model-rate", "#model-message"):  # the file name is in its table row only
            assert "model_q4" not in static_text(screen.query_one(line, Static))
        await pilot.click("#cancel")
        fake.release.set()
        message = screen.query_one("#model-message", Static)
        await wait_for(pilot, lambda: "cancelled" in static_text(message))
        assert str(screen.query_one("#start").label) == "Resume"
        assert table.get_row("onnx/model_q4.onnx")[3].plain == "cancelled"
        fake.release.clear()
        await pilot.click("#start")
        fake.release.set()
        await wait_for(pilot, lambda: "installed" in static_text(message))
        assert table.get_row("tokenizer.json")[3].plain == "downloaded"


def test_main_bad_config_exits_cleanly(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[tui]\nidle_lock_minutes = 'soon'\n", encoding="utf-8")
    with pytest.raises(SystemExit) as info:
        main(["--home", str(tmp_path / "home"), "--config", str(bad)])
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("memories-tui: ") and "Traceback" not in err


async def test_command_palette_opens_screens(engine: Engine) -> None:
    vault_id = one_vault(engine)
    engine.unlock(vault_id, PASS)
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_records(pilot, app, vault_id)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"ingest files")
        commands = app.screen.query_one(CommandList)

        def best_match() -> str:
            if commands.option_count == 0 or commands.highlighted != 0:
                return ""
            return str(commands.get_option_at_index(0).prompt)

        await wait_for(pilot, lambda: "Ingest files" in best_match())
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, IngestScreen))
        bindings = {b.id for _, b, *_ in app.active_bindings.values() if b.id}
        assert {"lock", "back", "ingest.run"} <= bindings


# -- background embedding, idle lock and busy work, term highlighting ------------------------------


def write_notes(folder: Path) -> list[Path]:
    folder.mkdir(exist_ok=True)
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [folder / name for name in NOTES]


@pytest.fixture
def minilm_engine(tmp_path: Path):
    require_minilm()
    home = write_config(tmp_path / "home", minilm_config(MINILM, threads=2))
    eng = Engine.open(home)
    vault_id = one_vault(eng)
    eng.unlock(vault_id, PASS)
    eng.ingest(vault_id, write_notes(tmp_path / "notes"))
    eng.lock()
    yield eng
    eng.lock()


@needs_minilm
async def test_background_embedding_after_unlock_feeds_the_vector_pane(minilm_engine: Engine, monkeypatch) -> None:
    engine = minilm_engine
    release = GatedEmbedding(monkeypatch, real=True).release
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await unlock(pilot, app)
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        vault_id = app.vault.vault_id
        status = app.screen.query_one("#records-embed-status", EmbedStatus)
        await wait_for(pilot, lambda: app.embedding_active(vault_id) and status.display)
        assert static_text(status).startswith("Semantic index: ")

        # a semantic query while the background job runs: BM25 answers, vector/hybrid wait for it
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        await type_text(pilot, search.query_one("#query", Input), "my bike wheel has a puncture")
        await pilot.press("enter")
        vector = search.query_one("#pane-vector", ResultsPane)
        hybrid = search.query_one("#pane-hybrid", ResultsPane)
        assert "Waiting for the background embedding" in static_text(vector.state)
        assert search.waiting == {"vector", "hybrid"}

        release.set()
        await wait_for(pilot, lambda: app.embed_state.phase == "done")
        assert app.embed_state.report.embedded == len(NOTES) == app.embed_state.vectors
        # the waiting panes re-ran on completion and found the note by meaning
        await wait_for(pilot, lambda: vector.hits and hybrid.hits)
        assert vector.hits[0].title == "Bicycle repair"
        assert any(hit.title == "Bicycle repair" for hit in hybrid.hits)
        line = search.query_one("#search-embed-status", EmbedStatus)
        assert line.display and static_text(line).startswith("Semantic index ready")
        assert engine.status(vault_id).missing == 0

        # later queries run at once (nothing to wait for), each semantic pane search with a cancel
        # event that is set when a newer query supersedes it
        calls: list[tuple[str, str, threading.Event | None]] = []
        hold = threading.Event()
        real_search = engine.search

        def held_search(vault_id, query, **kwargs):
            query = query.text  # the panes share one parsed Query
            calls.append((query, kwargs["mode"], kwargs.get("cancel")))
            if query == "how do I make a loaf" and kwargs["mode"] != "bm25":
                hold.wait(60)  # still running when the next query comes (set by the test)
            return real_search(vault_id, query, **kwargs)

        engine.search = held_search
        posted: list[object] = []
        real_post = search.post_if_live

        def spy_post(message):
            posted.append(message)
            real_post(message)

        search.post_if_live = spy_post  # records what the workers hand to the screen
        await type_text(pilot, search.query_one("#query", Input), "how do I make a loaf")
        await pilot.press("enter")
        superseded = {("vector", search.generation["vector"]), ("hybrid", search.generation["hybrid"])}
        assert not search.waiting
        await wait_for(pilot, lambda: len(calls) == 3)
        first = {mode: cancel for _, mode, cancel in calls}
        assert first["bm25"] is None and not first["vector"].is_set() and not first["hybrid"].is_set()
        await type_text(pilot, search.query_one("#query", Input), "annual income declaration")
        await pilot.press("enter")
        assert first["vector"].is_set() and first["hybrid"].is_set()
        hold.set()
        await wait_for(pilot, lambda: vector.hits and vector.hits[0].title == "Tax return")
        # wait until the superseded searches have delivered their results, let the screen handle
        # them, and check they changed nothing
        await wait_for(pilot, lambda: superseded <= {(m.mode, m.generation) for m in posted
                                                      if isinstance(m, SearchDone)})
        await pilot.pause()
        assert vector.hits[0].title == "Tax return"  # the superseded result never shows


async def test_background_embedding_progress_and_cancel_on_lock(engine: Engine, monkeypatch) -> None:
    vault_id = one_vault(engine)
    fake = GatedEmbedding(monkeypatch, before=[EmbedProgress(3, 10, 1234.0, 7.0)],
                          after=[EmbedProgress(10, 10, 1500.0, 0.0)],
                          report=IndexReport(embedded=10, reused=2, seconds=1.5))
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await unlock(pilot, app)
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        status = app.screen.query_one("#records-embed-status", EmbedStatus)
        await wait_for(pilot, lambda: "3/10 chunks" in static_text(status))
        assert "1,234 tok/s" in static_text(status) and "ETA 7s" in static_text(status)

        # lock: the job's cancel event is set, and whatever it reports afterwards is dropped
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        assert fake.cancels[0].is_set() and not app.embedding_active(vault_id)
        fake.release.set()
        await wait_for(pilot, lambda: not app.embedding.thread.is_alive())
        await pilot.pause()  # handle whatever the finished thread posted
        assert app.embed_state.phase == "idle"

        # unlock again: a fresh job runs to completion
        await unlock(pilot, app)
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await wait_for(pilot, lambda: app.embed_state.phase == "done")
        status = app.screen.query_one("#records-embed-status", EmbedStatus)
        assert static_text(status) == "Semantic index ready · 10 embedded in 1.5 s · 2 from the encrypted cache"
        assert len(fake.cancels) == 2 and not fake.cancels[1].is_set()


async def test_no_model_means_no_background_status(engine: Engine) -> None:
    one_vault(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await unlock(pilot, app)
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await wait_for(pilot, lambda: app.embedding.running is None)
        assert app.embed_state.phase == "idle"
        assert not app.screen.query_one("#records-embed-status", EmbedStatus).display


async def test_idle_lock_waits_for_running_ingest_and_install(tmp_path: Path, engine: Engine) -> None:
    vault_id = one_vault(engine)
    notes = write_notes(tmp_path / "notes")
    release = threading.Event()
    real_ingest = engine.ingest

    def slow_ingest(vault_id, paths, **kwargs):
        release.wait(60)  # set by the test; the timeout only guards a hang
        return real_ingest(vault_id, paths, **kwargs)

    engine.ingest = slow_ingest
    fake_install = FakeInstaller()
    engine.install_model = fake_install
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await unlock(pilot, app)
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))

        async def idle_check() -> None:
            """One idle-lock check as if the user had been away for ages (the 1 s timer stays harmless)."""
            app.idle_lock_seconds, app._last_activity = 60.0, 0.0
            await app.check_idle_lock()
            app.idle_lock_seconds = 3600.0

        # ingest running: idle time is not counted, the vault stays open
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, IngestScreen))
        await type_text(pilot, app.screen.query_one("#paths", Input), " ".join(map(str, notes)))
        await pilot.press("enter")
        await wait_for(pilot, app.busy_work)
        await idle_check()
        assert engine.is_unlocked(vault_id) and isinstance(app.screen, IngestScreen)
        release.set()
        table = app.screen.query_one("#ingest-results", DataTable)
        await wait_for(pilot, lambda: table.row_count == len(NOTES))
        assert engine.list_records(vault_id)
        await pilot.press("escape")

        # model install running: same
        await app.run_action("open_model")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelInstallScreen))
        await pilot.click("#start")
        await wait_for(pilot, app.busy_work)
        await idle_check()
        assert engine.is_unlocked(vault_id) and isinstance(app.screen, ModelInstallScreen)
        fake_install.release.set()
        message = app.screen.query_one("#model-message", Static)
        await wait_for(pilot, lambda: "installed" in static_text(message))

        # nothing running any more: idle time counts again
        await wait_for(pilot, lambda: not app.busy_work())
        await idle_check()
        await wait_for(pilot, lambda: isinstance(app.screen, UnlockScreen))
        assert not engine.is_unlocked(vault_id)


async def test_chunk_detail_highlights_query_terms(engine: Engine) -> None:
    vault_id = one_vault(engine)
    engine.unlock(vault_id, PASS)
    engine.add_record(vault_id, kind="memory", title="Fruit", body="Intro line.\n咖啡 Apples and pears; more apples.\n")
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await open_records(pilot, app, vault_id)
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        await type_text(pilot, search.query_one("#query", Input), "apples")
        await pilot.press("enter")
        bm25 = search.query_one("#pane-bm25", ResultsPane)
        await wait_for(pilot, lambda: bm25.hits)
        bm25.option_list.focus()
        bm25.option_list.highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChunkDetailScreen))
        detail = app.screen
        area = detail.query_one("#detail-body", TermTextArea)
        await wait_for(pilot, lambda: area.text)  # the screen is pushed before its on_mount fills it
        body = area.text
        # the engine's terms are stems ("appl"), the same spans the result snippets highlight
        assert [body[a:b].lower() for a, b in detail.term_matches] == ["appl", "appl"]
        # the head counts matches and names them as the note writes them, not as stems
        meta = static_text(detail.query_one("#detail-meta", Static))
        assert "2 matches in the chunk: Apples ×2" in meta and "appl," not in meta and "terms:" not in meta
        row = next(n for n in range(area.document.line_count) if "Apples" in area.document.get_line(n))
        # per-line UTF-8 byte columns (咖啡 is 6 bytes)
        assert area.spans_with_style(row) == [(7, 11), (30, 34)]
        await pilot.pause()
        strip = area.render_line(row)  # the row is visible: first lines of a short body
        styled = [seg for seg in strip if seg.text == "Appl"]
        assert styled and styled[0].style.bgcolor is not None and styled[0].style.bgcolor.name == "yellow"


async def test_three_panes_share_one_parse(engine: Engine, monkeypatch) -> None:
    vault_id = one_vault(engine)
    engine.unlock(vault_id, PASS)
    engine.add_record(vault_id, kind="memory", title="咖啡", body="咖啡豆 coffee beans 的烘焙。")
    engine.lock()
    calls: list[str] = []
    real = segment._tokens_from_folded
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await unlock(pilot, app)
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        engine._context(vault_id).index()  # built before counting: only the query is segmented below
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        panes = [search.query_one(f"#pane-{mode}", ResultsPane) for mode in ("bm25", "vector", "hybrid")]
        monkeypatch.setattr(segment, "_tokens_from_folded",
                            lambda folded, *more, **named: (calls.append(folded), real(folded, *more, **named))[1])
        await type_text(pilot, search.query_one("#query", Input), "咖啡豆 coffee")
        await pilot.press("enter")
        # no embedding model here: the vector and hybrid panes end with an error, after the parse
        await wait_for(pilot, lambda: all(p.shown for p in panes), timeout=8)
        assert panes[0].hits and panes[0].hits[0].title == "咖啡"
        assert len(calls) == 1, calls


async def test_status_shows_and_revokes_mcp_access(engine: Engine) -> None:
    import os

    from memories_tui.frontend.grant_records import revoked_at, write_server_record

    vault_id = one_vault(engine)
    started = time.time() - 1
    write_server_record(engine.home, os.getpid(), [vault_id], started, None)  # a live pid: this test's
    app = MemoriesApp(engine)
    async with app.run_test(size=SIZE) as pilot:
        await unlock(pilot, app)
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        screen = app.screen

        def mcp_row() -> str:
            for section in screen.view:
                if section.title == "Sharing (CLI and AI clients)":
                    return next(row.value for row in section.rows if row.label == "AI clients")
            return ""

        await wait_for(pilot, lambda: mcp_row().startswith("pid "))
        assert mcp_row() == f"pid {os.getpid()}"
        await pilot.press("x")
        await wait_for(pilot, lambda: mcp_row().startswith("none"))
        revoked = revoked_at(engine.home, vault_id)
        assert revoked is not None and revoked >= started
