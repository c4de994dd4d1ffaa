"""Run the real `memories` CLI in a child process with the tests' cheap Argon2id parameters
for new vaults (tests/helpers/vaults.py says why they are safe to use only here). A daemon this
CLI starts (`memories unlock`, `daemon --detach`) runs this same file, so it shares them."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: `tests` imports

from tests.helpers.vaults import use_cheap_kdf  # noqa: E402

use_cheap_kdf()

from memories_tui.daemon import spawn  # noqa: E402

spawn._TEST_DAEMON_COMMAND = [sys.executable, __file__]  # a daemon it starts unlocks cheap vaults too

from memories_tui.cli import main  # noqa: E402

sys.exit(main())
