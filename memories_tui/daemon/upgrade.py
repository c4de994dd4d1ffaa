"""Noticing an upgrade under a running daemon: its own files replaced on disk.

A daemon loads much of the package lazily (the code of a verb on its first call), so after
`pip install -U` a long-running daemon would mix old modules in memory with new ones from
disk, and fail in ways nobody can read (an ImportError, a result of another shape). Instead,
the package's files are fingerprinted when the daemon starts (names, sizes, times, inodes of
every source and catalog file; a few milliseconds) and looked at again at most once a second
while clients call. Once they differ, the daemon says it is of another build than its
clients: a detached daemon that holds no unlocked vault is restarted by the next client as
for a version mismatch, and otherwise every client is told to run `memories daemon restart`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

log = logging.getLogger("memories.daemon")
PACKAGE = Path(__file__).resolve().parents[1]
WATCHED = (".py", ".mo", ".toml", ".tcss", ".md")
CHECK_SECONDS = 1.0
CHANGED_API = "changed-on-disk"  # the API a daemon whose files changed names: no client matches it


class SourceWatch:
    def __init__(self, root: Path = PACKAGE) -> None:
        self.root = root
        self._seen = _fingerprint(root)
        self._checked = time.monotonic()
        self._changed = False
        self._lock = threading.Lock()

    def changed(self) -> bool:
        """Whether the package's files differ from those the daemon started with (and stays so)."""
        with self._lock:
            if self._changed or time.monotonic() - self._checked < CHECK_SECONDS:
                return self._changed
            self._checked = time.monotonic()
            if _fingerprint(self.root) != self._seen:
                self._changed = True
                log.warning("the files of Memories changed on disk since this daemon started: clients are told "
                            "to restart it")
            return self._changed


def _fingerprint(root: Path) -> frozenset[tuple[str, int, int, int]]:
    found: set[tuple[str, int, int, int]] = set()
    stack = [str(root)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        stack.append(entry.path)
                elif entry.name.endswith(WATCHED):
                    st = entry.stat()
                    found.add((entry.path, st.st_size, st.st_mtime_ns, st.st_ino))
            except OSError:
                found.add((entry.path, -1, -1, -1))  # gone while looking: a change too
    return frozenset(found)
