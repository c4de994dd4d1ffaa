"""Search panes without and with a model: no dead end, scores that
name their stage, rows found by several panes marked, every stage score in the chunk detail."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.chunk import ChunkDetailScreen
from memories_tui.tui.screens.model import ModelInstallScreen
from memories_tui.tui.screens.search import SearchScreen
from memories_tui.tui.widgets.results import ResultsPane
from tests.helpers.pilot import static_text, wait_for
from tests.tui.test_app import minilm_engine  # noqa: F401 - fixture
from tests.tui.test_keys import unlock_to_records, vault_with_notes


def row_text(pane: ResultsPane, n: int) -> str:
    return pane.option_list.get_option_at_index(n).prompt.plain


async def search_for(pilot, app: MemoriesApp, query: str) -> dict[str, ResultsPane]:
    await pilot.press("s")
    await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
    app.screen.query_one("#query", Input).value = query
    await pilot.press("enter")
    panes = {mode: app.screen.query_one(f"#pane-{mode}", ResultsPane) for mode in ("bm25", "vector", "hybrid")}
    await wait_for(pilot, lambda: all(p.shown for p in panes.values()), timeout=60)
    await pilot.pause()
    return panes


async def test_without_a_model_hybrid_falls_back_to_bm25_and_vector_names_the_key(engine: Engine) -> None:
    vault_with_notes(engine)
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await unlock_to_records(pilot, app)
        panes = await search_for(pilot, app, "bread")
        bm25, vector, hybrid = panes["bm25"], panes["vector"], panes["hybrid"]
        assert [h.title for h in bm25.hits] == ["Oven"]
        # Hybrid: the BM25 results, and one line saying why
        assert [(h.record_id, h.chunk_hash) for h in hybrid.hits] == [(h.record_id, h.chunk_hash) for h in bm25.hits]
        assert "Keyword results: no model yet (F2 installs it)." in static_text(hybrid.state)
        # Vector: one short line with the key, no CLI command, no path
        hint = static_text(vector.state)
        assert hint == "Needs the embedding model: F2 installs it (about 200 MiB, once)."
        assert not vector.hits
        # rows name their stage and the other panes holding the same chunk
        assert row_text(bm25, 0).splitlines()[1].startswith("bm25 ")
        assert "also in Hybrid" in row_text(bm25, 0) and "also in BM25" in row_text(hybrid, 0)
        # F2 works with the focus in the query field, and esc comes back
        assert app.screen.query_one("#query", Input).has_focus
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelInstallScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))


async def test_with_a_model_each_pane_shows_its_stage_and_detail_shows_all(minilm_engine: Engine) -> None:  # noqa: F811
    app = MemoriesApp(minilm_engine)
    async with app.run_test(size=(140, 45)) as pilot:
        await unlock_to_records(pilot, app)
        await wait_for(pilot, lambda: not app.embedding_active(app.vault.vault_id), timeout=120)
        panes = await search_for(pilot, app, "how to bake bread")
        for mode, label in (("bm25", "bm25"), ("vector", "cosine"), ("hybrid", "fusion")):
            pane = panes[mode]
            assert pane.hits, mode
            score_line = row_text(pane, 0).splitlines()[1]
            assert score_line.startswith(f"{label} "), (mode, score_line)
            stage = {"cosine": "vector"}.get(label, label)
            assert f"{pane.hits[0].scores[stage]:.4f}" in score_line
        top = panes["vector"].hits[0]
        assert 0.0 < top.scores["vector"] <= 1.0  # a cosine, not the rerank value
        assert "also in" in row_text(panes["hybrid"], 0)
        hybrid = panes["hybrid"]
        hybrid.option_list.focus()
        hybrid.option_list.highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChunkDetailScreen))
        meta = static_text(app.screen.query_one("#detail-meta", Static))
        hit = hybrid.hits[0]
        for stage, label in (("bm25", "bm25"), ("vector", "cosine"), ("fusion", "fusion"), ("rerank", "rerank")):
            value = hit.scores.get(stage)
            if value is not None:
                assert f"{label} {value:.4f}" in meta, (stage, meta)
        assert "–" not in meta.split("scores:")[1].split("final")[0]  # a stage that did not score it: left out
        assert f"final {hit.score:.4f}" in meta


def test_welcome_note_names_tui_keys_not_cli_commands() -> None:
    welcome = (Path(__file__).resolve().parents[2] / "memories_tui" / "samples" / "01-welcome.md").read_text()
    assert "memories rag" not in welcome and "F1" in welcome and "**m**" in welcome
