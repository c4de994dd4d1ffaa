"""The status screen's sections for people: vault, index, model, limits, MCP.

Built from the engine's status plus the vault's own facts; units everywhere (chunks, MiB, s),
usage beside its limit, and problems in full (wrapped, never cut). The raw key dump stays in
`memories rag status --json`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..i18n import N_, Message, _, _n, localized
from .text import tilde, tilde_paths, utc_stamp

# the engine's fixed model descriptions (others name a model or folder and are shown as they are)
MODEL_STATES = (N_("not installed"), N_("remote service unusable"), N_("EmbeddingGemma 300M Q4 (pinned build)"))


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
    return _("{used} of {limit} {unit}").format(used=f"{used:,.{digits}f}", limit=f"{limit:,.{digits}f}",
                                                unit=unit) + share


def _when(stamp: Any) -> str:
    if not isinstance(stamp, int | float) or stamp <= 0:
        return _("not built yet")
    return datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M:%S")


def sections(*, name: str, vault_id: str, device_only: bool, status: Any, home: str, config: str,
             idle_lock_minutes: float, mcp_servers: str = "",
             sharing: list[tuple[str, str]] | None = None, sources: list[Any] | None = None,
             sync: list[Any] | None = None) -> list[Section]:
    limits, usage = _get(status, "limits", {}), _get(status, "usage", {})
    chunks = int(_get(status, "chunks", 0) or 0)
    embedded = int(_get(status, "embedded", 0) or 0)
    records = int(_get(status, "records_indexed", 0) or 0)
    vault = Section(_("Vault"), (
        Row(_("name"), name),
        Row(_("id"), vault_id),
        Row(_("records indexed"), _n("{n:,} record", "{n:,} records", records).format(n=records)),
        Row(_("device-only"), _("yes: its text never goes to remote services") if device_only else _("no")),
        Row(_("home"), home),
        Row(_("config"), config),
        Row(_("idle lock"), _("after {minutes:g} min").format(minutes=idle_lock_minutes) if idle_lock_minutes > 0
            else _("off")),
    ))
    seconds = _get(status, "last_build_seconds")
    index = Section(_("Index (in memory while unlocked)"), (
        Row(_("chunks"), _n("{n:,} chunk", "{n:,} chunks", chunks).format(n=chunks)),
        Row(_("last built"), _when(_get(status, "last_build"))
            + (_(", took {seconds:.2f} s").format(seconds=seconds) if isinstance(seconds, int | float) and seconds > 0
               else "")),
    ))
    installed = bool(_get(status, "installed", False))
    model_rows = [Row(_("model"), _(str(_get(status, "model", ""))) or _("not installed"), warn=not installed)]
    if installed:
        missing = int(_get(status, "missing", 0) or 0)
        truncated = int(_get(status, "truncated", 0) or 0)
        model_rows += [
            Row(_("embedded"), _("{done:,} of {total:,} chunks").format(done=embedded, total=chunks)
                + (_(", {n:,} waiting").format(n=missing) if missing else ""), warn=bool(missing)),
            Row(_("dimensions"), _("{n} per vector").format(n=_get(status, "dimensions"))),
            Row(_("max tokens"), _("{n} per chunk").format(n=_get(status, "max_tokens"))
                + (" " + _n("({n:,} chunk was cut to fit)", "({n:,} chunks were cut to fit)", truncated).format(
                    n=truncated) if truncated else "")),
        ]
    else:
        problem = Message.from_wire(_get(status, "problem_localizable")) or _get(status, "problem")
        if problem:
            model_rows.append(Row(_("problem"), tilde_paths(localized(problem)), warn=True))
        model_rows.append(Row(_("install"), _("press m on the records screen, or F2 anywhere")))
    model_rows += [Row(_("profile"), str(_get(status, "profile", ""))),
                   Row(_("folder"), tilde(str(_get(status, "directory", ""))))]
    model = Section(_("Embedding model"), tuple(model_rows))
    limit_rows = (
        Row(_("chunks"), _share(_get(usage, "chunks", chunks), _get(limits, "chunks", 0), _("chunks"))),
        Row(_("source text"), _share(_get(usage, "source_mib", 0.0), _get(limits, "source_mib", 0), "MiB", 1)),
        Row(_("vectors"), _share(_get(usage, "vector_mib", 0.0), _get(limits, "vector_mib", 0), "MiB", 1)),
        Row(_("unlocked vaults"), _share(_get(usage, "cached_vaults", 0), _get(limits, "cached_vaults", 0),
                                         _("vaults"))),
    )
    limits_section = Section(_("Limits ([rag.limits] in the config)"), limit_rows)
    shared = tuple(Row(label, text) for label, text in sharing or ())  # the resident engine's clients, grants
    mcp = Section(_("Sharing (CLI and AI clients)"), (
        *shared, Row(_("AI clients"), mcp_servers or _("none")),
        Row(_("revoke"), _("press x: AI clients refuse from their next call; commands stop when the vault locks"))))
    return [vault, index, model, limits_section, mcp, *_sources(sources or []), *_sync(sync or [])]


def _sync(entries: list[Any]) -> list[Section]:
    """The vault's sync target: last sync, pending changes, last error, conflicts kept (no target:
    no section)."""
    out = []
    for entry in entries:
        if entry.pending_records is not None:  # the vault is open here: what the next push sends, exactly
            pending = (_n("{n:,} record to push", "{n:,} records to push", entry.pending_records).format(
                n=entry.pending_records) if entry.pending_records else _("none"))
        else:
            pending = (_("not known until the first sync") if entry.pending is None else
                       _n("{n:,} local change to push", "{n:,} local changes to push", entry.pending).format(
                           n=entry.pending) if entry.pending else _("none"))
        rows = (Row(_("target"), tilde(entry.url)),
                Row(_("last sync"), utc_stamp(entry.last_sync) or _("not yet")),
                Row(_("pending"), pending),
                Row(_("last error"), _("{code} (s syncs now and shows what went wrong)").format(code=entry.last_error)
                    if entry.last_error else _("none"), warn=bool(entry.last_error)),
                Row(_("conflicts"), _n("{n:,} record with conflicting edits (marked ⇄ in Records, where c goes to it)",
                                       "{n:,} records with conflicting edits (marked ⇄ in Records, where c goes to each)",
                                       entry.conflicts).format(n=entry.conflicts) if entry.conflicts else _("none"),
                    warn=bool(entry.conflicts)),
                Row(_("devices"), _("d lists them (f there forgets a lost one); s syncs now")))
        out.append(Section(_("Sync (in the background while unlocked)"), rows))
    return out


def _sources(infos: list[Any]) -> list[Section]:
    """Each source folder with its cards, files gone and files pending (none: no section)."""
    rows = []
    for info in infos:
        gone = len(info.gone)
        value = _("{path}: {cards}").format(path=tilde(info.source.path),
                                            cards=_n("{n:,} card", "{n:,} cards", info.records).format(n=info.records))
        if gone:
            value += _(", {n:,} source gone (kept until `source sync --prune`)").format(n=gone)
        if not info.present:
            value += " " + _("(folder missing)")
        if info.skipped:
            value += _n(", {n:,} file skipped", ", {n:,} files skipped", info.skipped).format(n=info.skipped)
        if info.pending:
            value += _n(", {n:,} file changed, not synced yet", ", {n:,} files changed, not synced yet",
                        info.pending).format(n=info.pending)
        value += "; " + (_("last synced {time}").format(time=_when(info.last_sync)) if info.last_sync
                         else _("not synced since the engine started"))
        rows.append(Row(info.source.id, value, warn=bool(gone) or not info.present))
    return [Section(_("Sources (memories source)"), tuple(rows))] if rows else []
