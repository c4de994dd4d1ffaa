"""The vault files in a home folder: list, resolve by id or name, create, change passphrase.

Nothing here needs an unlocked vault; headers and record counts are readable without the
passphrase (the device-only flag is not: it is encrypted). Files are opened read-only.
"""

from __future__ import annotations

import os
import time
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ErrorCode, InputRefusedError, NotFoundError, UsageError
from ..home import ensure_private_dir, write_new_private_file
from ..i18n import msg
from ..vault import header as headers
from .types import HomeReport, VaultInfo, VaultScan

if TYPE_CHECKING:
    from ..vault.anchor import StateWatcher

VAULT_SUFFIX = ".mvault"


class VaultFiles:
    def __init__(self, home: Path, config_path: Path) -> None:
        self.home = home
        self.config_path = config_path

    @property
    def folder(self) -> Path:
        return self.home / "vaults"

    def init_home(self) -> HomeReport:
        """Create the home and a commented config; never overwrite an existing config and
        never chmod an existing folder (only folders created here get 0700; config 0600)."""
        ensure_private_dir(self.home)
        ensure_private_dir(self.folder)
        created = False
        if not self.config_path.exists():
            ensure_private_dir(self.config_path.parent)
            text = resources.files("memories_tui").joinpath("config.example.toml").read_text(encoding="utf-8")
            created = write_new_private_file(self.config_path, text)
        return HomeReport(self.home, self.config_path, created)

    def scan(self) -> VaultScan:
        """The vaults, read-only, plus the `*.mvault` files that are not vaults: one bad file
        never hides the others and is never modified."""
        found, problems = headers.scan_folder(self.folder, VAULT_SUFFIX)
        vaults = [VaultInfo(header.vault_id, header.name, path, count) for path, header, count in found]
        return VaultScan(sorted(vaults, key=lambda v: v.name.casefold()), problems)

    def list(self) -> list[VaultInfo]:
        return self.scan().vaults

    def resolve(self, ref: str) -> VaultInfo:
        """A VAULT_ID, or a unique vault name."""
        path = self.folder / f"{ref}{VAULT_SUFFIX}"
        if ref and "/" not in ref and path.is_file():
            header = headers.read_header(path)
            if header.vault_id == ref:  # else a copy under another file name: listed as a problem, not used
                return VaultInfo(header.vault_id, header.name, path)
        vaults = self.list()
        by_id = [v for v in vaults if v.vault_id == ref]
        if by_id:
            return by_id[0]
        matches = [v for v in vaults if v.name == ref]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            ids = ", ".join(v.vault_id for v in matches)
            raise UsageError(msg("Several vaults are named {ref!r} ({ids}); use the VAULT_ID instead.",
                                 ref=ref, ids=ids))
        raise NotFoundError(msg("No vault {ref!r} in {home}. `memories vault list` shows the vaults.",
                                ref=ref, home=self.home))

    def check_new_name(self, name: str) -> str:
        """A name for a new vault: 1–200 printable characters, not taken in this home."""
        name = name.strip()
        if not name or len(name) > 200 or any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF for c in name):
            raise InputRefusedError(msg("A vault name must be 1–200 printable characters."), code=ErrorCode.BAD_NAME)
        scan = self.scan()
        if any(v.name == name for v in scan.vaults):
            raise InputRefusedError(msg("A vault named {name!r} already exists; pick another name.", name=name), code=ErrorCode.VAULT_EXISTS)
        # A VAULT_ID (or any vault file's name) is looked up before names: a vault named like
        # one could never be reached by its name.
        taken = {v.vault_id for v in scan.vaults} | {v.path.name[: -len(VAULT_SUFFIX)] for v in scan.vaults} \
            | {p.file[: -len(VAULT_SUFFIX)] for p in scan.problems}
        if name in taken:
            raise InputRefusedError(msg("{name!r} is the VAULT_ID (file name) of an existing vault; a name "
                                        "must differ from every VAULT_ID, or it could never be reached by "
                                        "name. Pick another name.", name=name),
                                    code=ErrorCode.VAULT_EXISTS)
        return name

    def create(self, name: str, passphrase: str, *, device_only: bool = False) -> VaultInfo:
        name = self.check_new_name(name)
        self.init_home()
        tmp = self.folder / f".new-{os.getpid()}-{time.monotonic_ns()}{VAULT_SUFFIX}"
        from ..vault.store import create_vault_file  # listing vaults never loads the store

        header = create_vault_file(tmp, name, passphrase, device_only=device_only)
        final = self.folder / f"{header.vault_id}{VAULT_SUFFIX}"
        os.replace(tmp, final)
        return VaultInfo(header.vault_id, name, final)

    def change_passphrase(self, ref: str, old: str, new: str, watcher: StateWatcher | None = None) -> None:
        from ..vault.store import UnlockedVault

        info = self.resolve(ref)
        vault = UnlockedVault(info.path, old, watcher=watcher)
        try:
            vault.change_passphrase(old, new)
        finally:
            vault.close()
