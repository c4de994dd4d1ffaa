"""TUI tests run on temp homes with a cheap KDF (a test-only hook; the real KDF is tested in the vault tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memories_tui.engine import Engine
from memories_tui.vault import crypto


@pytest.fixture(autouse=True)
def cheap_kdf():
    old = crypto._TEST_KDF_OVERRIDE
    crypto._TEST_KDF_OVERRIDE = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)
    yield
    crypto._TEST_KDF_OVERRIDE = old


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    eng = Engine.open(tmp_path / "home")
    yield eng
    eng.lock()
