"""`memory add/read/update/delete/list`, `asset add` and `rag ingest`."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ErrorCode, InputRefusedError, UsageError
from ..frontend.words import kind_name, reason_text, status_name
from ..i18n import _, _n, msg
from .context import Context
from .output import Payload, clean
from .progress import ProgressReport

if TYPE_CHECKING:
    from ..engine import IngestProgress


def _read_text_input(ctx: Context, required: bool) -> str | None:
    args = ctx.args
    if args.text is not None and args.file is not None:
        raise UsageError(msg("Give either --text or --file, not both."))
    if args.text is not None:
        return str(args.text)
    if args.file is not None:
        from ..engine import read_text_file  # loads the ingest code: only to read a file

        return read_text_file(Path(args.file))
    if not required:
        return None
    if sys.stdin.isatty():
        raise UsageError(msg("Give the body with --text, --file, or on standard input."))
    from ..engine import MAX_FILE_BYTES
    raw = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise InputRefusedError(msg("Standard input is over the {max_file_bytes:,}-byte limit for a body.",
                                    max_file_bytes=MAX_FILE_BYTES),
                                code=ErrorCode.FILE_TOO_LARGE)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputRefusedError(msg("Standard input is not valid UTF-8 text."), code=ErrorCode.INVALID_UTF8) from None


def cmd_memory_add(ctx: Context) -> Payload:
    body = _read_text_input(ctx, required=True)
    vault_id = ctx.unlock(ctx.args.vault)
    record = ctx.engine.add_record(vault_id, kind=ctx.args.kind, title=ctx.args.title, body=body or "",
                                   tags=ctx.args.tag or ())
    if not ctx.json:
        print(_("Added {kind} {id} (revision {revision})").format(kind=kind_name(record.kind), id=ctx.bold(record.id),
                                                                   revision=record.revision))
    return {"id": record.id, "revision": record.revision, "kind": record.kind}


def cmd_memory_read(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    record = ctx.engine.read_record(vault_id, ctx.args.id, ctx.args.revision)
    payload = record.to_json()
    conflict = ctx.args.revision is None and ctx.engine.conflicted(vault_id, record.id)
    if ctx.args.revision is None:  # an edit made apart on another device, kept beside this text (sync)
        payload["conflict"] = conflict
    if not ctx.json:
        print(ctx.bold(clean(record.title)))
        line = _("{kind} {id} revision {revision} · created {created} · updated {updated}").format(
            kind=kind_name(record.kind), id=record.id, revision=record.revision, created=record.created,
            updated=record.updated)
        if record.tags:
            line += " · " + _("tags {tags}").format(tags=", ".join(record.tags))
        print(ctx.dim(line))
        if conflict:
            print(ctx.bold(_("This record was edited on two devices at once; the edit that lost is kept as a conflict: "
                             "`memories memory conflicts {vault}` shows it, `memories memory resolve {vault} {id}` "
                             "ends it.").format(
                                 vault=shlex.quote(ctx.args.vault), id=record.id)))
        print()
        if record.data is not None:
            print(_n("[file asset, {size:,} byte]", "[file asset, {size:,} bytes]", len(record.data)).format(
                size=len(record.data)))
        else:
            print(clean(record.body, multiline=True) if record.body else ctx.dim(_("(empty)")))
    return payload


def cmd_memory_update(ctx: Context) -> Payload:
    body = _read_text_input(ctx, required=False)
    if body is None and ctx.args.title is None and ctx.args.tag is None:
        raise UsageError(msg("Nothing to update: give --title, --text, --file or --tag."))
    vault_id = ctx.unlock(ctx.args.vault)
    record = ctx.engine.update_record(vault_id, ctx.args.id, title=ctx.args.title, body=body, tags=ctx.args.tag,
                                      expected_revision=ctx.args.expect_revision)
    if not ctx.json:
        print(_("Updated {id} → revision {revision}").format(id=ctx.bold(record.id), revision=record.revision))
    return {"id": record.id, "revision": record.revision, "kind": record.kind}


def cmd_memory_delete(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    ctx.engine.delete_record(vault_id, ctx.args.id)
    if not ctx.json:
        print(_("Deleted {id} and all its revisions.").format(id=ctx.args.id))
    return {"id": ctx.args.id, "deleted": True}


def cmd_memory_list(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    records = ctx.engine.list_records(vault_id, ctx.args.kind)
    if not ctx.json:
        if not records:
            print(_("No records yet."))
        else:
            ctx.table([_("ID"), _("REV"), _("KIND"), _("UPDATED"), _("TITLE")],
                      [[r.id, r.revision, kind_name(r.kind), r.updated, r.title] for r in records])
    return {"records": [r.summary() for r in records]}


def cmd_asset_add(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    record = ctx.engine.add_asset(vault_id, Path(ctx.args.file), ctx.args.title)
    if not ctx.json:
        size = len(record.data or b"")
        print(_n("Stored asset {id} ({size:,} byte, encrypted; never indexed)",
                 "Stored asset {id} ({size:,} bytes, encrypted; never indexed)", size).format(
            id=ctx.bold(record.id), size=size))
    return {"id": record.id, "revision": record.revision, "kind": record.kind, "bytes": len(record.data or b"")}


def cmd_rag_ingest(ctx: Context) -> Payload:
    vault_id = ctx.unlock(ctx.args.vault)
    paths = [Path(p) for p in ctx.args.files]

    with ProgressReport(_("Ingesting"), unit=_("files"), enabled=not ctx.json) as bar:
        def progress(p: IngestProgress) -> None:
            bar.update(p.done, p.total, _("checked") if p.stage == "read" else _("written"))

        results = ctx.engine.ingest(vault_id, paths, title=ctx.args.title, recursive=ctx.args.recursive,
                                    progress=progress)
    if not ctx.json:
        stored = [r for r in results if r.status != "skipped"]
        skipped = [r for r in results if r.status == "skipped"]
        if stored or not skipped:
            ctx.table([_("STATUS"), _("ID"), _("REV"), _("CHUNKS"), _("FILE"), _("TITLE")],
                      [[status_name(r.status), r.id or "-", r.revision or "-", r.chunks, r.file, r.title]
                       for r in stored])
        if skipped:
            print(_n("Skipped {count} file (not ingested):", "Skipped {count} files (not ingested):",
                     len(skipped)).format(count=len(skipped)))
            ctx.table([_("FILE"), _("REASON")], [[r.file, reason_text(r.reason)] for r in skipped])
    return {"results": [r.to_json() for r in results]}
