"""TUI tests run on temp homes with a cheap KDF (a test-only hook; the real KDF is tested in the vault tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memories_tui.engine import Engine
from tests.helpers import vaults


@pytest.fixture(autouse=True)
def cheap_kdf():
    """Every TUI test: vaults made here derive their key cheaply (tests/helpers/vaults.py)."""
    with vaults.cheap_kdf():
        yield


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    eng = Engine.open(tmp_path / "home")
    yield eng
    eng.lock()
