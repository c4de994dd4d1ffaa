"""Where a home and its config live: `--home`, else `$MEMORIES_HOME`, else the platform data dir."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    if home:
        return Path(home).expanduser().resolve()
    env = os.environ.get("MEMORIES_HOME")
    if env:
        return Path(env).expanduser().resolve()
    return Path(platformdirs.user_data_dir("memories", appauthor=False))


def resolve_config(home: Path, config: str | os.PathLike[str] | None = None) -> Path:
    if config:
        return Path(config).expanduser().resolve()
    return home / "config.toml"
