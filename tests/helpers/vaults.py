"""The cheap Argon2id parameters every test vault is made with, defined once.

The override is the test-only module hook of vault/crypto.py (no TOML key, environment variable
or flag reaches it). A vault stores its parameters in its header, so later unlocks are cheap too.
In this process use `cheap_kdf()` (the `cheap_kdf` fixture); a child Python process runs
`use_cheap_kdf()` first — as a script (cheap_cli.py, mcp_server.py) or through `CHILD_PRELUDE`
at the top of `python -c` code.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from memories_tui.vault import crypto
from memories_tui.vault.state_folder import STATE_DIR_ENV

if TYPE_CHECKING:
    from memories_tui.engine import Engine, Record

PASS = "correct horse"  # the passphrase of the vaults tests make through the CLI (tests/helpers/cli.py)
CHEAP = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)
REPO_ROOT = Path(__file__).resolve().parents[2]
CHILD_PRELUDE = (f"import sys; sys.path.insert(0, {str(REPO_ROOT)!r})\n"
                 "from tests.helpers.vaults import use_cheap_kdf; use_cheap_kdf()\n")


def use_cheap_kdf() -> None:
    """For the rest of this process (a child process made for a test); its rollback anchors'
    copy outside the home goes to a test folder too."""
    crypto._TEST_KDF_OVERRIDE = CHEAP
    use_test_state_folder()


def use_test_state_folder() -> None:
    """Never the real user's state folder: conftest.py points MEMORIES_STATE_DIR at a temporary
    one; a child started with a bare environment gets a shared one under the temp folder (its
    files are named per home, and every test home is new)."""
    if not os.environ.get(STATE_DIR_ENV, "").strip():
        user = getattr(os, "getuid", lambda: 0)()
        os.environ[STATE_DIR_ENV] = str(Path(tempfile.gettempdir()) / f"memories-test-state-{user}")


@contextmanager
def cheap_kdf() -> Iterator[None]:
    previous = crypto._TEST_KDF_OVERRIDE
    crypto._TEST_KDF_OVERRIDE = CHEAP
    try:
        yield
    finally:
        crypto._TEST_KDF_OVERRIDE = previous


def records_of(home: Path, vault: str, passphrase: str = PASS) -> list[Record]:
    """What a fresh engine finds in the vault after whatever the test did to it: the header and
    manifest verified on unlock, every latest revision decrypted."""
    from memories_tui.engine import Engine

    engine = Engine.open(home)
    try:
        with cheap_kdf():  # a vault made with the cheap parameters opens only under the same hook
            engine.unlock(vault, passphrase)
        return engine.list_records(vault)
    finally:
        engine.close()


def create_vault(home: Path, name: str = "notes") -> str:
    """A new vault made as a user makes one (`memories vault create`, in this process); its id."""
    from tests.helpers.cli import call_cli

    result = call_cli(home, "--json", "vault", "create", name)
    assert result.code == 0, result.stderr + result.stdout
    return str(result.json["vault_id"])


def home_with_a_note(home: Path, title: str, text: str) -> Path:
    """`home` with vault `notes` holding one memory, both made through the CLI in this process."""
    from tests.helpers.cli import call_cli

    create_vault(home)
    added = call_cli(home, "memory", "add", "notes", "--title", title, "--text", text)
    assert added.code == 0, added.stderr + added.stdout
    return home


def open_vault(home: Path, config: str = "", name: str = "notes", passphrase: str = PASS) -> tuple[Engine, str]:
    """An engine on `home` (its config.toml is `config` when one is given) with vault `name`
    made and unlocked: (engine, vault id). Call it under the cheap KDF."""
    from memories_tui.engine import Engine

    home.mkdir(parents=True, exist_ok=True)
    if config:
        (home / "config.toml").write_text(config, encoding="utf-8")
    engine = Engine.open(home)
    vault_id = engine.create_vault(name, passphrase).vault_id
    engine.unlock(vault_id, passphrase)
    return engine, vault_id
