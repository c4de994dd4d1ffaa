"""Restoring a backup into a home's vaults folder, without ever losing the vault it replaces.

1. The file is copied (online backup API) to a hidden partial file beside the vaults, and
   that copy is verified in full with the passphrase: a truncated, tampered, foreign or
   non-vault file is refused before anything in the home changes.
2. With `as_name`, the copy becomes a new vault (new id, re-encrypted, clone.py).
3. Otherwise it takes its own id. A vault with that id already in the home is replaced only
   with `force`, and the refusal says how many of its revisions the backup lacks. A replaced
   vault is first backed up into the backups folder; the replacement itself is one SQLite
   transaction into the live file (`copy_into`), so other processes see the old vault or the
   new one, and a crash part-way leaves the old one.
4. The home's rollback anchor moves to the restored state (a deliberate restore is not a
   rollback), and egress-log entries the replaced vault made after the backup are kept: what
   left the machine is not forgotten by going back to an older copy.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..errors import ErrorCode, MemoriesError, VaultError
from ..i18n import msg
from ..testhooks import pause_point
from .anchor import AnchorBook
from .backups import BackupProgress, take_backup
from .clone import clone_vault
from .egress_log import egress_after, keep_egress, last_seq
from .filecopy import copy_database, copy_into, install, partial_path, remove_stale_partials
from .header import Header, connect_readonly, connect_readwrite, read_header, sqlite_errors
from .keys import VaultKeys, open_keys
from .verify import FileCheck, check_vault_file


@dataclass(frozen=True)
class RestoreDone:
    path: Path  # the vault file in the home
    header: Header  # the restored vault's header (its id is new with `as_name`)
    check: FileCheck  # the verified backup
    replaced: bool  # an existing vault with this id was replaced
    revisions_lost: int  # revisions the replaced vault had that the backup lacks
    kept_copy: Path | None  # where the replaced vault was saved first


def lost_revisions(current: Path, backup: Path) -> int:
    """Record revisions in `current` that `backup` does not hold byte for byte (read-only, no key)."""
    def rows(path: Path) -> set[tuple[object, object, object]]:
        conn = connect_readonly(path)
        try:
            with sqlite_errors(path):
                return set(conn.execute("SELECT record_id, revision, digest FROM records").fetchall())
        finally:
            conn.close()

    return len(rows(current) - rows(backup))


def restore_backup(file: Path, vaults: Path, passphrase: str, *, anchors: AnchorBook, backups: Path,
                   as_name: str | None = None, force: bool = False, taken_names: dict[str, str] | None = None,
                   progress: Callable[[BackupProgress], None] | None = None,
                   cancel: threading.Event | None = None,
                   before_replace: Callable[[str], None] | None = None) -> RestoreDone:
    """See the module docstring. `taken_names` maps vault names already in the home to their
    ids; `before_replace(vault_id)` runs just before a vault is replaced (the engine locks its
    own copy of it there)."""
    taken_names = taken_names or {}
    vaults.mkdir(mode=0o700, parents=True, exist_ok=True)
    remove_stale_partials(vaults)
    staged = partial_path(vaults, f"restore-{secrets.token_hex(4)}")

    def report(stage: str) -> Callable[[int, int], None]:
        return lambda done, total: progress(BackupProgress(stage, done, total)) if progress else None

    try:
        copy_database(file, staged, progress=report("copy"), cancel=cancel)
        keys = open_keys(read_header(staged), passphrase)
        try:
            check = check_vault_file(staged, keys, progress=report("verify"), cancel=cancel)
            if as_name is not None:
                return _restore_as(staged, check, keys, vaults, anchors, as_name, passphrase)
            return _restore_in_home(staged, check, keys, anchors, vaults=vaults, backups=backups, force=force,
                                    taken_names=taken_names, before_replace=before_replace, report=report,
                                    cancel=cancel)
        finally:
            keys.wipe()
    finally:
        for extra in ("", "-journal", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                Path(str(staged) + extra).unlink()


def _restore_in_home(staged: Path, check: FileCheck, keys: VaultKeys, anchors: AnchorBook, *, vaults: Path,
                     backups: Path, force: bool, taken_names: dict[str, str],
                     before_replace: Callable[[str], None] | None,
                     report: Callable[[str], Callable[[int, int], None]],
                     cancel: threading.Event | None) -> RestoreDone:
    """The backup as the vault it was: installed when the home lacks it, else put in place of
    the vault (only with `force`; the current file kept first)."""
    header = check.header
    clash = taken_names.get(header.name)
    if clash is not None and clash != header.vault_id:
        raise VaultError(msg("Another vault in this home is already named {name!r} ({clash}); restore this "
                             "backup beside it with --as NEW_NAME.", name=header.name, clash=clash), code=ErrorCode.VAULT_EXISTS)
    target = vaults / f"{header.vault_id}.mvault"
    if not target.exists():
        os.chmod(staged, 0o600)
        with anchors.locked():
            install(staged, target)
            anchors.write(keys, check.counter, check.manifest)
        return RestoreDone(target, header, check, False, 0, None)
    lost = lost_revisions(target, staged)
    if not force:
        raise VaultError(
            msg("Vault {name} ({vault_id}) is already in this home. Restoring this backup over it would "
                "lose {lost} revision(s) it holds that the backup does not. Nothing was changed; add "
                "--force to replace it (the current file is backed up first), or restore beside it with "
                "--as NEW_NAME.", name=header.name, vault_id=header.vault_id, lost=lost), code=ErrorCode.RESTORE_WOULD_REPLACE)
    if before_replace is not None:
        before_replace(header.vault_id)
    kept = _keep_copy(target, header.name, backups)
    _replace(staged, target, check, keys, anchors, report("replace"), cancel)
    return RestoreDone(target, header, check, True, lost, kept)


def _replace(staged: Path, target: Path, check: FileCheck, keys: VaultKeys, anchors: AnchorBook,
             report: Callable[[int, int], None], cancel: threading.Event | None) -> None:
    """Copy the backup into the live vault file in place, keeping what it sent out after the
    backup was taken, and move the rollback anchor with it."""
    with anchors.locked():
        live = connect_readwrite(target)
        try:
            pause_point("restore-before-copy")  # crash tests kill -9 here and mid-copy
            later = egress_after(live, target, last_seq(staged))
            copy_into(staged, live, target, progress=_pausing(report), cancel=cancel)
            keep_egress(live, target, later)
        finally:
            live.close()
        anchors.write(keys, check.counter, check.manifest)


def _pausing(report: Callable[[int, int], None]) -> Callable[[int, int], None]:
    def step(done: int, total: int) -> None:
        report(done, total)
        if 0 < done < total:
            pause_point("restore-mid-copy")

    return step


def _restore_as(staged: Path, check: FileCheck, keys: VaultKeys, vaults: Path, anchors: AnchorBook, name: str,
                passphrase: str) -> RestoreDone:
    tmp = vaults / f".clone-{os.getpid()}-{secrets.token_hex(4)}.mvault"
    try:
        header = clone_vault(staged, keys, tmp, name, passphrase)
        final = vaults / f"{header.vault_id}.mvault"
        clone_check = check_vault_file(tmp)
        new_keys = open_keys(header, passphrase)
        try:
            with anchors.locked():
                install(tmp, final)
                anchors.write(new_keys, clone_check.counter, clone_check.manifest)
        finally:
            new_keys.wipe()
    finally:
        for extra in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(OSError):
                Path(str(tmp) + extra).unlink()
    return RestoreDone(final, header, check, False, 0, None)


def _keep_copy(target: Path, name: str, backups: Path) -> Path:
    """Save the vault about to be replaced: a verified backup when it is sound, else its raw
    bytes (a damaged vault being replaced on purpose is still kept)."""
    try:
        return take_backup(target, backups, name, None, label="before-restore").path
    except VaultError as exc:
        if exc.code in (ErrorCode.DISK_FULL, ErrorCode.FOLDER_UNWRITABLE, ErrorCode.NOT_A_FOLDER, ErrorCode.WRITE_FAILED):
            raise
    except (MemoriesError, sqlite3.Error):
        pass
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    raw = backups / f".replaced-{target.stem}-{stamp}.mvault"
    try:
        for extra in ("", "-wal"):
            if Path(str(target) + extra).exists():
                shutil.copyfile(str(target) + extra, str(raw) + extra)
    except OSError as exc:
        raise VaultError(msg("Could not keep a copy of the vault being replaced ({strerror}); nothing was changed.",
                             strerror=exc.strerror), code=ErrorCode.WRITE_FAILED) from None
    return raw
