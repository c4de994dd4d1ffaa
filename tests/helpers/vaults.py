"""The cheap Argon2id parameters every test vault is made with, defined once.

The override is the test-only module hook of vault/crypto.py (no TOML key, environment variable
or flag reaches it). A vault stores its parameters in its header, so later unlocks are cheap too.
In this process use `cheap_kdf()` (the `cheap_kdf` fixture); a child Python process runs
`use_cheap_kdf()` first — as a script (cheap_cli.py, mcp_server.py) or through `CHILD_PRELUDE`
at the top of `python -c` code.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memories_tui.vault import crypto

CHEAP = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)
REPO_ROOT = Path(__file__).resolve().parents[2]
CHILD_PRELUDE = (f"import sys; sys.path.insert(0, {str(REPO_ROOT)!r})\n"
                 "from tests.helpers.vaults import use_cheap_kdf; use_cheap_kdf()\n")


def use_cheap_kdf() -> None:
    """For the rest of this process (a child process made for a test)."""
    crypto._TEST_KDF_OVERRIDE = CHEAP


@contextmanager
def cheap_kdf() -> Iterator[None]:
    previous = crypto._TEST_KDF_OVERRIDE
    crypto._TEST_KDF_OVERRIDE = CHEAP
    try:
        yield
    finally:
        crypto._TEST_KDF_OVERRIDE = previous
