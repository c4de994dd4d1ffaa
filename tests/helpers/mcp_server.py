"""Run the real `memories` CLI (for `memories mcp`) and say on stderr when heavy modules load.

An import watcher on `sys.meta_path` prints `[import-watch] onnxruntime` (or tokenizers) to
stderr the moment the module is first imported, so a test can prove the server answers
without loading the model and loads it on the first call that needs it. It changes nothing
else: no flag, variable or config can reach it.
"""

import sys
from importlib.abc import MetaPathFinder

WATCHED = {"onnxruntime", "tokenizers"}


class ImportWatch(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):  # noqa: ANN001, ANN201
        if name in WATCHED:
            print(f"[import-watch] {name}", file=sys.stderr, flush=True)
        return None


sys.meta_path.insert(0, ImportWatch())

from memories_tui.cli import main  # noqa: E402

sys.exit(main())
