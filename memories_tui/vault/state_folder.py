"""Where the second copy of the rollback anchors lives: outside the home.

Whatever puts an old home back (a sync tool, a restore of the home folder from a backup)
brings its old anchors with it. The platform's per-user state folder (`~/.local/state/memories`
on Linux; on macOS and Windows, where that folder is the default home, `memories-state` beside
it) is not part of the home, so it keeps the newer state. `MEMORIES_STATE_DIR` points it
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


def state_folder(home: Path) -> Path:
    """`MEMORIES_STATE_DIR`, else the platform's state folder, or a sibling of it where the
    home is that folder or inside it (on macOS and Windows it is the default home itself)."""
    chosen = os.environ.get(STATE_DIR_ENV, "").strip()
    if chosen:
        return Path(chosen).expanduser()
    base = Path(platformdirs.user_state_dir("memories", appauthor=False))
    home, real = home.resolve(), base.resolve()
    if home.is_relative_to(real):
        return base.with_name("memories-state")
    return base


def home_tag(home: Path) -> str:
    """Names this home's files in the state folder (the home's absolute path, hashed)."""
    return hashlib.sha256(os.fsencode(str(home.resolve()))).hexdigest()[:32]


def outside_store(home: Path) -> AnchorStore:
    return AnchorStore(state_folder(home) / "anchors", home_tag=home_tag(home))
