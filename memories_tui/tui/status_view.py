"""The status screen's sections for people: vault, index, model, limits, MCP.

Built from the engine's status plus the vault's own facts; units everywhere (chunks, MiB, s),
usage beside its limit, and problems in full (wrapped, never cut). The raw key dump stays in
`memories rag status --json`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .text import tilde, tilde_paths


@dataclass(frozen=True)
class Row:
    label: str
    value: str
    warn: bool = False


@dataclass(frozen=True)
class Section:
    title: str
    rows: tuple[Row, ...]


def _get(data: Any, key: str, default: Any = None) -> Any:
    if isinstance(data, dict):
        return data.get(key, default)
    return getattr(data, key, default)


def _share(used: float, limit: float, unit: str, digits: int = 0) -> str:
    share = f" ({used / limit:.0%})" if limit else ""
    if digits:
        return f"{used:,.{digits}f} of {limit:,.{digits}f} {unit}{share}"
    return f"{used:,.0f} of {limit:,.0f} {unit}{share}"


def _when(stamp: Any) -> str:
    if not isinstance(stamp, int | float) or stamp <= 0:
        return "not built yet"
    return datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M:%S")


def sections(*, name: str, vault_id: str, device_only: bool, status: Any, home: str, config: str,
             idle_lock_minutes: float, mcp_servers: str = "none",
             sharing: list[tuple[str, str]] | None = None) -> list[Section]:
    limits, usage = _get(status, "limits", {}), _get(status, "usage", {})
    chunks = int(_get(status, "chunks", 0) or 0)
    embedded = int(_get(status, "embedded", 0) or 0)
    vault = Section("Vault", (
        Row("name", name),
        Row("id", vault_id),
        Row("records indexed", f"{int(_get(status, 'records_indexed', 0) or 0):,} records"),
        Row("device-only", "yes: its text never goes to remote services" if device_only else "no"),
        Row("home", home),
        Row("config", config),
        Row("idle lock", f"after {idle_lock_minutes:g} min" if idle_lock_minutes > 0 else "off"),
    ))
    seconds = _get(status, "last_build_seconds")
    index = Section("Index (in memory while unlocked)", (
        Row("chunks", f"{chunks:,} chunks"),
        Row("last built", _when(_get(status, "last_build"))
            + (f", took {seconds:.2f} s" if isinstance(seconds, int | float) and seconds > 0 else "")),
    ))
    installed = bool(_get(status, "installed", False))
    model_rows = [Row("model", str(_get(status, "model", "not installed")), warn=not installed)]
    if installed:
        missing = int(_get(status, "missing", 0) or 0)
        truncated = int(_get(status, "truncated", 0) or 0)
        model_rows += [
            Row("embedded", f"{embedded:,} of {chunks:,} chunks" + (f", {missing:,} waiting" if missing else ""),
                warn=bool(missing)),
            Row("dimensions", f"{_get(status, 'dimensions')} per vector"),
            Row("max tokens", f"{_get(status, 'max_tokens')} per chunk"
                + (f" ({truncated:,} chunks were cut to fit)" if truncated else "")),
        ]
    else:
        problem = _get(status, "problem")
        if problem:
            model_rows.append(Row("problem", tilde_paths(str(problem)), warn=True))
        model_rows.append(Row("install", "press m on the records screen, or F2 anywhere"))
    model_rows += [Row("profile", str(_get(status, "profile", ""))), Row("folder", tilde(str(_get(status, "directory", ""))))]
    model = Section("Embedding model", tuple(model_rows))
    limit_rows = (
        Row("chunks", _share(_get(usage, "chunks", chunks), _get(limits, "chunks", 0), "chunks")),
        Row("source text", _share(_get(usage, "source_mib", 0.0), _get(limits, "source_mib", 0), "MiB", 1)),
        Row("vectors", _share(_get(usage, "vector_mib", 0.0), _get(limits, "vector_mib", 0), "MiB", 1)),
        Row("unlocked vaults", _share(_get(usage, "cached_vaults", 0), _get(limits, "cached_vaults", 0), "vaults")),
    )
    limits_section = Section("Limits ([rag.limits] in the config)", limit_rows)
    shared = tuple(Row(label, text) for label, text in sharing or ())  # the resident engine's clients, grants
    mcp = Section("MCP server", (*shared, Row("running", mcp_servers),
                                 Row("revoke", "press x: running servers refuse from their next call")))
    return [vault, index, model, limits_section, mcp]
