"""Backups of one vault: a verified copy named after the vault and the UTC time, and rotation.

A backup is a vault file itself (still only ciphertext), copied with the online backup API
(filecopy.py) into a hidden partial file, verified there (verify.py: structure and digests
always, every record's AEAD and the keyed manifest when the vault's keys are at hand), and
only then given its final name: `<vault name>-<YYYYMMDDTHHMMSSZ>.mvault`. Rotation keeps the
newest N backups of the same vault (same name stem *and* vault id in the header) and never
touches a file it cannot identify.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..errors import ErrorCode, MemoriesError, NotFoundError, VaultError
from ..filenames import safe_stem
from ..files import make_private_folder
from ..i18n import msg
from ..serial import Jsonable
from ..testhooks import pause_point
from .filecopy import copy_database, install, partial_path, remove_stale_partials, write_error
from .header import read_header
from .keys import VaultKeys
from .verify import FileCheck, check_vault_file

BACKUP_SUFFIX = ".mvault"
STAMP = "%Y%m%dT%H%M%SZ"
_NAME = re.compile(r"^(?P<stem>.+)-(?P<stamp>\d{8}T\d{6}Z)(?:-(?P<n>\d+))?\.mvault$")


@dataclass(frozen=True)
class BackupProgress(Jsonable):
    stage: str  # "copy" (pages) or "verify" (record revisions)
    done: int
    total: int


@dataclass(frozen=True)
class BackupFile:
    path: Path
    taken: datetime  # UTC, from the name


@dataclass(frozen=True)
class BackupDone:
    path: Path
    check: FileCheck
    removed: list[Path]  # older backups rotated away


def backup_stem(vault_name: str) -> str:
    return safe_stem(vault_name, fallback="vault", max_bytes=80)


def backups_of(folder: Path, vault_id: str, vault_name: str) -> list[BackupFile]:
    """This vault's backups in `folder`, oldest first: our name pattern with this vault's stem,
    and a readable header naming this vault id (anything else is never listed, so never removed)."""
    stem = backup_stem(vault_name)
    found: list[tuple[datetime, int, Path]] = []
    try:
        paths = list(folder.iterdir())
    except OSError:
        return []
    for path in paths:
        match = _NAME.match(path.name)
        if match is None or match["stem"] != stem or not path.is_file():
            continue
        try:
            if read_header(path).vault_id != vault_id:
                continue
        except (MemoriesError, OSError):
            continue
        taken = datetime.strptime(match["stamp"], STAMP).replace(tzinfo=UTC)
        found.append((taken, int(match["n"] or 1), path))  # same second: -2, -3 … came later
    return [BackupFile(path, taken) for taken, _n, path in sorted(found)]


def newest_backup(folder: Path, vault_id: str, vault_name: str) -> BackupFile | None:
    found = backups_of(folder, vault_id, vault_name)
    return found[-1] if found else None


def prepare_folder(folder: Path) -> None:
    """The backup folder: created (0700) when missing; a file or an unwritable folder is a
    clear error before any copying starts."""
    try:
        make_private_folder(
            folder, is_a_file=msg("{folder} is a file, not a folder; choose a folder for the backups.", folder=folder),
            inside_a_file=msg("{folder} lies inside a file, not a folder; choose a folder for the backups.",
                              folder=folder))
    except OSError as exc:
        raise write_error(folder / "x", exc) from None


def check_space(source: Path, folder: Path) -> None:
    """Refuse before copying when the folder's file system has less room than the copy needs."""
    need = sum(_size(Path(str(source) + extra)) for extra in ("", "-wal"))
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return
    if free < need:
        raise VaultError(msg("Not enough space in {folder}: the backup needs about {need:,} bytes and {free:,} are "
                             "free. Nothing was written.", folder=folder, need=need, free=free), code=ErrorCode.DISK_FULL)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def take_backup(source: Path, folder: Path, vault_name: str, keys: VaultKeys | None, *, keep: int | None = None,
                progress: Callable[[BackupProgress], None] | None = None, cancel: threading.Event | None = None,
                now: datetime | None = None, label: str = "") -> BackupDone:
    """Copy, verify and name one backup of the vault file `source`; then rotate to `keep`.
    A `label` goes after the time (`…-before-restore`); rotation never removes labelled copies."""
    if not source.is_file():
        raise NotFoundError(msg("Vault file {source} does not exist.", source=source))
    prepare_folder(folder)
    remove_stale_partials(folder)
    check_space(source, folder)
    when = (now or datetime.now(UTC)).astimezone(UTC)
    base = f"{backup_stem(vault_name)}-{when.strftime(STAMP)}" + (f"-{label}" if label else "")
    same_second = re.compile(re.escape(base) + r"(?:-(\d+))?" + re.escape(BACKUP_SUFFIX))
    numbers = [int(m[1] or 1) for p in folder.iterdir() if (m := same_second.fullmatch(p.name))]
    # within one second: a number above the highest, so names sort in the order they were taken
    stem = f"{base}-{max(numbers) + 1}" if numbers else base
    final = folder / f"{stem}{BACKUP_SUFFIX}"
    partial = partial_path(folder, final.name)

    def report(stage: str) -> Callable[[int, int], None]:
        def step(done: int, total: int) -> None:
            if progress is not None:
                progress(BackupProgress(stage, done, total))
            if stage == "copy" and 0 < done < total:
                pause_point("backup-mid-copy")  # crash tests kill -9 here (testhooks)

        return step

    try:
        copy_database(source, partial, progress=report("copy"), cancel=cancel)
        check = check_vault_file(partial, keys, progress=report("verify"), cancel=cancel)
        install(partial, final)
    except BaseException:
        for extra in ("", "-journal"):
            with contextlib.suppress(OSError):
                Path(str(partial) + extra).unlink()
        raise
    check = FileCheck(**{**check.__dict__, "path": final})
    removed = rotate(folder, check.header.vault_id, vault_name, keep, final) if keep else []
    return BackupDone(final, check, removed)


def rotate(folder: Path, vault_id: str, vault_name: str, keep: int, newest: Path) -> list[Path]:
    """Remove this vault's oldest backups so `keep` remain (the one just made always stays)."""
    backups = [b for b in backups_of(folder, vault_id, vault_name) if b.path != newest]
    extra = len(backups) + 1 - keep
    removed: list[Path] = []
    for old in backups[:max(extra, 0)]:
        try:
            os.unlink(old.path)
        except OSError:
            continue
        removed.append(old.path)
    return removed
