"""Where a folder target may be: never the Memories home, a folder inside it, or a folder around
it (or around its vaults folder). A sync tool that carries the target would carry the vault files
too, and copying vault files between devices is the lossy copy that sync replaces (docs/sync.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ErrorCode, SyncError
from ..i18n import msg
from ..sync.targets import TargetSpec, spec_from

if TYPE_CHECKING:
    from .vaults import VaultFiles


def spec_outside_home(url: str, endpoint_url: str | None, cwd: Path | None, files: VaultFiles) -> TargetSpec:
    """The target as `spec_from` reads it; a folder that is, lies in or holds the home or its
    vaults folder (links and relative paths resolved) is refused with sync_bad_target."""
    spec = spec_from(url, endpoint_url, cwd=cwd)
    if spec.is_s3 or spec.is_webdav:
        return spec
    target = Path(spec.url).resolve()
    for shown in (files.home, files.folder):
        place = shown.resolve()
        if target == place:
            problem = msg("The sync folder {target} is the Memories folder {place}, where the vault files are; "
                          "they must stay out of the synced folder. Use an empty folder of its own, e.g. "
                          "~/Sync/memories.", target=spec.url, place=shown)
        elif target.is_relative_to(place):
            problem = msg("The sync folder {target} lies inside the Memories folder {place}, beside the vault "
                          "files; they must stay out of the synced folder. Use an empty folder of its own outside "
                          "it, e.g. ~/Sync/memories.", target=spec.url, place=shown)
        elif place.is_relative_to(target):
            problem = msg("The sync folder {target} contains the Memories folder {place}: a sync tool would copy "
                          "the vault files with it. Use an empty folder of its own outside it, e.g. "
                          "~/Sync/memories.", target=spec.url, place=shown)
        else:
            continue
        raise SyncError(problem, code=ErrorCode.SYNC_BAD_TARGET)
    return spec
