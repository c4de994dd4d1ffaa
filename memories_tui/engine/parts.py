"""What the backup, restore and export helpers need of the engine, named as a Protocol so they
take it without importing the facade (engine/ imports run one way: facade → helpers)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..config import Config
    from ..vault.anchor import AnchorBook
    from .context import EngineState
    from .types import VaultInfo
    from .vaults import VaultFiles


class EngineParts(Protocol):
    home: Path
    config: Config
    _files: VaultFiles
    _state: EngineState

    @property
    def anchors(self) -> AnchorBook: ...

    def lock(self, vault_id: str | None = None) -> None: ...

    def is_unlocked(self, vault_id: str) -> bool: ...

    def unlock(self, ref: str, passphrase: str, *, accept_rollback: bool = False) -> VaultInfo: ...
