"""Registered source folders: kept in the vault's encrypted settings, one list per home.

A folder path means something only on the machine that named it, so each home keeps its
own list (keyed by the home's absolute path) inside the vault: the folder names never sit in
plain text on disk, and a copy of the vault opened in another home starts with no sources.
"""

from __future__ import annotations

import fnmatch
import secrets
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ErrorCode, InputRefusedError, NotFoundError
from ..i18n import msg
from ..serial import Jsonable
from .folders import shown

if TYPE_CHECKING:
    from ..vault.store import UnlockedVault

SETTINGS_KEY = "sources"
# left out of every source besides dot-names (which the folder walk already leaves out)
NOISE_FOLDERS = frozenset({"node_modules", "__pycache__", "_resources"})


@dataclass(frozen=True)
class SourceSpec(Jsonable):
    id: str
    path: str  # absolute folder
    globs: list[str] = field(default_factory=list)  # files kept (all text files when empty)
    excludes: list[str] = field(default_factory=list)
    added: str = ""

    def wants(self, rel: str) -> bool:
        """Whether the file at `rel` (POSIX, under the folder) belongs to this source."""
        if any(p in NOISE_FOLDERS for p in rel.split("/")[:-1]):
            return False
        if self.globs and not any(_match(rel, g) for g in self.globs):
            return False
        return not any(_match(rel, g) for g in self.excludes)


def _match(rel: str, pattern: str) -> bool:
    """`*.md` matches at any depth (as `*` crosses `/`); `notes/*` matches under notes/."""
    return fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], pattern)


def home_key(home: Path) -> str:
    return unicodedata.normalize("NFC", str(home.resolve()))


def load_sources(vault: UnlockedVault, home: Path) -> list[SourceSpec]:
    table = vault.settings().get(SETTINGS_KEY, {})
    rows = table.get(home_key(home), []) if isinstance(table, dict) else []
    return [SourceSpec.from_json(row) for row in rows if isinstance(row, dict)]


def _save(vault: UnlockedVault, home: Path, sources: list[SourceSpec]) -> None:
    settings = vault.settings()
    found = settings.get(SETTINGS_KEY)
    table: dict[str, Any] = found if isinstance(found, dict) else {}
    table[home_key(home)] = [s.to_json() for s in sources]
    settings[SETTINGS_KEY] = table
    vault.set_settings(settings)


def add_source(vault: UnlockedVault, home: Path, folder: Path, globs: list[str], excludes: list[str],
               stamp: str, same_as: Callable[[Path], str | None] | None = None) -> SourceSpec:
    """Register `folder` (refused when it is not a folder, or is already a source or inside one).
    `same_as(folder)` names the source of another device that keeps this folder's notes already:
    this one takes its id, so both keep the same cards in step (source_elsewhere.py)."""
    try:
        where = folder.expanduser().resolve(strict=True)
    except (OSError, RuntimeError):
        raise InputRefusedError(msg("{path} does not exist or cannot be opened.", path=shown(folder)),
                                code=ErrorCode.NOT_FOUND) from None
    if not where.is_dir():
        raise InputRefusedError(msg("{path} is not a folder; a source is a folder of notes.", path=shown(folder)),
                                code=ErrorCode.UNSUPPORTED_FILE)
    try:
        text = str(where)
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputRefusedError(msg("{path}: the folder's name is not valid UTF-8; rename it and try again.",
                                    path=shown(folder)), code=ErrorCode.BAD_FILE_NAME) from None
    sources = load_sources(vault, home)
    for old in sources:
        if where == Path(old.path) or Path(old.path) in where.parents or where in Path(old.path).parents:
            raise InputRefusedError(msg("{path} overlaps source {id} ({other}); a file belongs to one source.",
                                        path=shown(folder), id=old.id, other=old.path), code=ErrorCode.SOURCE_EXISTS)
    shared = same_as(where) if same_as is not None else None
    spec = SourceSpec(id=shared or secrets.token_hex(4), path=text, globs=list(globs), excludes=list(excludes), added=stamp)
    _save(vault, home, [*sources, spec])
    return spec


def remove_source(vault: UnlockedVault, home: Path, ref: str) -> SourceSpec:
    sources = load_sources(vault, home)
    spec = find_source(sources, ref)
    _save(vault, home, [s for s in sources if s.id != spec.id])
    return spec


def find_source(sources: list[SourceSpec], ref: str) -> SourceSpec:
    """A source by id, or by its folder as typed."""
    for spec in sources:
        if ref == spec.id:
            return spec
    try:
        where = str(Path(ref).expanduser().resolve())
    except (OSError, RuntimeError):
        where = ref
    for spec in sources:
        if where == spec.path:
            return spec
    raise NotFoundError(msg("No source {ref} in this vault on this home; `memories source list` shows them.",
                            ref=ref))
