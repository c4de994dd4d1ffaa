"""Model install screen: terms first, one line per file, an unreachable host
says what to do, Cancel only while something runs. Real installer, real loopback sockets."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, DataTable, Static

from memories_tui.engine import Engine
from memories_tui.models.manifest import PINNED
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.model import ModelInstallScreen
from tests.helpers.loopback import unused_port
from tests.helpers.pilot import footer_keys, static_text, wait_for


async def test_terms_then_an_unreachable_host_names_the_way_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    port = unused_port()
    (home / "config.toml").write_text(
        f'[rag]\nmodel_download_base_url = "http://127.0.0.1:{port}/mirror"\n\n[rag.http]\nretries = 0\n',
        encoding="utf-8")
    engine = Engine.open(home)
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.run_action("open_model")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelInstallScreen))
        screen = app.screen
        terms = screen.query_one("#model-terms", Static)
        start, cancel = screen.query_one("#start", Button), screen.query_one("#cancel", Button)
        assert terms.display and "Gemma Terms of Use" in static_text(terms)
        assert "https://ai.google.dev/gemma/terms" in static_text(terms)
        assert "Accept" in str(start.label)
        assert not cancel.display and "Cancel download" not in footer_keys(screen)
        table = screen.query_one("#model-files", DataTable)
        assert table.row_count == len(PINNED.files)
        assert [table.get_row(f.path)[0].plain for f in PINNED.files] == [f.path for f in PINNED.files]

        await pilot.click("#start")
        message = screen.query_one("#model-message", Static)
        await wait_for(pilot, lambda: "Could not reach" in static_text(message), timeout=20)
        text = static_text(message)
        assert "127.0.0.1" in text and "[rag] model_download_base_url" in text
        assert "model-install --from DIR" in text
        assert "type that folder in the field beside the buttons" in text  # the TUI's own way
        assert not cancel.display and not start.disabled and str(start.label) == "Retry"
        assert not terms.display  # accepted: the notice now sits beside the (missing) files
        assert (Path(engine.config.rag.local_model_dir) / "NOTICE.md").is_file()
        # the rate and message lines never repeat a file name: the table has one line per file
        assert not any(f.path in text for f in PINNED.files)
    engine.lock()


async def test_install_from_a_folder_in_the_screen(tmp_path: Path, gemma_small_files: Path) -> None:
    """The folder field: real copies with hash checks; the ONNX pair is absent, so those two fail."""
    small = gemma_small_files
    names = ["tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json",
             "generation_config.json"]
    source = tmp_path / "downloaded"
    source.mkdir()
    for n in names:
        (source / n).write_bytes((small / n).read_bytes())
    engine = Engine.open(tmp_path / "home")
    app = MemoriesApp(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.run_action("open_model")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelInstallScreen))
        screen = app.screen
        field = screen.query_one("#from-dir")
        field.focus()
        await pilot.press("enter")  # empty: asks for a folder
        message = screen.query_one("#model-message", Static)
        assert "Type the folder" in static_text(message)
        field.value = str(source)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Some files failed" in static_text(message), timeout=30)
        table = screen.query_one("#model-files", DataTable)
        assert [table.get_row(n)[3].plain for n in names] == ["copied"] * len(names)
        assert table.get_row("onnx/model_q4.onnx")[3].plain == "failed"
        assert "not found" in static_text(message)
    model_dir = Path(engine.config.rag.local_model_dir)
    assert (model_dir / "tokenizer.json").read_bytes() == (small / "tokenizer.json").read_bytes()
    assert not (model_dir / "onnx" / "model_q4.onnx").exists()
    engine.lock()
