"""Typed values that cross the engine boundary (results, reports, progress).

Front ends read these and never see a `dict[str, Any]`. Each is the one definition of its
JSON: `to_json()` is what `--json` prints, `to_wire()` / `from_json()` what the resident engine
sends and reads back (serial.py). Search, record, model and progress types are defined beside
the code that makes them; the package (engine/__init__.py) exports them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..i18n import Message, localized
from ..serial import Jsonable, json_meta
from ..vault.header import VaultProblem
from ..vocabulary import IngestStatus

__all__ = ["CacheFigures", "HomeReport", "IngestProgress", "IngestResult", "StatusReport", "VaultInfo", "VaultScan"]


@dataclass(frozen=True)
class VaultInfo(Jsonable):
    vault_id: str
    name: str
    path: Path = field(metadata=json_meta(wire_only=True))
    record_count: int = field(default=0, metadata=json_meta(name="records"))  # readable without the passphrase


@dataclass(frozen=True)
class VaultScan(Jsonable):
    """`vault list`: the vaults, and the `*.mvault` files that are not usable vaults."""

    vaults: list[VaultInfo]
    problems: list[VaultProblem]


@dataclass(frozen=True)
class HomeReport(Jsonable):
    """`memories init`: where the home and config are, and whether the config was written now."""

    home: Path
    config: Path
    config_created: bool


@dataclass(frozen=True)
class IngestProgress(Jsonable):
    stage: str  # "read" (a file was checked) or "written" (the batch is stored)
    done: int
    total: int
    path: str = ""  # the file just checked ("read"), as the user would name it


@dataclass(frozen=True)
class IngestResult(Jsonable):
    file: str
    id: str | None
    revision: int | None
    status: IngestStatus  # "skipped": found in a folder, not ingested (see `reason`)
    chunks: int
    title: str = ""
    reason: str = field(default="", metadata=json_meta(omit=lambda r: not r.reason))  # why a file was skipped


@dataclass(frozen=True)
class CacheFigures(Jsonable):
    """Index cache limits, or their current use."""

    chunks: int
    source_mib: float
    vector_mib: float
    cached_vaults: int


@dataclass(frozen=True)
class StatusReport(Jsonable):
    """Model, vector space, chunk counts and cache use against the limits (`rag status`)."""

    vault_id: str
    backend: str
    profile: str
    directory: str
    installed: bool
    pinned: bool | None = field(metadata=json_meta(omit=lambda r: not r.installed))  # None: no model installed
    model: str  # a description for people
    problem: str | None = field(metadata=json_meta(omit=lambda r: r.installed))  # why no model is usable
    vector_space: str | None
    dimensions: int | None
    max_tokens: int
    chunks: int
    records_indexed: int
    embedded: int
    missing: int
    truncated: int
    limits: CacheFigures
    usage: CacheFigures
    last_build: float | None
    last_build_seconds: float
    cache_repairs: list[str] = field(default_factory=list)  # damaged cache blobs dropped and rebuilt
    # the problem in a form each front end shows in its own language (not printed in --json)
    problem_localizable: dict[str, object] | None = field(default=None, compare=False, repr=False,
                                                          metadata=json_meta(wire_only=True))

    def problem_localized(self) -> str | None:
        """Why no model is usable, in the reader's language (`problem` stays English for JSON)."""
        shown = Message.from_wire(self.problem_localizable)
        return localized(shown) if shown is not None else self.problem
