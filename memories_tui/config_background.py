"""The settings of a resident engine's background work: backups on lock (`[backup]`), source
folders kept in step (`[sources]`) and sync (`[sync]`), each parsed and checked like the rest."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config_values import int_value as _int
from .config_values import number_value as _num
from .config_values import table_value as _table
from .config_values import text_value as _str
from .errors import ConfigError
from .i18n import msg


@dataclass(frozen=True)
class BackupSettings:
    """`[backup]`: where `vault backup` writes (default <home>/backups), and how old the newest
    backup may get before the TUI or the resident engine takes one when a vault is locked."""

    dir: Path | None = None
    every_hours: float | None = None  # None: no backup on lock
    keep: int | None = None  # backups kept per vault by rotation (None: all)


@dataclass(frozen=True)
class SourcesSettings:
    """`[sources]`: whether `source sync` removes the cards of files deleted from a source
    (default: they stay, marked "source gone", until `source sync --prune`)."""

    prune: bool = False
    watch: bool = True  # a resident engine (daemon, TUI) keeps unlocked vaults' sources in step
    debounce_seconds: float = 1.5  # the longest a burst of changes is grouped before it is synced
    rescan_seconds: float = 300.0  # a full sync this often, for folders whose events are unreliable


@dataclass(frozen=True)
class SyncSettings:
    """`[sync]`: a resident engine (daemon, TUI) syncs an unlocked vault that has a target every
    `every_minutes`, and seconds after a local change; `background = false` leaves it to `memories sync`."""

    every_minutes: float = 15.0
    background: bool = True
    compact_after: int = 64  # a snapshot once this many own bundles follow the last one (0: never)


def parse_sync(value: Any) -> SyncSettings:
    t = _table(value, "sync", {"every_minutes", "background", "compact_after"})
    background = t.get("background", True)
    if not isinstance(background, bool):
        raise ConfigError(msg("sync.{key} must be true or false.", key="background"))
    return SyncSettings(every_minutes=_num(t.get("every_minutes", 15), "sync.every_minutes", 0.5, 10_080),
                        background=background,
                        compact_after=_int(t.get("compact_after", 64), "sync.compact_after", 0, 1_000_000))


def parse_sources(value: Any) -> SourcesSettings:
    t = _table(value, "sources", {"prune", "watch", "debounce_seconds", "rescan_seconds"})
    flags = {}
    for key in ("prune", "watch"):
        flags[key] = t.get(key, key == "watch")
        if not isinstance(flags[key], bool):
            raise ConfigError(msg("sources.{key} must be true or false.", key=key))
    return SourcesSettings(prune=flags["prune"], watch=flags["watch"],
                           debounce_seconds=_num(t.get("debounce_seconds", 1.5), "sources.debounce_seconds", 0.05, 600),
                           rescan_seconds=_num(t.get("rescan_seconds", 300), "sources.rescan_seconds", 5, 86_400))


def parse_backup(value: Any, path: Path) -> BackupSettings:
    t = _table(value, "backup", {"dir", "every_hours", "keep"})
    folder = None
    if "dir" in t:
        folder = Path(_str(t["dir"], "backup.dir")).expanduser()
        if not folder.is_absolute():
            folder = (path.parent / folder).resolve()
    every = _num(t["every_hours"], "backup.every_hours", 0.01, 24 * 365) if "every_hours" in t else None
    keep = _int(t["keep"], "backup.keep", 1, 10_000) if "keep" in t else None
    return BackupSettings(dir=folder, every_hours=every, keep=keep)
