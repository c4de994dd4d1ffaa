"""The first frame waits for no index, segmenter or model code.

A fresh interpreter starts the TUI on a home with one vault, as `memories-tui` does, and
records which heavy modules are loaded when the unlock screen has been drawn: none of numpy,
onnxruntime, the tokenizer, Jieba, OpenCC, PyStemmer, httpx or cryptography may be. Then it calls the
engine's `preload` (what the TUI runs in a background thread right after that frame) and
records again, so the check provably sees these modules when they are loaded. Timing is
measured by bench/bench_tui_start.py, never here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memories_tui.engine import Engine

HEAVY = ("numpy", "onnxruntime", "tokenizers", "jieba", "rjieba", "opencc", "Stemmer", "httpx", "cryptography")

CHILD = """
import json, sys

from memories_tui.engine import Engine
from memories_tui.tui.app import MemoriesApp
from memories_tui.tui.screens.vaults import UnlockScreen

HEAVY = {heavy!r}
app = MemoriesApp(Engine.open(sys.argv[1]))
# the TUI starts its background preload right after the first frame: keep it from running here,
# so what is recorded is what the first frame itself loaded
preload, app.engine.preload = app.engine.preload, lambda: None
seen = {{}}


def loaded() -> list[str]:
    return sorted({{m.split(".")[0] for m in sys.modules}} & set(HEAVY))


def drawn() -> None:
    seen["first_frame"] = loaded()
    seen["screen"] = type(app.screen).__name__
    app.exit()


def watch() -> None:
    if isinstance(app.screen, UnlockScreen) and app.screen.is_mounted:
        app.screen.call_after_refresh(drawn)
    else:
        app.call_after_refresh(watch)


app.call_later(watch)
app.run(headless=True, size=(80, 24))
preload()
seen["after_preload"] = loaded()
print(json.dumps(seen))
"""


def test_first_frame_loads_no_index_segmenter_or_model_code(tmp_path: Path) -> None:
    home = tmp_path / "home"
    Engine.open(home).create_vault("Personal", "first frame passphrase")
    done = subprocess.run([sys.executable, "-c", CHILD.format(heavy=HEAVY), str(home)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["screen"] == "UnlockScreen"
    assert seen["first_frame"] == [], f"loaded before the first frame: {seen['first_frame']}"
    # the preload does load them: the check above would see them
    assert {"numpy", "opencc", "Stemmer", "cryptography"} <= set(seen["after_preload"])
    assert {"jieba", "rjieba"} & set(seen["after_preload"])
