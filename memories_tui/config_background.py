"""The settings of a resident engine's background work: backups on lock (`[backup]`), source
folders kept in step (`[sources]`) and sync (`[sync]`), each parsed and checked like the rest."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config_values import declared, parse_table, setting, table_value, text_value


@dataclass(frozen=True)
class BackupSettings:
    """`[backup]`: where `vault backup` writes (default <home>/backups), and how old the newest
    backup may get before the TUI or the resident engine takes one when a vault is locked."""

    dir: Path | None = setting(None, custom=True)
    every_hours: float | None = setting(None, lo=0.01, hi=24 * 365)  # None: no backup on lock
    keep: int | None = setting(None, lo=1, hi=10_000)  # backups kept per vault by rotation (None: all)


@dataclass(frozen=True)
class SourcesSettings:
    """`[sources]`: whether `source sync` removes the cards of files deleted from a source
    (default: they stay, marked "source gone", until `source sync --prune`)."""

    prune: bool = setting(False)
    watch: bool = setting(True)  # a resident engine (daemon, TUI) keeps unlocked vaults' sources in step
    debounce_seconds: float = setting(1.5, lo=0.05, hi=600)  # the longest a burst of changes is grouped
    rescan_seconds: float = setting(300.0, lo=5, hi=86_400)  # a full sync this often, for unreliable events


@dataclass(frozen=True)
class SyncSettings:
    """`[sync]`: a resident engine (daemon, TUI) syncs an unlocked vault that has a target every
    `every_minutes`, and seconds after a local change; `background = false` leaves it to `memories sync`."""

    every_minutes: float = setting(15.0, lo=0.5, hi=10_080)
    background: bool = setting(True)
    compact_after: int = setting(64, lo=0, hi=1_000_000)  # a snapshot once this many own bundles follow the last one (0: never)
    hold_days: float = setting(30.0, lo=0, hi=36_500)  # a device unseen this long no longer holds back deleting (0: never stops)
    device_name: str | None = setting(None)  # how `sync devices` on the others lists this one (None: the host name)


def parse_backup(value: Any, path: Path) -> BackupSettings:
    t = table_value(value, "backup", set(declared(BackupSettings)))
    folder = None
    if "dir" in t:
        folder = Path(text_value(t["dir"], "backup.dir")).expanduser()
        if not folder.is_absolute():
            folder = (path.parent / folder).resolve()
    return parse_table(BackupSettings, t, "backup", dir=folder)
