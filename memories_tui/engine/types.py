"""Typed values that cross the engine boundary (results, reports, progress).

Front ends read these and never see a `dict[str, Any]`; `to_json()` is the `--json` shape
(the CLI prints it, the MCP server will return it). Search, record, model and progress types
are defined beside the code that makes them; the package (engine/__init__.py) exports them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..vault.header import VaultProblem

__all__ = ["CacheFigures", "HomeReport", "IngestProgress", "IngestResult", "StatusReport", "VaultInfo", "VaultScan"]


@dataclass(frozen=True)
class VaultInfo:
    vault_id: str
    name: str
    path: Path
    record_count: int = 0  # filled by list_vaults (readable without the passphrase)

    def to_json(self, device_only: bool | None = None) -> dict[str, object]:
        out: dict[str, object] = {"vault_id": self.vault_id, "name": self.name, "records": self.record_count}
        if device_only is not None:
            out["device_only"] = device_only
        return out


@dataclass(frozen=True)
class VaultScan:
    """`vault list`: the vaults, and the `*.mvault` files that are not usable vaults."""

    vaults: list[VaultInfo]
    problems: list[VaultProblem]


@dataclass(frozen=True)
class HomeReport:
    """`memories init`: where the home and config are, and whether the config was written now."""

    home: Path
    config: Path
    config_created: bool

    def to_json(self) -> dict[str, object]:
        return {"home": str(self.home), "config": str(self.config), "config_created": self.config_created}


@dataclass(frozen=True)
class IngestProgress:
    stage: str  # "read" (a file was checked) or "written" (the batch is stored)
    done: int
    total: int


@dataclass(frozen=True)
class IngestResult:
    file: str
    id: str | None
    revision: int | None
    status: str  # created | updated | unchanged
    chunks: int
    title: str = ""

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "id": self.id, "revision": self.revision, "status": self.status,
                "chunks": self.chunks, "title": self.title}


@dataclass(frozen=True)
class CacheFigures:
    """Index cache limits, or their current use (R-CACHE-2)."""

    chunks: int
    source_mib: float
    vector_mib: float
    cached_vaults: int

    def to_json(self) -> dict[str, object]:
        return {"chunks": self.chunks, "source_mib": self.source_mib, "vector_mib": self.vector_mib,
                "cached_vaults": self.cached_vaults}


@dataclass(frozen=True)
class StatusReport:
    """R-EMB-5: model, vector space, chunk counts and cache use against the limits."""

    vault_id: str
    backend: str
    profile: str
    directory: str
    installed: bool
    model: str  # a description for people
    pinned: bool | None  # None when no model is installed
    problem: str | None  # why no model is usable, when none is
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

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"vault_id": self.vault_id, "backend": self.backend, "profile": self.profile,
                                  "directory": self.directory, "installed": self.installed}
        if self.installed:
            out.update(pinned=self.pinned, model=self.model)
        else:
            out.update(model=self.model, problem=self.problem)
        out.update(vector_space=self.vector_space, dimensions=self.dimensions, max_tokens=self.max_tokens,
                   chunks=self.chunks, records_indexed=self.records_indexed, embedded=self.embedded,
                   missing=self.missing, truncated=self.truncated, limits=self.limits.to_json(),
                   usage=self.usage.to_json(), last_build=self.last_build,
                   last_build_seconds=self.last_build_seconds, cache_repairs=list(self.cache_repairs))
        return out
