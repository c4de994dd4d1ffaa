"""Run the real `memories` CLI with cheap Argon2id parameters for new vaults.

The override is a module attribute set in-process: the test-only hook the design allows,
which no TOML key, environment variable or flag can reach. A daemon this CLI starts
(`memories unlock`, `daemon --detach`) runs this same file, so it shares the override. Vaults created this way store
their cheap parameters in the header, so later unlocks are cheap too.
"""

import sys

from memories_tui.daemon import lifecycle
from memories_tui.vault import crypto

crypto._TEST_KDF_OVERRIDE = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)
lifecycle._TEST_DAEMON_COMMAND = [sys.executable, __file__]  # a daemon it starts unlocks cheap vaults too

from memories_tui.cli import main  # noqa: E402

sys.exit(main())
