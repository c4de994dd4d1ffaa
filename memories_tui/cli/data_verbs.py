"""Keeping and leaving with your data: `vault backup`, `vault restore`, `vault export`, `rag egress`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CancelledError, UsageError
from ..frontend.words import kind_name
from ..i18n import _, _n, msg
from .context import Context
from .output import Payload, clean
from .progress import ProgressReport

if TYPE_CHECKING:
    import argparse

    from ..engine import BackupProgress

Verb = Callable[..., "argparse.ArgumentParser"]


def register(vault: Any, rag: Any, verb: Verb) -> None:
    p = verb(vault, "backup", cmd_vault_backup,
             _("Write a verified, still encrypted backup of a vault (SQLite online backup; named "
             "<vault name>-<UTC time>.mvault). Unlocked with the passphrase, every record is checked "
             "too; --no-unlock copies without it and checks the structure only."),
             "memories vault backup notes ~/Backups/memories --keep 10")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("dir", metavar="DIR", nargs="?",
                   help=_("folder for the backup (default: [backup] dir in the config, else HOME/backups)"))
    p.add_argument("--keep", type=int, metavar="N", help=_("keep only the newest N backups of this vault there"))
    p.add_argument("--no-unlock", action="store_true",
                   help=_("do not ask for the passphrase: verify the copy's structure and digests only"))
    p = verb(vault, "restore", cmd_vault_restore,
             _("Restore a vault from a backup file: verified first (needs the passphrase the vault had when "
             "the backup was taken); never replaces a vault in this home without --force."),
             "memories vault restore ~/Backups/memories/notes-20260101T120000Z.mvault")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--as", dest="as_name", metavar="NAME",
                   help=_("restore as a new vault named NAME (a new id), beside any existing copy"))
    p.add_argument("--force", action="store_true",
                   help=_("replace the vault with the same id in this home (it is backed up first)"))


    p = verb(vault, "export", cmd_vault_export,
             _("Export every current record as a Markdown file with front matter (id, revision, kind, title, "
             "tags, created, updated) into an empty folder: plain text you can read anywhere, and `rag ingest` "
             "of the folder gives the same searchable text. Private notes, credentials and file assets are "
             "left out unless --include-excluded (asked to confirm)."),
             "memories vault export notes ~/notes-export")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--format", choices=("markdown",), default="markdown", help=_("the only format: markdown"))
    p.add_argument("--include-excluded", action="store_true",
                   help=_("also write private notes, credentials (private/, credential/) and assets (assets/)"))
    p.add_argument("--yes", action="store_true", help=_("confirm --include-excluded without a prompt"))
    p.add_argument("--force", action="store_true",
                   help=_("write into a folder that is not empty (existing files are never replaced)"))
    p = verb(rag, "egress", cmd_rag_egress,
             _("List every request that sent this vault's content out of the process (remote embedding, "
             "generation, rerank; loopback services too): time, endpoint, purpose, records, revisions "
             "and chunk hashes, bytes and outcome. The log is encrypted inside the vault; it never "
             "holds the content itself."),
             "memories rag egress notes --since 7d")
    p.add_argument("vault", metavar="VAULT_ID")
    p.add_argument("--since", metavar="D", help=_("only entries since D: a date (2026-12-01), a UTC time, or an "
                                                  "age such as 24h, 7d, 2w"))


def _bar(ctx: Context, label: str) -> tuple[ProgressReport, Callable[[BackupProgress], None]]:
    bar = ProgressReport(label, unit="", enabled=not ctx.json)
    units = {"copy": _("pages copied"), "verify": _("revisions verified"), "replace": _("pages written")}

    def update(p: BackupProgress) -> None:
        bar.update(p.done, p.total, units.get(p.stage, p.stage))

    return bar, update


def cmd_vault_backup(ctx: Context) -> Payload:
    args = ctx.args
    if args.no_unlock:  # no passphrase: the resident engine's copy (verified in full) if it holds the vault
        ref = ctx.held_by_daemon(args.vault) or ctx.engine.resolve_vault(args.vault).vault_id
    else:
        ref = ctx.unlock(args.vault)
    bar, update = _bar(ctx, _("Backing up"))
    with bar:
        report = ctx.engine.backup_vault(ref, Path(args.dir) if args.dir else None, keep=args.keep,
                                         progress=update)
    if not ctx.json:
        checked = (_("every record decrypted and the keyed manifest matched") if report.verified == "full"
                   else _("structure and digests checked (no passphrase: records not decrypted)"))
        print(_("Backed up {name} to {path}").format(name=clean(report.name), path=ctx.bold(clean(report.path))))
        print("  " + _("{counts}, {size:,} bytes; {checked}").format(
            counts=_counts(report.records, report.revisions), size=report.bytes, checked=checked))
        for old in report.removed:
            print(ctx.dim("  " + _("removed older backup {name}").format(name=clean(old))))
    return report.to_json()


def cmd_vault_restore(ctx: Context) -> Payload:
    args = ctx.args
    from ..frontend.passphrase import get_passphrase

    passphrase = get_passphrase(file=args.passphrase_file, prompt=_("Passphrase of the backed-up vault: "))
    served = ctx.use_daemon_if_running()  # it may hold the vault being replaced: it locks it there first
    bar, update = _bar(ctx, _("Restoring"))
    with bar:
        report = ctx.engine.restore_vault(Path(args.file), passphrase, as_name=args.as_name, force=args.force,
                                          progress=update,
                                          before_replace=None if served else ctx.refuse_if_daemon_holds)
    if not ctx.json:
        print(_("Restored {name}  {id}  ({counts}, {state})").format(
            name=clean(report.name), id=ctx.bold(report.vault_id),
            counts=_counts(report.records, report.revisions), state=clean(report.state)))
        if report.replaced:
            print("  " + _n("replaced the vault that was here ({n} revision it had is not in the backup); it was "
                            "saved first to {path}",
                            "replaced the vault that was here ({n} revisions it had are not in the backup); it was "
                            "saved first to {path}", report.revisions_lost).format(
                n=report.revisions_lost, path=clean(report.kept_copy)))
    return report.to_json()


def cmd_rag_egress(ctx: Context) -> Payload:
    from ..engine import parse_since

    since = parse_since(ctx.args.since)  # a bad value is a usage error before any passphrase
    vault_id = ctx.unlock(ctx.args.vault)
    report = ctx.engine.egress_log(vault_id, since)
    if not ctx.json:
        if not report.entries:
            print(_("Nothing from this vault has been sent out since {since}.").format(since=since) if since
                  else _("Nothing from this vault has been sent out."))
        rows = []
        for e in report.entries:
            where = e.host + (" " + _("(loopback)") if e.loopback else "")
            records = len({c.record_id for c in e.chunks if c.record_id})
            rows.append([e.time, e.purpose, where, len(e.chunks), records, e.objects, f"{e.bytes_sent:,}",
                         e.outcome + (f" ×{e.attempts}" if e.attempts > 1 else ""), e.client or ""])
        if rows:  # OBJECTS: what a sync push wrote to its target (sealed bundles, a snapshot, the head)
            ctx.table([_("TIME (UTC)"), _("PURPOSE"), _("ENDPOINT"), _("CHUNKS"), _("RECORDS"), _("OBJECTS"),
                       _("BYTES SENT"), _("OUTCOME"), _("CLIENT")], rows)
            print(ctx.dim(_("--json lists the record ids, revisions and chunk hashes of each request.")))
        if report.damaged:
            print(_("memories: warning: egress log entries {numbers} failed their integrity check.").format(
                numbers=report.damaged), file=sys.stderr)
        if report.missing:
            print(_("memories: warning: egress log entries {numbers} are missing (deleted from the file).").format(
                numbers=report.missing), file=sys.stderr)
    return report.to_json()


def cmd_vault_export(ctx: Context) -> Payload:
    args = ctx.args
    vault_id = ctx.unlock(args.vault)
    if args.include_excluded and not args.yes:
        _confirm_excluded(ctx, vault_id, args.dir)
    bar = ProgressReport(_("Exporting"), unit=_("files"), enabled=not ctx.json)
    with bar:
        report = ctx.engine.export_vault(vault_id, Path(args.dir), include_excluded=args.include_excluded,
                                         force=args.force, progress=lambda done, total: bar.update(done, total))
    if not ctx.json:
        kinds = _(", ").join(f"{n} {kind_name(kind)}" for kind, n in sorted(report.counts.items())) \
            or _("no records")
        print(_n("Exported {n} file ({kinds}) to {folder}", "Exported {n} files ({kinds}) to {folder}",
                 len(report.files)).format(n=len(report.files), kinds=kinds, folder=ctx.bold(clean(report.folder))))
        if report.excluded_skipped:
            print(ctx.dim("  " + _n("{n} private/credential/asset record was left out (--include-excluded writes it)",
                                    "{n} private/credential/asset records were left out (--include-excluded writes "
                                    "them)", report.excluded_skipped).format(n=report.excluded_skipped)))
        else:
            print(ctx.dim("  " + _("these files are plain text: keep them somewhere private")))
    return report.to_json()


def _confirm_excluded(ctx: Context, vault_id: str, folder: str) -> None:
    """Private notes, credentials and assets leave the encryption only after a yes."""
    excluded = [r for r in ctx.engine.list_records(vault_id) if r.kind in ("private", "credential", "asset")]
    if not excluded:
        return
    if ctx.json or not sys.stdin.isatty():
        raise UsageError(msg("--include-excluded would write {n} private/credential/asset records as plain files; "
                             "confirm with --yes (no terminal to ask on).", n=len(excluded)))
    print(_n("This writes {n} private note, credential or file asset of {name} UNENCRYPTED into {folder}.",
             "This writes {n} private notes, credentials and file assets of {name} UNENCRYPTED into {folder}.",
             len(excluded)).format(n=len(excluded), name=clean(ctx.engine.vault_name(vault_id)),
                                   folder=clean(folder)), file=sys.stderr)
    answer = input(_("Type yes to continue: "))
    if answer.strip().lower() != "yes":
        raise CancelledError(msg("Export cancelled; nothing was written."))


def _counts(records: int, revisions: int) -> str:
    return _("{records}, {revisions}").format(
        records=_n("{n} record", "{n} records", records).format(n=records),
        revisions=_n("{n} revision", "{n} revisions", revisions).format(n=revisions))
