"""The engine's "keep and leave with your data" methods: backups, restore, rollback anchors,
the egress log and export. `Engine` inherits them (facade.py stays the one place front ends
build an engine); the work is done in backup_ops.py and the modules beside it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from ..vault.anchor import AnchorBook
    from .backup_ops import BackupProgressFn, BackupReport, RestoreReport
    from .egress_ops import EgressReport, VaultEgress
    from .export_ops import ExportProgressFn, ExportReport
    from .parts import EngineParts


class DataOperations:
    """Mixed into `Engine`; every method works on the engine's home and open vaults."""

    _anchor_book: AnchorBook | None = None

    def _engine(self) -> EngineParts:
        return cast("EngineParts", self)

    @property
    def anchors(self) -> AnchorBook:
        """This home's rollback anchors (`<home>/anchors`, and their copy in the per-user state
        folder outside the home), made on first use."""
        if self._anchor_book is None:
            from ..vault.anchor import AnchorBook
            from ..vault.state_folder import outside_store

            home = self._engine().home
            self._anchor_book = AnchorBook(home / "anchors", outside_store(home))
        return self._anchor_book

    def backup_vault(self, ref: str, folder: Path | None = None, *, keep: int | None = None,
                     progress: BackupProgressFn | None = None,
                     cancel: threading.Event | None = None) -> BackupReport:
        """A verified copy of the vault in `folder` (default `[backup] dir`, else <home>/backups),
        named `<vault name>-<UTC time>.mvault`; then only the newest `keep` are kept. Verified in
        full when the vault is unlocked here, by structure and digests otherwise."""
        from .backup_ops import backup_vault

        return backup_vault(self._engine(), ref, folder, keep=keep, progress=progress, cancel=cancel)

    def backup_if_due(self, vault_id: str, *, progress: BackupProgressFn | None = None,
                      now: datetime | None = None) -> BackupReport | None:
        """Call just before locking `vault_id` (TUI, resident engine): a backup when `[backup]
        every_hours` is set and the newest backup is older; None when none was due."""
        from .backup_ops import backup_if_due

        return backup_if_due(self._engine(), vault_id, progress=progress, now=now)

    def restore_vault(self, file: Path, passphrase: str, *, as_name: str | None = None, force: bool = False,
                      progress: BackupProgressFn | None = None, cancel: threading.Event | None = None,
                      before_replace: Callable[[str], None] | None = None) -> RestoreReport:
        """Verify the backup `file` with `passphrase`, then put it in this home: as a new vault
        named `as_name`, or under its own id (replacing an existing copy only with `force`;
        the refusal counts the revisions it would lose). Moves the rollback anchor. The vault
        about to be replaced is locked first (`before_replace(vault_id)` when the host has its
        own way to lock, as the resident engine does)."""
        from .backup_ops import restore_vault

        return restore_vault(self._engine(), file, passphrase, as_name=as_name, force=force, progress=progress,
                             cancel=cancel, before_replace=before_replace)

    def egress_hook(self, vault_id: str) -> VaultEgress:
        """What model services write to before sending this vault's content (egress_ops.py)."""
        from .egress_ops import VaultEgress

        state = self._engine()._state
        return VaultEgress(state.vaults.get(vault_id).vault, state.built_indexes)

    def egress_log(self, ref: str, since: str | None = None) -> EgressReport:
        """Every request that sent this vault's content out (oldest first), or those since
        `since` (a date, an ISO time, or an age like 24h / 7d): time, endpoint, purpose, the
        records, revisions and chunk hashes sent, bytes and outcome; never the content."""
        from .egress_ops import read_egress

        return read_egress(self._engine()._state.vaults.get(ref).vault, since)

    def export_vault(self, ref: str, folder: Path, *, include_excluded: bool = False, force: bool = False,
                     progress: ExportProgressFn | None = None,
                     cancel: threading.Event | None = None) -> ExportReport:
        """One Markdown file per current record (front matter + body) in `folder`, names safe on
        every OS; private, credential and asset records only with `include_excluded` (the front
        end asks first). A non-empty folder needs `force`; no existing file is ever replaced."""
        from .export_ops import export_vault

        return export_vault(self._engine()._state.context(ref), folder, include_excluded=include_excluded,
                            force=force, progress=progress, cancel=cancel)
