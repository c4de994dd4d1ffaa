"""Run the real `memories` CLI (for `memories mcp`) and say on stderr when heavy modules load.

An import watcher on `sys.meta_path` prints `[import-watch] onnxruntime` (or tokenizers) to
stderr the moment the module is first imported, so a test can prove the server answers
without loading the model and loads it on the first call that needs it. It also sets the
cheap test KDF hook; no flag, variable or config can reach either.
"""

import sys
from importlib.abc import MetaPathFinder
from pathlib import Path

WATCHED = {"onnxruntime", "tokenizers"}


class ImportWatch(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):  # noqa: ANN001, ANN201
        if name in WATCHED:
            print(f"[import-watch] {name}", file=sys.stderr, flush=True)
        return None


sys.meta_path.insert(0, ImportWatch())

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: `tests` imports

from tests.helpers.vaults import use_cheap_kdf  # noqa: E402

# The test vaults were made with the tests' cheap Argon2id parameters; the same hook lets the
# server open them below the production floor.
use_cheap_kdf()

from memories_tui.cli import main  # noqa: E402

sys.exit(main())
