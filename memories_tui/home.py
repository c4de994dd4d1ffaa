"""Where a home and its config live: `--home`, else `$MEMORIES_HOME`, else the platform data dir.

Permissions: only folders this program creates are made 0700 (the home,
`vaults/`); an existing folder is never chmod-ed, whoever owns it. A new `config.toml` is 0600.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from .errors import HomeError, NotFoundError
from .i18n import msg


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    if home:
        path = Path(home).expanduser().resolve()
    elif os.environ.get("MEMORIES_HOME"):
        path = Path(os.environ["MEMORIES_HOME"]).expanduser().resolve()
    else:
        path = Path(platformdirs.user_data_dir("memories", appauthor=False))
    if path.exists() and not path.is_dir():
        raise HomeError(msg("The home {path} is not a folder; point --home (or $MEMORIES_HOME) at a folder.",
                            path=path))
    return path


def resolve_config(home: Path, config: str | os.PathLike[str] | None = None) -> Path:
    if config:
        return Path(config).expanduser().resolve()
    return home / "config.toml"


def locate(home: str | os.PathLike[str] | None = None,
           config: str | os.PathLike[str] | None = None) -> tuple[Path, Path]:
    """The home and config file `Engine.open` uses for these arguments (a config named but
    missing is an error), found without opening an engine."""
    home_path = resolve_home(home)
    config_path = resolve_config(home_path, config)
    if config is not None and not config_path.exists():
        raise NotFoundError(msg("Config file {config_path} does not exist.", config_path=config_path))
    return home_path, config_path


def ensure_private_dir(path: Path) -> bool:
    """Create `path` (and missing parents) if needed; a folder created here gets 0700, an
    existing one is left exactly as it is. Returns whether it was created."""
    if path.is_dir():
        return False
    if path.exists() or path.is_symlink():
        raise HomeError(msg("{path} exists but is not a folder; move it away or choose another --home.", path=path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.mkdir(mode=0o700)
        os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask
    except FileExistsError:
        if not path.is_dir():
            raise HomeError(msg("{path} exists but is not a folder; move it away or choose another --home.",
                                path=path)) from None
        return False
    except OSError as exc:
        raise HomeError(msg("Cannot create {path}: {strerror}.", path=path, strerror=exc.strerror)) from None
    return True


def write_new_private_file(path: Path, text: str) -> bool:
    """Write `text` to a new file with mode 0600; never touches an existing file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    except FileExistsError:
        return False
    except OSError as exc:
        raise HomeError(msg("Cannot create {path}: {strerror}.", path=path, strerror=exc.strerror)) from None
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    return True
