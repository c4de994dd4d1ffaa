"""Backups and restore for the engine: which folder, which keys, and the typed reports.

A backup of an unlocked vault is verified with its keys (every record's AEAD and the keyed
manifest); of a locked one, by structure and digests only, and the report says which.
`backup_if_due` is what a long-running front end (the TUI, the resident engine) calls just
before it locks a vault: it takes a backup when `[backup] every_hours` is set and the newest
one is older than that.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..i18n import msg
from ..serial import Jsonable, json_meta
from ..vault.backups import BackupProgress

if TYPE_CHECKING:
    from ..vault.restore import RestoreDone
    from .parts import EngineParts

BackupProgressFn = Callable[[BackupProgress], None]


@dataclass(frozen=True)
class BackupReport(Jsonable):
    vault_id: str
    name: str
    path: Path
    bytes: int
    records: int
    revisions: int
    verified: str  # "full" (AEAD + keyed manifest) or "structure" (locked vault: digests and SQLite check)
    state: str  # the vault state the copy holds, e.g. "change 12 (manifest 3fa0…)"
    removed: list[Path] = field(default_factory=list)  # older backups rotated away
    seconds: float = field(default=0.0, metadata=json_meta(round=3))


@dataclass(frozen=True)
class RestoreReport(Jsonable):
    vault_id: str
    name: str
    path: Path
    source: Path
    replaced: bool
    revisions_lost: int
    kept_copy: Path | None
    records: int
    revisions: int
    state: str


def backup_folder(engine: EngineParts, folder: Path | None = None) -> Path:
    return Path(folder).expanduser() if folder is not None else (engine.config.backup.dir or engine.home / "backups")


def backup_vault(engine: EngineParts, ref: str, folder: Path | None = None, *, keep: int | None = None,
                 progress: BackupProgressFn | None = None, cancel: threading.Event | None = None) -> BackupReport:
    from ..vault.backups import take_backup

    if keep is not None and keep < 1:
        raise UsageError(msg("--keep needs at least 1 (the backup just taken is always kept)."))
    info = engine._files.resolve(ref)
    entry = engine._state.vaults.peek(info.vault_id)
    keys = entry.vault.keys if entry is not None else None
    started = time.perf_counter()
    done = take_backup(info.path, backup_folder(engine, folder), info.name, keys,
                       keep=keep if keep is not None else engine.config.backup.keep, progress=progress, cancel=cancel)
    check = done.check
    return BackupReport(info.vault_id, info.name, done.path, done.path.stat().st_size, check.records,
                        check.revisions, "full" if check.keyed else "structure", check.state, done.removed,
                        time.perf_counter() - started)


def backup_if_due(engine: EngineParts, vault_id: str, *, progress: BackupProgressFn | None = None,
                  now: datetime | None = None) -> BackupReport | None:
    from ..vault.backups import newest_backup

    hours = engine.config.backup.every_hours
    if hours is None:
        return None
    info = engine._files.resolve(vault_id)
    newest = newest_backup(backup_folder(engine), info.vault_id, info.name)
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    if newest is not None and moment - newest.taken < timedelta(hours=hours):
        return None
    return backup_vault(engine, info.vault_id, progress=progress)


def restore_vault(engine: EngineParts, file: Path, passphrase: str, *, as_name: str | None = None, force: bool = False,
                  progress: BackupProgressFn | None = None, cancel: threading.Event | None = None,
                  before_replace: Callable[[str], None] | None = None) -> RestoreReport:
    from ..vault.restore import restore_backup

    if as_name is not None:
        as_name = engine._files.check_new_name(as_name)
    scan = engine._files.scan()
    taken = {v.name: v.vault_id for v in scan.vaults}
    engine._files.init_home()
    done: RestoreDone = restore_backup(Path(file).expanduser(), engine._files.folder, passphrase,
                                       anchors=engine.anchors, backups=backup_folder(engine), as_name=as_name,
                                       force=force, taken_names=taken, progress=progress, cancel=cancel,
                                       before_replace=before_replace or (lambda vid: _lock_if_open(engine, vid)))
    check = done.check
    return RestoreReport(done.header.vault_id, done.header.name, done.path, Path(file), done.replaced,
                         done.revisions_lost, done.kept_copy, check.records, check.revisions, check.state)


def _lock_if_open(engine: EngineParts, vault_id: str) -> None:
    if engine.is_unlocked(vault_id):
        engine.lock(vault_id)
