"""Remember the interface language a person picked (the TUI's language switch): `[ui] language`
in config.toml, written so every comment, key and blank line the file had stays as it was."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ..config import MAX_CONFIG_BYTES
from ..errors import ConfigError
from ..i18n import msg, normalize_setting


def save_language(config_path: Path, setting: str) -> None:
    """Set `[ui] language = setting` in the config file (created when missing), atomically.

    A file that is not UTF-8 TOML, too large or not a regular file is left alone: the error
    says so and nothing is written."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    setting = normalize_setting(setting)
    text = _read(config_path)
    try:
        document = tomlkit.parse(text)
        ui = document.get("ui")
        if ui is None:
            ui = tomlkit.table()
            document.append("ui", ui)
        if not isinstance(ui, dict):
            raise ConfigError(msg("[{name}] must be a table.", name="ui"))
        ui["language"] = setting
        updated = tomlkit.dumps(document)
    except (TOMLKitError, ValueError) as exc:
        raise ConfigError(msg("Config file {path} is not valid TOML: {reason}", path=config_path, reason=exc)) from None
    _write(config_path, updated)


def _read(path: Path) -> str:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise ConfigError(msg("Cannot read the config file: {reason}", reason=exc.strerror)) from None
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONFIG_BYTES:
        raise ConfigError(msg("Cannot change {path}: it is not a regular file of at most 1 MiB.", path=path))
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(msg("Config file {path} is not UTF-8 text.", path=path)) from None
    except OSError as exc:
        raise ConfigError(msg("Cannot read the config file: {reason}", reason=exc.strerror)) from None


def _write(path: Path, text: str) -> None:
    """Replace the file in one step with the permissions it had (new files: owner only)."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mode = 0o600
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise ConfigError(msg("Cannot write {path}: {reason}", path=path, reason=exc.strerror)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temp, mode)
        os.replace(temp, path)
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        raise ConfigError(msg("Cannot write {path}: {reason}", path=path, reason=exc.strerror)) from None
