"""Where the second copy of the rollback anchors lives: outside the home.

Whatever puts an old home back (a sync tool, a restore of the home folder from a backup)
brings its old anchors with it. The platform's per-user state folder (`~/.local/state/memories`
on Linux, `~/Library/Application Support/memories` on macOS, `%LOCALAPPDATA%\\memories` on
Windows) is not part of the home, so it keeps the newer state. `MEMORIES_STATE_DIR` points it
elsewhere (tests always do). Each home gets its own files there, named by a hash of the home's
path, so several homes holding the same vault never share one.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import platformdirs

from .anchor import AnchorStore

STATE_DIR_ENV = "MEMORIES_STATE_DIR"


def state_folder() -> Path:
    chosen = os.environ.get(STATE_DIR_ENV, "").strip()
    if chosen:
        return Path(chosen).expanduser()
    return Path(platformdirs.user_state_dir("memories", appauthor=False))


def home_tag(home: Path) -> str:
    """Names this home's files in the state folder (the home's absolute path, hashed)."""
    return hashlib.sha256(os.fsencode(str(home.resolve()))).hexdigest()[:32]


def outside_store(home: Path) -> AnchorStore:
    return AnchorStore(state_folder() / "anchors", home_tag=home_tag(home))
